"""The byte budget of one event (``events.max_bytes``, or a consumer profile's lower limit): an event over it is
trimmed in a declared order until it fits, stays schema-valid, and is never dropped.

The order, each step applied to every dataset of the event, and taken only while the event is still over:

1. ``columns``: per-column metrics (``dataQualityMetrics.columnMetrics``, dataset or input facet) beyond the first N
   columns in schema order, N the largest count that fits; the columns left out are listed in the custom facet's
   ``columnsOmitted``;
2. ``column_detail``: the per-column detail of the custom facet (its ``columns``, all then in ``columnsOmitted``);
3. ``descriptions``: field descriptions in the ``schema`` facet;
4. ``minimal``: the datasets keep their identity (``symlinks``, ``lifecycleStateChange``), ``version``, totals
   (``dataQualityMetrics`` and ``input/outputStatistics`` figures, the custom facet's counts) and the ``schema`` facet
   with names and types only;
5. ``schema``: the ``schema`` facet is left out, and the custom facet says ``schemaOmitted: true``.

Run and job facets are never trimmed. Pure: JSON documents in, JSON documents out.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from iceberg_lineage.lineage.facets.statistics import STATISTICS_KEY

STEPS = ("columns", "column_detail", "descriptions", "minimal", "schema")
#: Dataset facets the last resort keeps (besides ``schema``, reduced to names and types).
MINIMAL_FACETS = frozenset({"version", "symlinks", "lifecycleStateChange", "dataQualityMetrics", STATISTICS_KEY})
MINIMAL_DATASET_FACETS = frozenset({"inputStatistics", "outputStatistics", "dataQualityMetrics"})
#: What the custom facet keeps in the last resort: its required properties and the table's totals.
MINIMAL_STATISTICS = frozenset({
    "_producer", "_schemaURL", "snapshotId", "depth", "staged", "available", "refs", "sequenceNumber", "operation",
    "dataFiles", "records", "liveRecords", "bytes", "deleteFiles", "deletedRows", "added", "removed", "manifests",
    "schemaOmitted",
})


@dataclass(frozen=True)
class Trimmed:
    """An event document within budget (or as small as the last step makes it), and what was done to it."""

    doc: dict[str, Any]
    size: int
    steps: tuple[str, ...] = ()

    @property
    def fits(self) -> bool:
        return not self.steps or self.steps[-1] != "over"


def size_of(doc: dict[str, Any]) -> int:
    """Bytes of the JSON the transports send (openlineage-python's ``Serde.to_json``: sorted keys, no nulls)."""
    return len(json.dumps(doc, sort_keys=True).encode())


def datasets(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every dataset of a run, job or dataset event."""
    yield from doc.get("inputs") or ()
    yield from doc.get("outputs") or ()
    if isinstance(doc.get("dataset"), dict):
        yield doc["dataset"]


def trim(doc: dict[str, Any], max_bytes: int) -> Trimmed:
    """``doc`` itself when it fits, else a trimmed copy (the steps taken in ``steps``; ``over`` last when even the
    last step left it over budget: it is sent as it is)."""
    size = size_of(doc)
    if size <= max_bytes:
        return Trimmed(doc, size)
    doc = copy.deepcopy(doc)
    steps: list[str] = []
    for step in STEPS:
        steps.append(step)
        if step == "columns":
            _drop_columns(doc, max_bytes)
        else:
            for dataset in datasets(doc):
                _STEP[step](dataset)
        size = size_of(doc)
        if size <= max_bytes:
            return Trimmed(doc, size, tuple(steps))
    return Trimmed(doc, size, (*steps, "over"))


# -- 1: per-column metrics beyond a count --------------------------------------------------------------------------

def _metrics_facets(dataset: dict[str, Any]) -> list[dict[str, Any]]:
    """The dataset's metrics facets that carry per-column metrics (the dataset facet, the input facet)."""
    found = [(dataset.get("facets") or {}).get("dataQualityMetrics"),
             (dataset.get("inputFacets") or {}).get("dataQualityMetrics")]
    return [f for f in found if isinstance(f, dict) and f.get("columnMetrics")]


def _schema_order(dataset: dict[str, Any]) -> dict[str, int]:
    """Dotted field names of the dataset's schema facet, in schema order."""
    order: dict[str, int] = {}

    def walk(fields: list[dict[str, Any]], prefix: str) -> None:
        for f in fields:
            name = prefix + str(f.get("name"))
            order.setdefault(name, len(order))
            walk(f.get("fields") or [], name + ".")

    walk(((dataset.get("facets") or {}).get("schema") or {}).get("fields") or [], "")
    return order


def _drop_columns(doc: dict[str, Any], max_bytes: int) -> None:
    """Keep the metrics of the first N columns of every dataset, N the largest count that fits (bisection), the
    others listed in ``columnsOmitted``."""
    plans = []
    for dataset in datasets(doc):
        facets = _metrics_facets(dataset)
        if facets:
            order = _schema_order(dataset)
            names = sorted({n for f in facets for n in f["columnMetrics"]},
                           key=lambda n: (order.get(n, len(order)), n))
            statistics = (dataset.get("facets") or {}).get(STATISTICS_KEY)
            listed = list(statistics.get("columnsOmitted") or []) if isinstance(statistics, dict) else None
            plans.append((statistics, listed, [(f, dict(f["columnMetrics"])) for f in facets], names))
    if not plans:
        return

    def keep(n: int) -> None:
        for statistics, listed, facets, names in plans:
            kept = set(names[:n])
            for facet, metrics in facets:
                facet["columnMetrics"] = {k: v for k, v in metrics.items() if k in kept}
            if listed is not None:
                statistics["columnsOmitted"] = _union(listed, names[n:])
                if not statistics["columnsOmitted"]:
                    del statistics["columnsOmitted"]

    low, high = 0, max(len(names) for *_, names in plans) - 1
    while low < high:  # the largest n in [0, high] that fits
        mid = (low + high + 1) // 2
        keep(mid)
        if size_of(doc) <= max_bytes:
            low = mid
        else:
            high = mid - 1
    keep(low)


def _union(listed: list[str], names: list[str]) -> list[str]:
    seen = set(listed)
    return listed + [n for n in names if n not in seen]


def _list_omitted(dataset: dict[str, Any], names: list[str]) -> None:
    statistics = (dataset.get("facets") or {}).get(STATISTICS_KEY)
    if isinstance(statistics, dict) and names:
        statistics["columnsOmitted"] = _union(list(statistics.get("columnsOmitted") or []), names)


# -- 2 to 5 --------------------------------------------------------------------------------------------------------

def _drop_column_detail(dataset: dict[str, Any]) -> None:
    statistics = (dataset.get("facets") or {}).get(STATISTICS_KEY)
    if isinstance(statistics, dict) and "columns" in statistics:
        _list_omitted(dataset, list(statistics.pop("columns")))


def _map_fields(dataset: dict[str, Any], field: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    schema = (dataset.get("facets") or {}).get("schema")
    if not isinstance(schema, dict):
        return

    def convert(fields: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for f in fields:
            new = field(f)
            if f.get("fields"):
                new["fields"] = convert(f["fields"])
            out.append(new)
        return out

    schema["fields"] = convert(schema.get("fields") or [])


def _drop_descriptions(dataset: dict[str, Any]) -> None:
    _map_fields(dataset, lambda f: {k: v for k, v in f.items() if k != "description"})


def _minimal(dataset: dict[str, Any]) -> None:
    facets = dataset.get("facets") or {}
    dataset["facets"] = {k: v for k, v in facets.items() if k in MINIMAL_FACETS or k == "schema"}
    for key in ("inputFacets", "outputFacets"):
        if key in dataset:
            dataset[key] = {k: v for k, v in dataset[key].items() if k in MINIMAL_DATASET_FACETS}
    statistics = dataset["facets"].get(STATISTICS_KEY)
    if isinstance(statistics, dict):
        dataset["facets"][STATISTICS_KEY] = {k: v for k, v in statistics.items() if k in MINIMAL_STATISTICS}
    _map_fields(dataset, lambda f: {k: v for k, v in f.items() if k in ("name", "type")})


def _drop_schema(dataset: dict[str, Any]) -> None:
    facets = dataset.get("facets") or {}
    if facets.pop("schema", None) is not None and isinstance(facets.get(STATISTICS_KEY), dict):
        facets[STATISTICS_KEY]["schemaOmitted"] = True


_STEP: dict[str, Callable[[dict[str, Any]], None]] = {
    "column_detail": _drop_column_detail,
    "descriptions": _drop_descriptions,
    "minimal": _minimal,
    "schema": _drop_schema,
}
