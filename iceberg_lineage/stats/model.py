"""Typed, immutable statistics of an Iceberg table at a snapshot.

Every figure is either a fact or ``None`` (unknown); ``sources`` says where each fact came from:
``summary`` (the snapshot summary), ``manifest_list`` or ``entries`` (manifest entries). The fields declare their
published forms (:mod:`iceberg_lineage.stats.forms`); display in notebooks is :mod:`~iceberg_lineage.stats.html` and
:mod:`~iceberg_lineage.stats.plots`.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Mapping

from iceberg_lineage.read.metadata import DEFAULT_TARGET_FILE_SIZE
from iceberg_lineage.stats.depths import DEPTHS, Depth, depth_at_least
from iceberg_lineage.stats.forms import (
    CAMEL, SNAKE, Figure, JsonModel, bound_to_json, declared_figures, figure, json_field, not_json,
)
from iceberg_lineage.stats.html import history_html, snapshot_html
from iceberg_lineage.stats.plots import columns_plot, file_sizes_plot, history_plot

if TYPE_CHECKING:
    from matplotlib.figure import Figure

Source = Literal["summary", "manifest_list", "entries"]


_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class ColumnStats(JsonModel):
    """Aggregated metrics of one column over the live data files of a snapshot. ``nan_count`` is ``None`` for types
    other than float and double: Iceberg counts NaN in those only."""

    field_id: int
    name: str = not_json()  # it keys the ``columns`` mapping
    type: str
    value_count: int | None = None
    null_count: int | None = None
    nan_count: int | None = None
    min: object = json_field(default=None, convert=bound_to_json)
    max: object = json_field(default=None, convert=bound_to_json)
    distinct_count: int | None = None
    #: Whether ``min`` / ``max`` may be truncated: true unless the metadata rules it out (docs/stats.md).
    lower_truncated: bool = json_field(default=False, omit_empty=(CAMEL,))
    upper_truncated: bool = json_field(default=False, omit_empty=(CAMEL,))
    #: Either bound may be truncated (the flag before there was one per bound).
    bounds_truncated: bool = json_field(init=False, omit_empty=(CAMEL,))
    has_metrics: bool = json_field(default=False, forms=(SNAKE,))

    def __post_init__(self) -> None:
        object.__setattr__(self, "bounds_truncated", self.lower_truncated or self.upper_truncated)

    @property
    def is_numeric(self) -> bool:
        t = self.type
        return t in ("int", "long", "float", "double") or t.startswith("decimal")


@dataclass(frozen=True)
class PartitionCount(JsonModel):
    """Exact number of distinct partitions and of live data files written with one partition spec."""

    spec_id: int
    partitions: int
    files: int


def _histogram_json(histogram: Mapping[int, int]) -> dict[str, int]:
    return {str(k): v for k, v in sorted(histogram.items())}


@dataclass(frozen=True)
class FileSizeStats(JsonModel):
    """Sizes of live data files: extremes, mean, a power-of-two histogram and the small-file count.

    ``histogram`` maps the exclusive upper bound of each bucket (a power of two, in bytes) to a file count.
    ``approx_median`` is derived from it: the upper bound of the bucket that holds the median file (within a factor
    of two).
    """

    count: int
    min: int | None
    max: int | None
    mean: float | None
    approx_median: int | None = json_field(init=False, forms=(SNAKE,))
    histogram: Mapping[int, int] = json_field(convert=_histogram_json)
    small_file_threshold: int
    small_files: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "approx_median", self._median_bucket())

    def _median_bucket(self) -> int | None:
        if not self.count:
            return None
        half = (self.count + 1) // 2
        seen = 0
        for upper in sorted(self.histogram):
            seen += self.histogram[upper]
            if seen >= half:
                return min(upper, self.max) if self.max is not None else upper
        return self.max


@dataclass(frozen=True)
class SnapshotStats(JsonModel):
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
    data_files: int | None = figure("data files", "dataFiles")
    records: int | None = figure("records", "records")
    data_files_size_bytes: int | None = figure("data bytes", "bytes.data")
    position_delete_files: int | None = figure("position-delete files", "deleteFiles.position")
    equality_delete_files: int | None = figure("equality-delete files", "deleteFiles.equality")
    dv_files: int | None = figure("deletion vectors", "deleteFiles.dv")
    delete_files: int | None = figure("delete files", "deleteFiles.total", shown=False)
    position_deletes: int | None = figure("position deletes (incl. DVs)", "deletedRows.position")
    equality_deletes: int | None = figure("equality deletes", "deletedRows.equality")
    dv_deletes: int | None = figure("rows deleted by DVs", "deletedRows.dv", shown=False)
    delete_files_size_bytes: int | None = figure("delete bytes", "bytes.delete")
    total_files_size_bytes: int | None = figure("total bytes", "bytes.total")
    added_data_files: int | None = figure("added data files", "added.dataFiles")
    removed_data_files: int | None = figure("removed data files", "removed.dataFiles")
    added_delete_files: int | None = figure("added delete files", "added.deleteFiles", shown=False)
    removed_delete_files: int | None = figure("removed delete files", "removed.deleteFiles", shown=False)
    added_records: int | None = figure("added records", "added.records")
    removed_records: int | None = figure("removed records", "removed.records")
    added_files_size_bytes: int | None = figure("added bytes", "added.bytes", shown=False)
    removed_files_size_bytes: int | None = figure("removed bytes", "removed.bytes", shown=False)
    live_records: int | None = figure("live records", "liveRecords")
    data_manifests: int | None = figure("data manifests", "manifests.data")
    delete_manifests: int | None = figure("delete manifests", "manifests.delete")
    partitions: tuple[PartitionCount, ...] | None = None
    file_sizes: FileSizeStats | None = None
    #: Live records of each partition (every spec's), only when asked for (a check's ``partition_skew``).
    partition_records: tuple[int, ...] | None = not_json(default=None)
    columns: Mapping[str, ColumnStats] = field(default_factory=lambda: _EMPTY)
    columns_omitted: tuple[str, ...] = ()
    sources: Mapping[str, Source] = field(default_factory=lambda: _EMPTY)
    summary: Mapping[str, str] = not_json(default_factory=lambda: _EMPTY)
    error: str | None = json_field(default=None, omit_empty=(SNAKE, CAMEL))

    @classmethod
    def figures(cls) -> Mapping[str, Figure]:
        """The declared figures by field name, in JSON order."""
        return declared_figures(cls)

    @property
    def timestamp(self) -> _dt.datetime:
        return _dt.datetime.fromtimestamp(self.timestamp_ms / 1000, tz=_dt.timezone.utc)

    def __repr__(self) -> str:
        return (
            f"SnapshotStats(snapshot_id={self.snapshot_id}, operation={self.operation}, records={self.records}, "
            f"data_files={self.data_files}, delete_files={self.delete_files}, depth={self.depth}, "
            f"columns={len(self.columns)})"
        )

    def _repr_html_(self) -> str:
        return snapshot_html(self)

    def plot_columns(self) -> Figure:
        """Null fraction per column (matplotlib Figure; extra ``notebook``)."""
        return columns_plot(self)

    def plot_file_sizes(self) -> Figure:
        """Histogram of data file sizes with the small-file threshold (matplotlib Figure; extra ``notebook``)."""
        return file_sizes_plot(self)


#: Figures that carry a source, in the order they appear in JSON.
FIGURES: tuple[str, ...] = tuple(SnapshotStats.figures())


@dataclass(frozen=True)
class TableInfo(JsonModel):
    """Identity and static facts of a table, from its metadata file."""

    uuid: str
    uuid_is_stable_id: bool
    name: str | None = json_field(default=None, kw_only=True)
    location: str
    format_version: int
    current_snapshot_id: int | None
    metadata_location: str | None
    properties: Mapping[str, str] = not_json(default_factory=lambda: _EMPTY)


@dataclass(frozen=True)
class TableHistory(JsonModel):
    """The statistics of several snapshots of one table, in commit order."""

    table: TableInfo
    snapshots: tuple[SnapshotStats, ...]
    manifest_reads: int = not_json(default=0)
    manifest_list_reads: int = not_json(default=0)

    def __iter__(self):
        return iter(self.snapshots)

    def __len__(self) -> int:
        return len(self.snapshots)

    def __repr__(self) -> str:
        return f"TableHistory(table={self.table.name or self.table.location!r}, snapshots={len(self.snapshots)})"

    def _repr_html_(self) -> str:
        return history_html(self)

    def plot(self) -> Figure:
        """Records, data files, bytes and delete files over the snapshots (matplotlib Figure; extra ``notebook``)."""
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
