"""Helpers of the hook tests: event sinks (a real HTTP server, a real file), tables, and event queries."""
from __future__ import annotations

import json
import threading
from importlib.metadata import version as installed
from pathlib import Path
from typing import Any

import pyarrow as pa
from openlineage.client import OpenLineageClient
from openlineage.client.transport.file import FileConfig, FileTransport
from openlineage.client.transport.http import HttpConfig, HttpTransport
from tests.support.lineage_server import Answer, LineageServer
from tests.support.olschema import validate_event

from iceberg_lineage.delivery.emitter import EMITTERS

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])


def rows(*ids: int) -> pa.Table:
    return pa.table({"id": list(ids), "v": [f"v{i}" for i in ids]}, schema=SCHEMA)


class Collector(LineageServer):
    """Records every event POSTed to it, answering 200 (once ``gate`` is set, when one is given)."""

    def __init__(self, gate: threading.Event | None = None) -> None:
        def script(_n: int, _body: bytes) -> Answer:
            if gate is not None:
                gate.wait(60)
            return Answer()

        super().__init__(script=script)
        self.client = OpenLineageClient(transport=HttpTransport(HttpConfig(url=self.url)))

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return super().events()

    def events(self) -> list[dict[str, Any]]:
        assert EMITTERS.flush_all(30)
        return self.bodies


class FileSink:
    """openlineage-python's file transport appending JSON Lines, and a reader of what it wrote."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.client = OpenLineageClient(transport=FileTransport(FileConfig(log_file_path=str(path), append=True)))

    def events(self) -> list[dict[str, Any]]:
        assert EMITTERS.flush_all(30)
        return read_events(self.path)


def read_events(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def valid(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events, each checked against the OpenLineage schemas (raises on the first invalid one)."""
    for event in events:
        validate_event(event)
    return events


def outputs(event: dict[str, Any]) -> list[dict[str, Any]]:
    return event.get("outputs") or []


def inputs(event: dict[str, Any]) -> list[dict[str, Any]]:
    return event.get("inputs") or []


def version(dataset: dict[str, Any]) -> int:
    return int(dataset["facets"]["version"]["datasetVersion"])


def lifecycle(dataset: dict[str, Any]) -> str | None:
    return (dataset["facets"].get("lifecycleStateChange") or {}).get("lifecycleStateChange")


def table_of(dataset: dict[str, Any]) -> str:
    """The catalog name of a dataset, from its TABLE symlink (``db.t``)."""
    return next(i["name"] for i in dataset["facets"]["symlinks"]["identifiers"] if i["type"] == "TABLE")


def commit_report(dataset: dict[str, Any]) -> dict[str, Any]:
    return dataset["outputFacets"]["icebergCommitReport"]


def tags_in_metadata(table: Any) -> dict[int, str | None]:
    """Snapshot id -> ``iceberg-lineage.run-id`` as written in the table's current metadata.json."""
    doc = json.loads(Path(table.metadata_location.removeprefix("file://")).read_text())
    return {s["snapshot-id"]: s["summary"].get("iceberg-lineage.run-id") for s in doc.get("snapshots", [])}


def run_tags(event: dict[str, Any]) -> dict[str, str]:
    return {t["key"]: t["value"] for t in event["run"]["facets"]["tags"]["tags"]}


def assert_hook_facets(events: list[dict[str, Any]], attached: str) -> None:
    """Every event names PyIceberg at the installed version, and tags how the hook was attached (beside the tag
    openlineage-python's client adds, with its installed version)."""
    for event in events:
        engine = event["run"]["facets"]["processing_engine"]
        assert (engine["name"], engine["version"]) == ("pyiceberg", installed("pyiceberg"))
        assert run_tags(event) == {"iceberg-lineage.hook": attached,
                                   "openlineage_client_version": installed("openlineage-python")}
