"""The statistics facets of a snapshot: the standard ``dataQualityMetrics``, and the custom ``icebergTableStatistics``
with what the walker knows that no standard facet can carry (delete files by kind, manifests, partitions, file sizes,
typed column bounds, the schema diff, and where each figure came from).

Its JSON schema ships in the package (``iceberg_lineage/schemas/IcebergTableStatisticsDatasetFacet.json``, printed by
``iceberg-lineage schema icebergTableStatistics``); the ``_schemaURL`` serves that very file, raw JSON at this
release's tag, and is the schema's ``$id``. Unknown figures are left out, never 0.
"""
from __future__ import annotations

import datetime as dt
import decimal
import functools
import json
import math
from importlib import resources
from typing import TYPE_CHECKING, Any, ClassVar

import attr
from openlineage.client.facet_v2 import data_quality_metrics_dataset, data_quality_metrics_input_dataset
from openlineage.client.generated.base import DatasetFacet

from iceberg_lineage._version import __version__
from iceberg_lineage.lineage.facets.common import PRODUCED, iso_ms, iso_time
from iceberg_lineage.lineage.serde import Plain, make
from iceberg_lineage.quality.schema import SchemaChange, schema_diff
from iceberg_lineage.read.metadata import Schema
from iceberg_lineage.stats.forms import CAMEL, as_json
from iceberg_lineage.stats.model import ColumnStats, SnapshotStats

if TYPE_CHECKING:
    #: The dataset facet's and the input facet's column metrics (their fields are the same).
    _ColumnMetrics = data_quality_metrics_dataset.ColumnMetrics | data_quality_metrics_input_dataset.ColumnMetrics
    _MetricsKind = (type[data_quality_metrics_dataset.ColumnMetrics]
                    | type[data_quality_metrics_input_dataset.ColumnMetrics])

STATISTICS_KEY = "icebergTableStatistics"
SCHEMA_FILE = "IcebergTableStatisticsDatasetFacet.json"
#: The schema's ``$id``: the file at this release's tag, as raw JSON (a ``blob`` page is HTML, ``main`` moves).
SCHEMA_ID = ("https://raw.githubusercontent.com/iceberg-lineage/iceberg-lineage/"
             f"v{__version__}/iceberg_lineage/schemas/{SCHEMA_FILE}")


@attr.define
class IcebergTableStatisticsDatasetFacet(DatasetFacet):
    """Table statistics at one snapshot. Nested values are JSON-ready mappings (see the shipped schema)."""

    snapshotId: int  # noqa: N815
    depth: str
    """How far the walker read: ``summary``, ``manifest_list`` or ``entries``."""
    staged: bool
    """True when no branch or tag contains the snapshot (e.g. a WAP-staged commit)."""
    available: bool
    """False when the snapshot's manifests are gone (expired history): only summary figures are present."""
    refs: list[str] = attr.field(factory=list)
    sequenceNumber: int | None = attr.field(default=None)  # noqa: N815
    operation: str | None = attr.field(default=None)
    dataFiles: int | None = attr.field(default=None)  # noqa: N815
    records: int | None = attr.field(default=None)
    liveRecords: int | None = attr.field(default=None)  # noqa: N815
    bytes: dict[str, int] | None = attr.field(default=None)
    deleteFiles: dict[str, int] | None = attr.field(default=None)  # noqa: N815
    deletedRows: dict[str, int] | None = attr.field(default=None)  # noqa: N815
    added: dict[str, int] | None = attr.field(default=None)
    removed: dict[str, int] | None = attr.field(default=None)
    manifests: dict[str, int] | None = attr.field(default=None)
    partitions: list[dict[str, int]] | None = attr.field(default=None)
    fileSizes: dict[str, Any] | None = attr.field(default=None)  # noqa: N815
    columns: dict[str, dict[str, Any]] | None = attr.field(default=None)
    columnsOmitted: list[str] | None = attr.field(default=None)  # noqa: N815
    schemaOmitted: bool | None = attr.field(default=None)  # noqa: N815
    """True when the byte budget left the ``schema`` facet out of the event (:mod:`iceberg_lineage.lineage.budget`)."""
    schemaChange: dict[str, Any] | None = attr.field(default=None)  # noqa: N815
    sources: dict[str, str] | None = attr.field(default=None)

    _additional_skip_redact: ClassVar[list[str]] = ["snapshotId", "depth", "staged", "available", "operation"]

    @staticmethod
    def _get_schema() -> str:
        return f"{SCHEMA_ID}#/$defs/IcebergTableStatisticsDatasetFacet"


def statistics_schema() -> dict[str, Any]:
    """The facet's JSON schema, read from the installed package."""
    return json.loads(resources.files("iceberg_lineage").joinpath("schemas", SCHEMA_FILE).read_text("utf-8"))


def _numeric(value: object, toward: float) -> float | int | None:
    """A bound usable as a JSON number: finite ints, floats and decimals only. A decimal becomes the nearest double
    on the bound's side (``toward`` -inf for a minimum, +inf for a maximum), so that it is still a bound."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            return None
        rounded = float(value)
        outside = decimal.Decimal(rounded) < value if toward > 0 else decimal.Decimal(rounded) > value
        return math.nextafter(rounded, toward) if outside else rounded
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return None


def _column_metrics(col: ColumnStats, kind: _MetricsKind = data_quality_metrics_dataset.ColumnMetrics,
                    plain: bool = False) -> _ColumnMetrics | None:
    """A column's metrics as ``kind`` (the dataset or the input facet's class; their fields are the same)."""
    numeric = col.is_numeric
    known = {
        "nullCount": col.null_count,
        "distinctCount": col.distinct_count,
        "count": col.value_count,
        "min": _numeric(col.min, -math.inf) if numeric else None,
        "max": _numeric(col.max, math.inf) if numeric else None,
    }
    return make(kind, plain, **known) if any(v is not None for v in known.values()) else None


def data_quality_facet(
    stats: SnapshotStats, capture_date: dt.datetime, *, plain: bool = False
) -> data_quality_metrics_dataset.DataQualityMetricsDatasetFacet:
    """Table-level metrics of the snapshot; ``columnMetrics`` is required, so it is ``{}`` at summary depth (or
    when the byte budget trims it, :mod:`iceberg_lineage.lineage.budget`)."""
    columns = _columns_metrics(stats, data_quality_metrics_dataset.ColumnMetrics, plain)
    return make(
        data_quality_metrics_dataset.DataQualityMetricsDatasetFacet, plain,
        columnMetrics=columns,
        rowCount=stats.records,
        bytes=stats.total_files_size_bytes,
        fileCount=stats.data_files,
        lastUpdated=iso_ms(stats.timestamp_ms),
        captureDate=iso_time(capture_date),
        **PRODUCED,
    )


def _columns_metrics(stats: SnapshotStats, kind: _MetricsKind, plain: bool = False) -> dict[str, Any]:
    return {name: m for name, col in stats.columns.items() if (m := _column_metrics(col, kind, plain)) is not None}


def data_quality_input_facet(
    stats: SnapshotStats,
) -> data_quality_metrics_input_dataset.DataQualityMetricsInputDatasetFacet:
    """The same table-level metrics as an input facet (a checks run reads the table); its schema has no
    ``captureDate``."""
    return data_quality_metrics_input_dataset.DataQualityMetricsInputDatasetFacet(
        columnMetrics=_columns_metrics(stats, data_quality_metrics_input_dataset.ColumnMetrics),
        rowCount=stats.records,
        bytes=stats.total_files_size_bytes,
        fileCount=stats.data_files,
        lastUpdated=iso_ms(stats.timestamp_ms),
        **PRODUCED,
    )


def schema_change(old: Schema, new: Schema) -> dict[str, Any] | None:
    """Added, dropped, renamed and retyped fields between two schemas, matched by field id (every field, nested ones
    too: :func:`~iceberg_lineage.quality.schema.schema_diff`'s ``every_field`` view); ``None`` if equal."""
    changes = schema_diff(old, new, every_field=True)
    if not changes:
        return None

    def of(*kinds: str) -> list[dict[str, Any]]:
        return [_change_json(c) for c in changes if c.kind in kinds]

    return {"fromSchemaId": old.schema_id, "toSchemaId": new.schema_id, "added": of("added"),
            "dropped": of("removed"), "renamed": of("renamed"), "typeChanged": of("type_changed", "promoted") or None}


def _change_json(change: SchemaChange) -> dict[str, Any]:
    if change.kind in ("added", "removed"):
        return {"fieldId": change.field_id, "name": change.name, "type": change.type}
    if change.kind == "renamed":
        return {"fieldId": change.field_id, "from": change.old_name, "to": change.name}
    return {"fieldId": change.field_id, "name": change.name, "from": change.old_type, "to": change.type}


def _figures(stats: SnapshotStats) -> tuple[dict[str, Any], dict[str, str]]:
    """The known figures at their declared paths (a group key and its key, or a top-level key), and their sources
    under the same dotted paths; the groups and the sources as :class:`Plain` (numbers and names: the facet's
    builder takes them as they are)."""
    groups: dict[str, Any] = {}
    sources: dict[str, str] = Plain()
    known = stats.sources
    for name, path, group, key in _figure_paths():
        value = getattr(stats, name)
        if value is None:
            continue
        if key:
            groups.setdefault(group, Plain())[key] = value
        else:
            groups[group] = value
        if name in known:
            sources[path] = known[name]
    return groups, sources


@functools.lru_cache(maxsize=None)
def _figure_paths() -> tuple[tuple[str, str, str, str], ...]:
    """Each declared figure's field name, path, and the path's group and key (read for every snapshot)."""
    return tuple((name, figure.path, *figure.path.partition(".")[::2])
                 for name, figure in SnapshotStats.figures().items())


def statistics_facet(
    stats: SnapshotStats, change: dict[str, Any] | None = None, *, plain: bool = False
) -> IcebergTableStatisticsDatasetFacet:
    """Everything the walker knows about the snapshot (the byte budget may trim its per-column detail later,
    listing the columns in ``columnsOmitted``: :mod:`iceberg_lineage.lineage.budget`)."""
    groups, sources = _figures(stats)
    columns = {name: as_json(col, CAMEL) for name, col in stats.columns.items()}
    omitted = list(stats.columns_omitted)
    return make(
        IcebergTableStatisticsDatasetFacet, plain,
        snapshotId=stats.snapshot_id,
        depth=stats.depth,
        staged=stats.staged,
        available=stats.available,
        refs=list(stats.refs),
        sequenceNumber=stats.sequence_number,
        operation=stats.operation,
        partitions=[as_json(p, CAMEL) for p in stats.partitions] if stats.partitions is not None else None,
        fileSizes=as_json(stats.file_sizes, CAMEL) if stats.file_sizes is not None else None,
        columns=columns or None,
        columnsOmitted=omitted or None,
        schemaChange=change,
        sources=sources or None,
        **groups,
        **PRODUCED,
    )
