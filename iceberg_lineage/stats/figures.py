"""The figures of one snapshot, each from the cheapest source that knows it: the snapshot summary, then the manifest
list, then the merged partial of its manifest entries; and the column and file-size statistics of that partial.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Iterable, Mapping

from iceberg_lineage.config import ColumnSelection
from iceberg_lineage.read.bounds import TRUNCATABLE
from iceberg_lineage.read.manifests import DATA, DELETES, ManifestFile
from iceberg_lineage.read.metadata import Field, MetadataFile, Snapshot
from iceberg_lineage.read.metadata_json import LONG_MAX, shown
from iceberg_lineage.read.modes import ModeHistory
from iceberg_lineage.stats.model import ColumnStats, FileSizeStats
from iceberg_lineage.stats.partials import Partial, path_hash
from iceberg_lineage.stats.tallies import ChangeTally


def _summary_count(summary: Mapping[str, str], key: str) -> tuple[int | None, str | None]:
    """A summary count and, when the writer's value is not a count in the long range, why it is unknown.

    Summaries are free-form strings: ``10^30``, ``-4``, ``inf`` or ``²`` must not reach an event."""
    v = summary.get(key)
    if v is None:
        return None, None
    if v.isascii() and v.isdigit() and len(v) <= 19 and int(v) <= LONG_MAX:
        return int(v), None
    return None, f"invalid summary {key}: {shown(v)} is not a count in 0..2^63-1"


@dataclass
class Figures:
    """The figures known so far, and the source each came from."""

    values: dict[str, int | None] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)

    def unknown(self, name: str, reason: str) -> None:
        """Record why a figure is unknown; a later source that knows it still replaces it."""
        if self.values.get(name) is None:
            self.values[name] = None
            self.sources[name] = reason

    def settle(self, name: str, value: int, source: str) -> None:
        """Take ``value`` over a cheaper source that disagrees: the figures of one walk must agree with each other
        (a summary claiming 4 data files over manifests holding millions)."""
        if self.values.get(name) != value:
            self.values[name] = value
            self.sources[name] = source

    def offer(self, name: str, value: int | None, source: str) -> None:
        """Keep the first known value of a figure (callers offer sources cheapest first)."""
        if value is not None and self.values.get(name) is None:
            self.values[name] = value
            self.sources[name] = source


_SUMMARY_TOTALS = {
    "data_files": "total-data-files",
    "records": "total-records",
    "delete_files": "total-delete-files",
    "position_deletes": "total-position-deletes",
    "equality_deletes": "total-equality-deletes",
    "total_files_size_bytes": "total-files-size",
}
_SUMMARY_CHANGES = {
    "added_data_files": "added-data-files",
    "removed_data_files": "deleted-data-files",
    "added_delete_files": "added-delete-files",
    "removed_delete_files": "removed-delete-files",
    "added_records": "added-records",
    "removed_records": "deleted-records",
    "added_files_size_bytes": "added-files-size",
    "removed_files_size_bytes": "removed-files-size",
}


def from_summary(fig: Figures, summary: Mapping[str, str]) -> None:
    for name, key in {**_SUMMARY_TOTALS, **_SUMMARY_CHANGES}.items():
        value, invalid = _summary_count(summary, key)
        if invalid:
            fig.unknown(name, invalid)
        else:
            fig.offer(name, value, "summary")
    if fig.values.get("delete_files") == 0:
        # No delete files at all: every delete figure is a known zero.
        for name in ("position_delete_files", "equality_delete_files", "dv_files", "dv_deletes",
                     "delete_files_size_bytes", "position_deletes", "equality_deletes"):
            fig.offer(name, 0, "summary")
        fig.offer("data_files_size_bytes", fig.values.get("total_files_size_bytes"), "summary")
        fig.offer("live_records", fig.values.get("records"), "summary")


def from_manifest_list(fig: Figures, manifests: list[ManifestFile], snapshot_id: int) -> None:
    data = [m for m in manifests if m.content == DATA]
    deletes = [m for m in manifests if m.content == DELETES]
    fig.offer("data_manifests", len(data), "manifest_list")
    fig.offer("delete_manifests", len(deletes), "manifest_list")

    def total(ms: list[ManifestFile], attr: str) -> int | None:
        vals = [getattr(m, attr) for m in ms]
        return None if any(v is None for v in vals) else sum(vals)

    fig.offer("data_files", total(data, "live_files_count"), "manifest_list")
    fig.offer("records", total(data, "live_rows_count"), "manifest_list")
    fig.offer("delete_files", total(deletes, "live_files_count"), "manifest_list")
    mine_data = [m for m in data if m.added_snapshot_id == snapshot_id]
    mine_deletes = [m for m in deletes if m.added_snapshot_id == snapshot_id]
    fig.offer("added_data_files", total(mine_data, "added_files_count"), "manifest_list")
    fig.offer("removed_data_files", total(mine_data, "deleted_files_count"), "manifest_list")
    fig.offer("added_records", total(mine_data, "added_rows_count"), "manifest_list")
    fig.offer("removed_records", total(mine_data, "deleted_rows_count"), "manifest_list")
    fig.offer("added_delete_files", total(mine_deletes, "added_files_count"), "manifest_list")
    fig.offer("removed_delete_files", total(mine_deletes, "deleted_files_count"), "manifest_list")
    if not deletes:
        for name in ("delete_files", "position_delete_files", "equality_delete_files", "dv_files", "position_deletes",
                     "equality_deletes", "dv_deletes", "delete_files_size_bytes"):
            fig.offer(name, 0, "manifest_list")
        fig.offer("live_records", fig.values.get("records"), fig.sources.get("records", "manifest_list"))


def _changes(parts: Iterable[Partial], snapshot_id: int) -> tuple[ChangeTally, ChangeTally]:
    """What this snapshot added and removed, from the entries its manifests record against its id."""
    added, removed = ChangeTally(), ChangeTally()
    for p in parts:
        for total, change in ((added, p.added.get(snapshot_id)), (removed, p.removed.get(snapshot_id))):
            if change is not None:
                total.merge(change)
    return added, removed


def _dvs_on_live_files(parts: list[Partial], dv_refs: Mapping[str, int]) -> bool:
    """Whether every DV's referenced data file is live in one of the snapshot's manifests (v3 tables only)."""
    if any(p.live_path_hashes is None for p in parts):
        return False
    return all(any(path_hash(ref) in p.live_path_hashes for p in parts) for ref in dv_refs)


def from_entries(fig: Figures, p: Partial, parts: list[Partial], snapshot_id: int) -> None:
    e = "entries"
    # the file-size and column statistics are computed from these three: they must agree with them
    fig.settle("data_files", p.data_files, e)
    fig.settle("records", p.records, e)
    fig.settle("data_files_size_bytes", p.data_bytes, e)
    fig.offer("position_delete_files", p.pos_files, e)
    fig.offer("equality_delete_files", p.eq_files, e)
    fig.offer("dv_files", p.dv_files, e)
    fig.offer("delete_files", p.pos_files + p.eq_files + p.dv_files, e)
    fig.offer("position_deletes", p.pos_rows + p.dv_rows, e)
    fig.offer("equality_deletes", p.eq_rows, e)
    fig.offer("dv_deletes", p.dv_rows, e)
    delete_bytes = p.pos_bytes + p.eq_bytes + p.dv_bytes
    fig.offer("delete_files_size_bytes", delete_bytes, e)
    fig.offer("total_files_size_bytes", p.data_bytes + delete_bytes, e)
    added, removed = _changes(parts, snapshot_id)
    fig.offer("added_data_files", added.data_files, e)
    fig.offer("removed_data_files", removed.data_files, e)
    fig.offer("added_delete_files", added.delete_files, e)
    fig.offer("removed_delete_files", removed.delete_files, e)
    fig.offer("added_records", added.records, e)
    fig.offer("removed_records", removed.records, e)
    fig.offer("added_files_size_bytes", added.data_bytes + added.delete_bytes, e)
    fig.offer("removed_files_size_bytes", removed.data_bytes + removed.delete_bytes, e)
    if p.pos_files == 0 and p.eq_files == 0:
        records = fig.values.get("records")
        if p.dv_files == 0:
            fig.offer("live_records", records, fig.sources.get("records", e))
        elif records is not None and sum(p.dv_refs.values()) == p.dv_rows and _dvs_on_live_files(parts, p.dv_refs):
            # every delete is a DV on a live data file: the deleted rows are exactly its cardinality
            fig.offer("live_records", records - p.dv_rows, e)


def truncation(f: Field, name: str, lo: object, hi: object, max_lo: object, p: Partial,
               modes: ModeHistory) -> tuple[bool, bool]:
    """Whether the aggregate lower and upper bound may be truncated: true unless the metadata rules it out (see
    docs/stats.md, "Truncated bounds").

    A truncated lower bound is exactly N long; a truncated upper bound is at most N long (Iceberg Java drops a
    character that cannot be incremented), but an upper bound equal to the greatest lower bound is a value. N is any
    length the modes of the snapshots that added the files allowed; ``fixed(L)`` bounds are cut only below L."""
    hi_known = hi is not None and hi != max_lo
    if f.type.startswith("fixed"):
        size = int(f.type[6:-1]) if f.type[6:-1].isdigit() else None
        return (lo is not None and (size is None or len(lo) < size)), (hi_known and (size is None or len(hi) < size))
    if f.type not in TRUNCATABLE or not (lo or hi_known):  # an empty lower bound is never cut
        return False, False
    lengths = modes.union(p.file_snapshots, f.id, name)
    if lengths is None:
        return bool(lo), hi_known
    return (bool(lo) and len(lo) in lengths), (hi_known and any(len(hi) <= n for n in lengths))


def column_stats(md: MetadataFile, snapshot: Snapshot, p: Partial, columns: ColumnSelection,
                 modes: ModeHistory) -> tuple[dict, tuple[str, ...]]:
    schema = md.schema_for(snapshot)
    ndv = md.ndv_by_field(snapshot.snapshot_id)
    names = [(name, f) for name, f in schema.columns() if f.is_primitive]
    kept, omitted = columns.select(name for name, _ in names)
    keep = set(kept)
    out: dict[str, ColumnStats] = {}
    n = p.data_files
    for name, f in names:
        if name not in keep:
            continue
        col = p.columns.get(f.id)

        def complete(count: str, files: str) -> int | None:
            if col is None or n == 0:
                return 0 if n == 0 else None
            return getattr(col, count) if getattr(col, files) == n else None

        lo = hi = None
        if col is not None and columns.with_bounds and n:
            # exact when every file has a bound or holds only nulls in this column
            if col.lower_files + col.all_null_files >= n:
                lo = col.lower
            if col.upper_files + col.all_null_files >= n:
                hi = col.upper
        lower_cut, upper_cut = truncation(f, name, lo, hi, col.max_lower if col else None, p, modes)
        out[name] = ColumnStats(
            field_id=f.id,
            name=name,
            type=f.type,
            value_count=complete("values", "value_files"),
            null_count=complete("nulls", "null_files"),
            # Iceberg counts NaN in float and double columns only; elsewhere there is no such figure
            nan_count=complete("nans", "nan_files") if f.type in ("float", "double") else None,
            min=lo,
            max=hi,
            distinct_count=ndv.get(f.id),
            lower_truncated=lower_cut,
            upper_truncated=upper_cut,
            has_metrics=bool(col and (col.value_files or col.null_files or col.nan_files or col.lower_files
                                     or col.upper_files)),
        )
    return out, tuple(omitted)


def file_size_stats(p: Partial, threshold: int) -> FileSizeStats:
    return FileSizeStats(
        count=p.data_files,
        min=p.size_min,
        max=p.size_max,
        mean=(p.data_bytes / p.data_files) if p.data_files else None,
        histogram=MappingProxyType(dict(sorted(p.histogram.items()))),
        small_file_threshold=threshold,
        small_files=p.small_files,
    )
