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

Run and job facets are never trimmed. Pure: openlineage-python event objects in and out (a trimmed event is a new
object, :func:`attr.evolve`; the event given is never changed), serialised only to be measured.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import attr
from openlineage.client.event_v2 import Dataset, DatasetEvent

from iceberg_lineage.lineage.facets.statistics import STATISTICS_KEY
from iceberg_lineage.lineage.objects import Part, only, part, replaced
from iceberg_lineage.lineage.serde import Event, to_json

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
    """An event within budget (or as small as the last step makes it), and what was done to it."""

    event: Event
    size: int
    steps: tuple[str, ...] = ()

    @property
    def fits(self) -> bool:
        return not self.steps or self.steps[-1] != "over"


def size_of(event: Event) -> int:
    """Bytes of the JSON the transports send (openlineage-python's ``Serde.to_json``: sorted keys, no nulls)."""
    return len(to_json(event).encode())


Step = Callable[[Dataset], Dataset]


def _facet(dataset: Dataset, key: str) -> Part | None:
    return (dataset.facets or {}).get(key)


def _with_facets(dataset: Dataset, where: str = "facets", **facets: object) -> Dataset:
    """The dataset with facets set (``None``: left out) in ``where`` (``facets``, ``inputFacets``...)."""
    merged = {**(getattr(dataset, where) or {}), **facets}
    return attr.evolve(dataset, **{where: {k: v for k, v in merged.items() if v is not None}})


def _datasets(event: Event) -> list[Dataset]:
    if isinstance(event, DatasetEvent):
        return [event.dataset]
    return [*(getattr(event, "inputs", None) or ()), *(getattr(event, "outputs", None) or ())]


def _mapped(event: Event, step: Step) -> Event:
    """The event with ``step`` applied to each of its datasets."""
    if isinstance(event, DatasetEvent):
        return attr.evolve(event, dataset=step(event.dataset))
    changes = {key: [step(d) for d in getattr(event, key)] for key in ("inputs", "outputs") if getattr(event, key)}
    return attr.evolve(event, **changes) if changes else event  # type: ignore[arg-type]


def trim(event: Event, max_bytes: int) -> Trimmed:
    """``event`` itself when it fits, else a trimmed copy (the steps taken in ``steps``; ``over`` last when even
    the last step left it over budget: it is sent as it is)."""
    size = size_of(event)
    if size <= max_bytes:
        return Trimmed(event, size)
    steps: list[str] = []
    for step in STEPS:
        steps.append(step)
        event = _drop_columns(event, max_bytes) if step == "columns" else _mapped(event, _STEP[step])
        size = size_of(event)
        if size <= max_bytes:
            return Trimmed(event, size, tuple(steps))
    return Trimmed(event, size, (*steps, "over"))


# -- 1: per-column metrics beyond a count --------------------------------------------------------------------------

def _metrics_facets(dataset: Dataset) -> list[tuple[str, Part]]:
    """Where the dataset's metrics facets that carry per-column metrics are (the dataset facet, the input facet)."""
    found = [("facets", _facet(dataset, "dataQualityMetrics")),
             ("inputFacets", (getattr(dataset, "inputFacets", None) or {}).get("dataQualityMetrics"))]
    return [(where, f) for where, f in found if f is not None and part(f, "columnMetrics")]


def _schema_order(dataset: Dataset) -> dict[str, int]:
    """Dotted field names of the dataset's schema facet, in schema order."""
    order: dict[str, int] = {}

    def walk(fields: list[Part], prefix: str) -> None:
        for f in fields:
            name = prefix + str(part(f, "name"))
            order.setdefault(name, len(order))
            walk(part(f, "fields") or [], name + ".")

    walk(part(_facet(dataset, "schema"), "fields") or [], "")
    return order


def _column_names(dataset: Dataset) -> list[str]:
    """The columns with metrics, in schema order (columns the schema lacks last, by name)."""
    order = _schema_order(dataset)
    names = {n for _, f in _metrics_facets(dataset) for n in part(f, "columnMetrics")}
    return sorted(names, key=lambda n: (order.get(n, len(order)), n))


def _keep_columns(dataset: Dataset, n: int) -> Dataset:
    """The metrics of the dataset's first ``n`` columns, the others listed in ``columnsOmitted``."""
    facets = _metrics_facets(dataset)
    if not facets:
        return dataset
    names = _column_names(dataset)
    kept = set(names[:n])
    for where, facet in facets:
        metrics = {k: v for k, v in part(facet, "columnMetrics").items() if k in kept}
        dataset = _with_facets(dataset, where, dataQualityMetrics=replaced(facet, columnMetrics=metrics))
    statistics = _facet(dataset, STATISTICS_KEY)
    if statistics is not None:
        omitted = _union(list(part(statistics, "columnsOmitted") or []), names[n:])
        dataset = _with_facets(dataset, **{STATISTICS_KEY: replaced(statistics, columnsOmitted=omitted or None)})
    return dataset


def _drop_columns(event: Event, max_bytes: int) -> Event:
    """Keep the metrics of the first N columns of every dataset, N the largest count that fits (bisection)."""
    counts = [len(_column_names(d)) for d in _datasets(event)]
    if not any(counts):
        return event
    low, high = 0, max(counts) - 1
    while low < high:  # the largest n in [0, high] that fits
        mid = (low + high + 1) // 2
        if size_of(_mapped(event, lambda d: _keep_columns(d, mid))) <= max_bytes:  # noqa: B023 - called at once
            low = mid
        else:
            high = mid - 1
    return _mapped(event, lambda d: _keep_columns(d, low))


def _union(listed: list[str], names: list[str]) -> list[str]:
    seen = set(listed)
    return listed + [n for n in names if n not in seen]


# -- 2 to 5 --------------------------------------------------------------------------------------------------------

def _drop_column_detail(dataset: Dataset) -> Dataset:
    statistics = _facet(dataset, STATISTICS_KEY)
    columns = part(statistics, "columns")
    if columns is None:
        return dataset
    omitted = _union(list(part(statistics, "columnsOmitted") or []), list(columns))
    return _with_facets(dataset, **{STATISTICS_KEY: replaced(statistics, columns=None, columnsOmitted=omitted or None)})


def _map_fields(dataset: Dataset, field: Callable[[Part, list[Part]], Part]) -> Dataset:
    """The schema facet with ``field(f, converted nested fields)`` for every field, depth first."""
    schema = _facet(dataset, "schema")
    if schema is None:
        return dataset

    def convert(fields: list[Part]) -> list[Part]:
        return [field(f, convert(part(f, "fields") or [])) for f in fields]

    return _with_facets(dataset, schema=replaced(schema, fields=convert(part(schema, "fields") or [])))


def _without_description(f: Part, fields: list[Part]) -> Part:
    if isinstance(f, Mapping):
        return {**{k: v for k, v in f.items() if k != "description"}, **({"fields": fields} if "fields" in f else {})}
    return attr.evolve(f, description=None, fields=fields)


def _name_and_type(f: Part, fields: list[Part]) -> Part:
    kept = only(f, frozenset({"name", "type"}))
    return replaced(kept, fields=fields) if fields else kept


def _drop_descriptions(dataset: Dataset) -> Dataset:
    return _map_fields(dataset, _without_description)


def _minimal(dataset: Dataset) -> Dataset:
    facets = {k: v for k, v in (dataset.facets or {}).items() if k in MINIMAL_FACETS or k == "schema"}
    if facets.get(STATISTICS_KEY) is not None:
        facets[STATISTICS_KEY] = only(facets[STATISTICS_KEY], MINIMAL_STATISTICS)
    changes: dict[str, object] = {"facets": facets}
    for key in ("inputFacets", "outputFacets"):
        if getattr(dataset, key, None) is not None:
            changes[key] = {k: v for k, v in getattr(dataset, key).items() if k in MINIMAL_DATASET_FACETS}
    return _map_fields(attr.evolve(dataset, **changes), _name_and_type)


def _drop_schema(dataset: Dataset) -> Dataset:
    if _facet(dataset, "schema") is None:
        return dataset
    statistics = _facet(dataset, STATISTICS_KEY)
    dataset = attr.evolve(dataset, facets={k: v for k, v in dataset.facets.items() if k != "schema"})
    if statistics is not None:
        dataset = _with_facets(dataset, **{STATISTICS_KEY: replaced(statistics, schemaOmitted=True)})
    return dataset


_STEP: dict[str, Step] = {
    "column_detail": _drop_column_detail,
    "descriptions": _drop_descriptions,
    "minimal": _minimal,
    "schema": _drop_schema,
}
