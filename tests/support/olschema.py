"""Offline, strict validation of OpenLineage events against the official JSON schemas.

Every schema file under ``tests/openlineage-spec`` (copied from the OpenLineage repository, see its SOURCES.md) and
the package's own facet schemas are loaded into one ``referencing.Registry`` whose ``retrieve`` raises for any other
URI, so validation never touches the network. ``validate_event`` checks the event against the core schema named by
its ``schemaURL`` and every facet against the schema named by its ``_schemaURL``; a facet whose schema is not
local, whose key is not the schema's conventional key, or that sits in the wrong container is an error too.
"""
from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterator

from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource

SPEC_DIR = Path(__file__).parents[1] / "openlineage-spec"
CORE = "https://openlineage.io/spec/2-0-2/OpenLineage.json"

#: Facet container -> the core definition its facets must extend.
_CONTAINER_BASE = {
    "run.facets": "RunFacet",
    "job.facets": "JobFacet",
    "facets": "DatasetFacet",
    "inputFacets": "InputDatasetFacet",
    "outputFacets": "OutputDatasetFacet",
}


def _schema_documents() -> Iterator[dict[str, Any]]:
    for path in sorted(SPEC_DIR.rglob("*.json")):
        doc = json.loads(path.read_text("utf-8"))
        if "$id" in doc:
            yield doc
    package = resources.files("iceberg_lineage").joinpath("schemas")
    for entry in package.iterdir():
        if entry.name.endswith(".json"):
            yield json.loads(entry.read_text("utf-8"))


def _refuse(uri: str) -> Resource:
    raise NoSuchResource(ref=uri)


@lru_cache(maxsize=1)
def registry() -> tuple[Registry, dict[str, dict[str, Any]]]:
    documents = {doc["$id"]: doc for doc in _schema_documents()}
    reg = Registry(retrieve=_refuse).with_resources(
        (uri, Resource.from_contents(doc)) for uri, doc in documents.items()
    )
    return reg.crawl(), documents


def _errors(instance: Any, ref: str) -> list[str]:
    reg, _ = registry()
    validator = Draft202012Validator({"$ref": ref}, registry=reg, format_checker=FormatChecker())
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
        for e in sorted(validator.iter_errors(instance), key=lambda e: list(map(str, e.absolute_path)))
    ]


def _facets(event: dict[str, Any]) -> Iterator[tuple[str, str, str, Any]]:
    """(where, container kind, key, facet) for every facet of the event."""
    for part in ("run", "job"):
        for key, facet in ((event.get(part) or {}).get("facets") or {}).items():
            yield f"{part}.facets.{key}", f"{part}.facets", key, facet
    datasets = [("dataset", event["dataset"])] if "dataset" in event else []
    datasets += [(f"inputs[{i}]", d) for i, d in enumerate(event.get("inputs") or [])]
    datasets += [(f"outputs[{i}]", d) for i, d in enumerate(event.get("outputs") or [])]
    for where, dataset in datasets:
        for container in ("facets", "inputFacets", "outputFacets"):
            for key, facet in (dataset.get(container) or {}).items():
                yield f"{where}.{container}.{key}", container, key, facet


def facet_errors(where: str, container: str, key: str, facet: Any) -> list[str]:
    if not isinstance(facet, dict) or facet.get("_deleted") is True:
        return []
    url = facet.get("_schemaURL")
    if not isinstance(url, str):
        return [f"{where}: no _schemaURL"]
    base, _, fragment = url.partition("#")
    _, documents = registry()
    doc = documents.get(base)
    if doc is None:
        return [f"{where}: unknown _schemaURL {url}"]
    roots = list(doc.get("properties", {}))
    problems = []
    if roots and key not in roots:
        problems.append(f"{where}: key {key!r} is not the schema's facet key {roots}")
    pointer = fragment or doc["properties"][roots[0]]["$ref"].lstrip("#")
    definition = doc
    for part in pointer.strip("/").split("/"):
        definition = definition.get(part, {})
    bases = [s.get("$ref", "") for s in definition.get("allOf", [])]
    expected = f"#/$defs/{_CONTAINER_BASE[container]}"
    if not any(b.startswith("https://openlineage.io/spec/") and b.endswith(expected) for b in bases):
        problems.append(f"{where}: a {bases} facet does not belong in {container}")
    problems += [f"{where}.{e}" for e in _errors(facet, f"{base}#{pointer}")]
    return problems


def event_errors(event: dict[str, Any]) -> list[str]:
    url = event.get("schemaURL", "")
    if not url.startswith(CORE + "#"):
        return [f"event schemaURL {url!r} is not core 2-0-2"]
    problems = [f"event.{e}" for e in _errors(event, url)]
    for where, container, key, facet in _facets(event):
        problems += facet_errors(where, container, key, facet)
    return problems


def validate_event(event: dict[str, Any] | str) -> None:
    """Raise AssertionError listing every problem of the event and its facets."""
    data = json.loads(event) if isinstance(event, str) else event
    problems = event_errors(data)
    if problems:
        raise AssertionError("invalid OpenLineage event:\n  " + "\n  ".join(problems))
