"""The walker: statistics of any snapshot, and of a table's whole history, computed incrementally.

Figures come from the cheapest source that knows them: the snapshot summary, then the manifest list, then the
manifest entries (only at ``depth="entries"``). Each distinct manifest is read once per walk and its partial is
cached by path, because manifests are immutable and a child snapshot reuses most of its parent's manifests.
"""
from __future__ import annotations

import dataclasses
from concurrent.futures import Executor
from types import MappingProxyType
from typing import TYPE_CHECKING, Iterable, Mapping

from iceberg_lineage.config import ALL_COLUMNS, ColumnSelection
from iceberg_lineage.errors import IcebergLineageError, ManifestError, ManifestNotFoundError
from iceberg_lineage.read.bounds import decoder_for
from iceberg_lineage.read.manifests import ManifestFile
from iceberg_lineage.read.metadata import MetadataFile, Snapshot
from iceberg_lineage.read.modes import ModeHistory, mode_history
from iceberg_lineage.read.source import LoadedTable, open_table
from iceberg_lineage.stats.cache import ManifestCache, fetch_partials
from iceberg_lineage.stats.figures import (
    Figures, column_stats, file_size_stats, from_entries, from_manifest_list, from_summary,
)
from iceberg_lineage.stats.model import (
    DEPTHS, Depth, PartitionCount, SnapshotStats, TableHistory, TableInfo, depth_at_least,
)
from iceberg_lineage.stats.parallel import manifest_pool
from iceberg_lineage.stats.partials import Partial, PartialContext

if TYPE_CHECKING:
    from iceberg_lineage.read.source import TableRef


def table_info(table: LoadedTable) -> TableInfo:
    md = table.metadata
    return TableInfo(
        uuid=md.identity,
        uuid_is_stable_id=md.table_uuid is None,
        location=md.location,
        format_version=md.format_version,
        current_snapshot_id=md.current_snapshot_id,
        metadata_location=md.metadata_location,
        name=table.display_name,
        properties=md.properties,
    )


# ----------------------------------------------------------------------------------------------------------------
# Column context
# ----------------------------------------------------------------------------------------------------------------

def partial_context(md: MetadataFile, columns: ColumnSelection) -> PartialContext:
    """Tracked field ids (over every schema, so one context serves the whole history) and their decoders.

    A field's bounds are decoded with its newest type; older, narrower bounds are recognised by their length.
    """
    types: dict[int, str | None] = {}
    if columns.mode != "none":
        for schema_id in sorted(md.schemas):
            schema = md.schemas[schema_id]
            for name, f in schema.columns():
                if f.is_primitive and columns.wants(name):
                    types[f.id] = f.type if columns.with_bounds and decoder_for(f.type) else None
    return PartialContext(
        bound_types=tuple(sorted(types.items())),
        small_file_threshold=md.target_file_size // 2,
        collect_paths=md.format_version >= 3,
    )


# ----------------------------------------------------------------------------------------------------------------
# Statistics of one snapshot
# ----------------------------------------------------------------------------------------------------------------

def _snapshot_stats(
    table: LoadedTable,
    snapshot: Snapshot,
    refs: Mapping[int, tuple[str, ...]],
    depth: Depth,
    columns: ColumnSelection,
    ctx: PartialContext,
    cache: ManifestCache,
    executor: Executor | None,
    modes: ModeHistory,
) -> SnapshotStats:
    md = table.metadata
    fig = Figures()
    from_summary(fig, snapshot.summary)
    available = True
    error = None
    partial: Partial | None = None
    col_stats: dict = {}
    omitted: tuple[str, ...] = ()
    partitions = None
    file_sizes = None
    reached: Depth = "summary"
    if depth_at_least(depth, "manifest_list"):
        try:
            manifests = cache.manifest_list(table.io, snapshot)
            from_manifest_list(fig, manifests, snapshot.snapshot_id)
            reached = "manifest_list"
            if depth == "entries":
                def fetch(ms: Iterable[ManifestFile]) -> Mapping[str, Partial]:
                    return fetch_partials(table.io, ms, ctx, cache, executor)

                partial = cache.reduce(snapshot, manifests, ctx, fetch)
                # ADDED and DELETED entries of a snapshot live in the manifests it wrote; DVs need every live path
                own = manifests if partial.dv_files else [
                    m for m in manifests if m.added_snapshot_id in (snapshot.snapshot_id, None)
                ]
                from_entries(fig, partial, list(fetch(own).values()), snapshot.snapshot_id)
                reached = "entries"
        except ManifestError as exc:
            if not isinstance(exc, ManifestNotFoundError) or snapshot.snapshot_id == md.current_snapshot_id:
                raise exc.with_table(table.display_name) from None
            # An expired historical snapshot: keep the summary figures, mark it unavailable.
            available = False
            error = exc.one_line()
    if partial is not None:
        col_stats, omitted = column_stats(md, snapshot, partial, columns, modes)
        partitions = tuple(
            PartitionCount(spec, len(partial.partitions.get(spec, ())), partial.partition_files.get(spec, 0))
            for spec in sorted(set(partial.partitions) | {s for s, n in partial.partition_files.items() if n})
        )
        file_sizes = file_size_stats(partial, ctx.small_file_threshold)
    per_partition = None
    if partial is not None and partial.partition_rows is not None:
        per_partition = tuple(partial.partition_rows.values())
    v = fig.values
    return SnapshotStats(
        snapshot_id=snapshot.snapshot_id,
        parent_id=snapshot.parent_id,
        operation=snapshot.operation,
        timestamp_ms=snapshot.timestamp_ms,
        sequence_number=snapshot.sequence_number if md.format_version >= 2 else 0,
        schema_id=snapshot.schema_id,
        refs=refs.get(snapshot.snapshot_id, ()),
        staged=snapshot.snapshot_id not in refs,
        available=available,
        depth=reached,
        partitions=partitions,
        file_sizes=file_sizes,
        partition_records=per_partition,
        columns=MappingProxyType(col_stats),
        columns_omitted=omitted,
        sources=MappingProxyType(dict(fig.sources)),
        summary=snapshot.summary,
        error=error,
        **{name: v.get(name) for name in _FIGURE_NAMES},
    )


_FIGURE_NAMES = tuple(SnapshotStats.figures())


# ----------------------------------------------------------------------------------------------------------------
# Public API
# ----------------------------------------------------------------------------------------------------------------

def _executor_or_default(executor: Executor | None, table: LoadedTable) -> Executor | None:
    """The caller's executor, else this process's manifest pool for object stores (latency-bound), else none:
    local reads are CPU-bound and the GIL makes threads pure overhead there."""
    if executor is not None:
        return executor
    location = table.metadata.location
    if "://" not in location or location.startswith("file:"):
        return None
    return manifest_pool()


def _check_depth(depth: str) -> None:
    if depth not in DEPTHS:
        raise ValueError(f"depth must be one of {', '.join(DEPTHS)}, not {depth!r}")


def snapshot_stats(
    ref: TableRef,
    snapshot_id: int | None = None,
    *,
    depth: Depth = "entries",
    columns: ColumnSelection = ALL_COLUMNS,
    executor: Executor | None = None,
    cache: ManifestCache | None = None,
    small_file_threshold: int | None = None,
    partition_records: bool = False,
    **open_kwargs: object,
) -> SnapshotStats:
    """Statistics of one snapshot (the current one by default) of a table reference (see :func:`open_table`).

    For a check: ``small_file_threshold`` replaces the table's (half its target file size), ``partition_records``
    counts live records per partition (``SnapshotStats.partition_records``, at ``depth="entries"``)."""
    _check_depth(depth)
    table = open_table(ref, **open_kwargs)
    md = table.metadata
    sid = snapshot_id if snapshot_id is not None else md.current_snapshot_id
    if sid is None:
        raise IcebergLineageError("table has no snapshot", table=table.display_name, file=md.metadata_location)
    snapshot = md.snapshot_by_id(sid)
    if snapshot is None:
        raise IcebergLineageError(f"no snapshot {sid}", table=table.display_name, file=md.metadata_location)
    ctx = partial_context(md, columns)
    if small_file_threshold is not None or partition_records:
        ctx = dataclasses.replace(ctx, small_file_threshold=small_file_threshold or ctx.small_file_threshold,
                                  partition_records=partition_records)
    return _snapshot_stats(
        table, snapshot, md.refs_of([snapshot.snapshot_id]), depth, columns, ctx,
        cache or ManifestCache(), _executor_or_default(executor, table), mode_history(table),
    )


#: Up to this many snapshots asked for, their refs are found alone (see ``MetadataFile.refs_of``).
FEW_SNAPSHOTS = 64


def table_history(
    ref: TableRef,
    *,
    depth: Depth = "entries",
    columns: ColumnSelection = ALL_COLUMNS,
    snapshot_ids: Iterable[int] | None = None,
    executor: Executor | None = None,
    cache: ManifestCache | None = None,
    **open_kwargs: object,
) -> TableHistory:
    """Statistics of every snapshot (or of ``snapshot_ids``) in commit order.

    All distinct manifests of the requested snapshots are read first, once each and in parallel; then every
    snapshot is a cheap reduce over cached partials.
    """
    _check_depth(depth)
    table = open_table(ref, **open_kwargs)
    md = table.metadata
    wanted = set(snapshot_ids) if snapshot_ids is not None else None
    snapshots = list(md.snapshots_in_commit_order(wanted))  # only those wanted are sorted: 1 of 400,000
    cache = cache or ManifestCache()
    ctx = partial_context(md, columns)
    # a few snapshots: their refs alone (linear in refs plus snapshots); every snapshot: the shared sets of all
    refs = md.refs_of(wanted) if wanted is not None and len(wanted) <= FEW_SNAPSHOTS else md.refs_by_snapshot()
    pool = _executor_or_default(executor, table)
    if depth == "entries":
        _prefetch(table, snapshots, ctx, cache, pool)
    modes = mode_history(table)  # old metadata files are read only if a bound's flag needs them, once per walk
    out = tuple(_snapshot_stats(table, s, refs, depth, columns, ctx, cache, pool, modes) for s in snapshots)
    return TableHistory(table_info(table), out, cache.manifest_reads, cache.manifest_list_reads)


def _prefetch(table: LoadedTable, snapshots: list[Snapshot], ctx: PartialContext, cache: ManifestCache, pool: Executor | None) -> None:
    """Read every manifest list, then every distinct manifest once, fanned out on the executor."""
    distinct: dict[str, ManifestFile] = {}
    for s in snapshots:
        try:
            rows = cache.manifest_list(table.io, s)
        except ManifestError:
            continue  # reported per snapshot (expired history) by _snapshot_stats
        for m in rows:
            distinct.setdefault(m.manifest_path, m)
    try:
        fetch_partials(table.io, distinct.values(), ctx, cache, pool)
    except ManifestError:
        # A missing manifest fails only the snapshots that list it; they are read (and reported) one by one.
        for m in distinct.values():
            try:
                fetch_partials(table.io, [m], ctx, cache, None)
            except ManifestError:
                pass
