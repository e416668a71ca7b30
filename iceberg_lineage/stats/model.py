"""Typed, immutable statistics of an Iceberg table at a snapshot.

Every figure is either a fact or ``None`` (unknown); ``sources`` says where each fact came from:
``summary`` (the snapshot summary), ``manifest_list`` or ``entries`` (manifest entries).
"""
from __future__ import annotations

import datetime as _dt
import decimal
import uuid
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, Mapping

from iceberg_lineage.read.metadata import DEFAULT_TARGET_FILE_SIZE

Source = Literal["summary", "manifest_list", "entries"]
Depth = Literal["summary", "manifest_list", "entries"]
DEPTHS: tuple[Depth, ...] = ("summary", "manifest_list", "entries")


_EMPTY: Mapping[str, Any] = MappingProxyType({})


def depth_at_least(depth: Depth, wanted: Depth) -> bool:
    return DEPTHS.index(depth) >= DEPTHS.index(wanted)


def bound_to_json(value: Any, type_name: str | None = None) -> Any:
    """The JSON form of a decoded bound: numbers stay numbers; dates and times are ISO-8601; decimal and uuid are text;
    binary and fixed are hex."""
    if value is None or isinstance(value, (bool, int, float, str)):
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            return str(value)
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    return str(value)


@dataclass(frozen=True)
class ColumnStats:
    """Aggregated metrics of one column over the live data files of a snapshot."""

    field_id: int
    name: str
    type: str
    value_count: int | None = None
    null_count: int | None = None
    nan_count: int | None = None
    min: Any = None
    max: Any = None
    distinct_count: int | None = None
    bounds_truncated: bool = False
    has_metrics: bool = False

    @property
    def is_numeric(self) -> bool:
        t = self.type
        return t in ("int", "long", "float", "double") or t.startswith("decimal")

    def to_json(self) -> dict[str, Any]:
        return {
            "field_id": self.field_id,
            "type": self.type,
            "value_count": self.value_count,
            "null_count": self.null_count,
            "nan_count": self.nan_count,
            "min": bound_to_json(self.min),
            "max": bound_to_json(self.max),
            "distinct_count": self.distinct_count,
            "bounds_truncated": self.bounds_truncated,
            "has_metrics": self.has_metrics,
        }


@dataclass(frozen=True)
class PartitionCount:
    """Exact number of distinct partitions and of live data files written with one partition spec."""

    spec_id: int
    partitions: int
    files: int

    def to_json(self) -> dict[str, Any]:
        return {"spec_id": self.spec_id, "partitions": self.partitions, "files": self.files}


@dataclass(frozen=True)
class FileSizeStats:
    """Sizes of live data files: extremes, mean, a power-of-two histogram and the small-file count.

    ``histogram`` maps the exclusive upper bound of each bucket (a power of two, in bytes) to a file count.
    """

    count: int
    min: int | None
    max: int | None
    mean: float | None
    histogram: Mapping[int, int]
    small_file_threshold: int
    small_files: int

    @property
    def approx_median(self) -> int | None:
        """Upper bound of the bucket that holds the median file (within a factor of two)."""
        if not self.count:
            return None
        half = (self.count + 1) // 2
        seen = 0
        for upper in sorted(self.histogram):
            seen += self.histogram[upper]
            if seen >= half:
                return min(upper, self.max) if self.max is not None else upper
        return self.max

    def to_json(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "min": self.min,
            "max": self.max,
            "mean": self.mean,
            "approx_median": self.approx_median,
            "histogram": {str(k): v for k, v in sorted(self.histogram.items())},
            "small_file_threshold": self.small_file_threshold,
            "small_files": self.small_files,
        }


#: Figures that carry a source, in the order they appear in JSON.
FIGURES: tuple[str, ...] = (
    "data_files",
    "records",
    "data_files_size_bytes",
    "position_delete_files",
    "equality_delete_files",
    "dv_files",
    "delete_files",
    "position_deletes",
    "equality_deletes",
    "dv_deletes",
    "delete_files_size_bytes",
    "total_files_size_bytes",
    "added_data_files",
    "removed_data_files",
    "added_delete_files",
    "removed_delete_files",
    "added_records",
    "removed_records",
    "added_files_size_bytes",
    "removed_files_size_bytes",
    "live_records",
    "data_manifests",
    "delete_manifests",
)


@dataclass(frozen=True)
class SnapshotStats:
    """Statistics of one snapshot. Unknown figures are ``None``; ``sources`` maps each known figure to its origin.

    ``position_deletes`` follows the summary's ``total-position-deletes``: it includes rows deleted by deletion
    vectors, which ``dv_deletes`` also counts on their own. ``position_delete_files`` excludes DVs.
    """

    snapshot_id: int
    parent_id: int | None
    operation: str | None
    timestamp_ms: int
    sequence_number: int | None
    schema_id: int | None
    refs: tuple[str, ...] = ()
    staged: bool = False
    available: bool = True
    depth: Depth = "summary"
    data_files: int | None = None
    records: int | None = None
    data_files_size_bytes: int | None = None
    position_delete_files: int | None = None
    equality_delete_files: int | None = None
    dv_files: int | None = None
    delete_files: int | None = None
    position_deletes: int | None = None
    equality_deletes: int | None = None
    dv_deletes: int | None = None
    delete_files_size_bytes: int | None = None
    total_files_size_bytes: int | None = None
    added_data_files: int | None = None
    removed_data_files: int | None = None
    added_delete_files: int | None = None
    removed_delete_files: int | None = None
    added_records: int | None = None
    removed_records: int | None = None
    added_files_size_bytes: int | None = None
    removed_files_size_bytes: int | None = None
    live_records: int | None = None
    data_manifests: int | None = None
    delete_manifests: int | None = None
    partitions: tuple[PartitionCount, ...] | None = None
    file_sizes: FileSizeStats | None = None
    columns: Mapping[str, ColumnStats] = field(default_factory=lambda: _EMPTY)
    columns_omitted: tuple[str, ...] = ()
    sources: Mapping[str, Source] = field(default_factory=lambda: _EMPTY)
    summary: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    error: str | None = None

    @property
    def timestamp(self) -> _dt.datetime:
        return _dt.datetime.fromtimestamp(self.timestamp_ms / 1000, tz=_dt.timezone.utc)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "snapshot_id": self.snapshot_id,
            "parent_id": self.parent_id,
            "operation": self.operation,
            "timestamp_ms": self.timestamp_ms,
            "sequence_number": self.sequence_number,
            "schema_id": self.schema_id,
            "refs": list(self.refs),
            "staged": self.staged,
            "available": self.available,
            "depth": self.depth,
        }
        for name in FIGURES:
            out[name] = getattr(self, name)
        out["partitions"] = None if self.partitions is None else [p.to_json() for p in self.partitions]
        out["file_sizes"] = None if self.file_sizes is None else self.file_sizes.to_json()
        out["columns"] = {name: col.to_json() for name, col in self.columns.items()}
        out["columns_omitted"] = list(self.columns_omitted)
        out["sources"] = dict(self.sources)
        if self.error:
            out["error"] = self.error
        return out

    def __repr__(self) -> str:
        return (
            f"SnapshotStats(snapshot_id={self.snapshot_id}, operation={self.operation}, records={self.records}, "
            f"data_files={self.data_files}, delete_files={self.delete_files}, depth={self.depth}, "
            f"columns={len(self.columns)})"
        )

    def _repr_html_(self) -> str:
        from iceberg_lineage.notebook.html import snapshot_html

        return snapshot_html(self)

    def plot_columns(self) -> Any:
        """Null fraction per column (matplotlib Figure; extra ``notebook``)."""
        from iceberg_lineage.notebook.plots import columns_plot

        return columns_plot(self)

    def plot_file_sizes(self) -> Any:
        """Histogram of data file sizes with the small-file threshold (matplotlib Figure; extra ``notebook``)."""
        from iceberg_lineage.notebook.plots import file_sizes_plot

        return file_sizes_plot(self)


@dataclass(frozen=True)
class TableInfo:
    """Identity and static facts of a table, from its metadata file."""

    uuid: str
    uuid_is_stable_id: bool
    location: str
    format_version: int
    current_snapshot_id: int | None
    metadata_location: str | None
    name: str | None = None
    properties: Mapping[str, str] = field(default_factory=lambda: _EMPTY)

    def to_json(self) -> dict[str, Any]:
        return {
            "uuid": self.uuid,
            "uuid_is_stable_id": self.uuid_is_stable_id,
            "name": self.name,
            "location": self.location,
            "format_version": self.format_version,
            "current_snapshot_id": self.current_snapshot_id,
            "metadata_location": self.metadata_location,
        }


@dataclass(frozen=True)
class TableHistory:
    """The statistics of several snapshots of one table, in commit order."""

    table: TableInfo
    snapshots: tuple[SnapshotStats, ...]
    manifest_reads: int = 0
    manifest_list_reads: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"table": self.table.to_json(), "snapshots": [s.to_json() for s in self.snapshots]}

    def __iter__(self):
        return iter(self.snapshots)

    def __len__(self) -> int:
        return len(self.snapshots)

    def __repr__(self) -> str:
        return f"TableHistory(table={self.table.name or self.table.location!r}, snapshots={len(self.snapshots)})"

    def _repr_html_(self) -> str:
        from iceberg_lineage.notebook.html import history_html

        return history_html(self)

    def plot(self) -> Any:
        """Records, data files, bytes and delete files over the snapshots (matplotlib Figure; extra ``notebook``)."""
        from iceberg_lineage.notebook.plots import history_plot

        return history_plot(self)


__all__ = [
    "ColumnStats",
    "DEFAULT_TARGET_FILE_SIZE",
    "DEPTHS",
    "Depth",
    "FIGURES",
    "FileSizeStats",
    "PartitionCount",
    "SnapshotStats",
    "Source",
    "TableHistory",
    "TableInfo",
    "bound_to_json",
    "depth_at_least",
]
