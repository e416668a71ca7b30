"""The walker: statistics of any snapshot, and of a table's whole history, computed incrementally.

Figures come from the cheapest source that knows them: the snapshot summary, then the manifest list, then the
manifest entries (only at ``depth="entries"``). Each distinct manifest is read once per walk and its partial is
cached by path, because manifests are immutable and a child snapshot reuses most of its parent's manifests.
"""
from __future__ import annotations

import concurrent.futures as cf
import os
import threading
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

from iceberg_lineage.read.bounds import TRUNCATABLE, decoder_for
from iceberg_lineage.errors import IcebergLineageError, ManifestError
from iceberg_lineage.read.manifests import DATA, DELETES, ManifestFile, iter_manifest_entries, manifests_of_snapshot
from iceberg_lineage.read.metadata import Snapshot, TableMetadata
from iceberg_lineage.read.source import LoadedTable, local_path, open_table
from iceberg_lineage.stats.partials import (
    ALL_NULL, HI, HI_N, LO, LO_N, N_N, N_SUM, NAN_N, NAN_SUM, V_N, V_SUM, C_DATA_BYTES, C_DATA_FILES, C_DELETE_BYTES,
    C_DELETE_FILES, C_RECORDS, Partial, PartialContext, merge_all, path_hash, summarize_entries,
)
from iceberg_lineage.config import ALL_COLUMNS, ColumnSelection
from iceberg_lineage.stats.model import (
    ColumnStats, Depth, DEPTHS, FileSizeStats, PartitionCount, SnapshotStats, TableHistory, TableInfo,
    depth_at_least,
)

Executor = cf.Executor


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
# Manifest cache: one read per distinct manifest, thread-safe.
# ----------------------------------------------------------------------------------------------------------------

class ManifestCache:
    """Partials and manifest lists by path. Manifests never change, so a path is read at most once per cache."""

    #: Merged partials kept for children to build on (commit order puts a parent just before its children).
    REDUCTIONS_KEPT = 16

    def __init__(self) -> None:
        self._partials: dict[tuple, Partial] = {}
        self._reductions: dict[tuple, tuple[frozenset[str], Partial]] = {}
        self._lists: dict[str, list[ManifestFile]] = {}
        self._rows: dict[str, ManifestFile] = {}  # manifest list rows by manifest path, shared by all lists
        self._lock = threading.Lock()
        self.manifest_reads = 0
        self.manifest_list_reads = 0

    def manifest_list(self, io: Any, snapshot: Snapshot) -> list[ManifestFile]:
        key = snapshot.manifest_list or f"inline:{snapshot.snapshot_id}"
        with self._lock:
            found = self._lists.get(key)
        if found is not None:
            return found
        rows = manifests_of_snapshot(io, snapshot.manifest_list, snapshot.manifests, self._rows)
        with self._lock:
            self._lists[key] = rows
            if snapshot.manifest_list:  # inline v1 manifests have no row to share
                self.manifest_list_reads += 1
                for row in rows:
                    self._rows.setdefault(row.manifest_path, row)
        return rows

    def reduce(
        self,
        snapshot: Snapshot,
        manifests: list[ManifestFile],
        ctx: PartialContext,
        fetch: Callable[[Iterable[ManifestFile]], Mapping[str, Partial]],
    ) -> Partial:
        """The merged partial of a snapshot's manifests, built on its parent's when the child only adds manifests
        (fast appends): history then costs the new manifests per snapshot, not all of them. ``fetch`` gives the
        partials of some manifests."""
        current = frozenset(m.manifest_path for m in manifests)
        with self._lock:
            parent = self._reductions.get((snapshot.parent_id, ctx.key)) if snapshot.parent_id is not None else None
        if parent is not None and parent[0] <= current:
            new = [m for m in manifests if m.manifest_path not in parent[0]]
            merged = merge_all(fetch(new).values(), base=parent[1])
        else:
            merged = merge_all(fetch(manifests).values())
        with self._lock:
            self._reductions[(snapshot.snapshot_id, ctx.key)] = (current, merged)
            while len(self._reductions) > self.REDUCTIONS_KEPT:
                self._reductions.pop(next(iter(self._reductions)))
        return merged

    def get(self, manifest: ManifestFile, ctx: PartialContext) -> Partial | None:
        with self._lock:
            return self._partials.get((manifest.manifest_path, ctx.key))

    def put(self, manifest: ManifestFile, ctx: PartialContext, partial: Partial) -> None:
        with self._lock:
            self._partials[(manifest.manifest_path, ctx.key)] = partial
            self.manifest_reads += 1


def read_partial(
    io: Any, manifest: ManifestFile, ctx: PartialContext, byte_range: tuple[int, int] | None = None
) -> Partial:
    """The pure map step: one manifest's bytes (or its blocks starting in ``byte_range``) to partial statistics."""
    path = manifest.manifest_path
    try:
        entries = iter_manifest_entries(io, manifest, byte_range)
        return summarize_entries(entries, manifest.partition_spec_id, ctx, path)
    except (KeyError, TypeError, AttributeError) as exc:
        # decodable Avro whose records do not have the shapes the spec requires
        raise ManifestError(f"manifest entry does not match the spec ({type(exc).__name__}: {exc})", file=path) from None


def _partials(
    io: Any, manifests: Iterable[ManifestFile], ctx: PartialContext, cache: ManifestCache, executor: Executor | None
) -> dict[str, Partial]:
    todo: dict[str, ManifestFile] = {}
    out: dict[str, Partial] = {}
    for m in manifests:
        found = cache.get(m, ctx)
        if found is not None:
            out[m.manifest_path] = found
        else:
            todo.setdefault(m.manifest_path, m)
    if not todo:
        return out
    splits = _splits(io, todo.values()) if executor is None else {}
    if splits:
        # large local manifests: their block ranges are decoded by worker processes (decoding holds the GIL)
        pool = _process_pool()
        futures = {
            pool.submit(read_partial, _LocalFiles({m.manifest_path: splits[path][0]}), m, ctx, rng): path
            for path, m in todo.items() if path in splits for rng in splits[path][1]
        }
    if executor is None or len(todo) == 1:
        results = [(m, read_partial(io, m, ctx)) for path, m in todo.items() if path not in splits]
    else:
        local_futures = {executor.submit(read_partial, io, m, ctx): m for m in todo.values()}
        results = [(local_futures[f], f.result()) for f in local_futures]
    if splits:
        pieces: dict[str, Partial] = {}
        for future, path in futures.items():
            piece = future.result()
            pieces[path] = piece if path not in pieces else pieces[path].absorb(piece)
        results += [(todo[path], partial) for path, partial in pieces.items()]
    for m, partial in results:
        cache.put(m, ctx, partial)
        out[m.manifest_path] = partial
    return out


#: Local manifests at least this large are split into block ranges decoded by worker processes.
SPLIT_MIN_BYTES = 4 * 1024 * 1024


class _LocalFiles:
    """The FileIO a worker process gets: plain reads of local files by their (already resolved) paths."""

    def __init__(self, paths: Mapping[str, str]) -> None:
        self._paths = dict(paths)

    def open(self, path: str) -> Any:
        return open(self._paths.get(path, path), "rb")


def _splits(io: Any, manifests: Iterable[ManifestFile]) -> dict[str, tuple[str, list[tuple[int, int]]]]:
    """Byte ranges of the large local manifests, one per CPU: ``{manifest path: (local path, ranges)}``."""
    workers = os.cpu_count() or 1
    resolve = getattr(io, "resolve", None)
    if workers < 2 or resolve is None:
        return {}
    out = {}
    for m in manifests:
        local = local_path(resolve(m.manifest_path))
        if local is None:
            continue
        try:
            size = os.path.getsize(local)
        except OSError:
            continue  # read (and reported) the ordinary way
        if size >= SPLIT_MIN_BYTES:
            cuts = [size * k // workers for k in range(workers + 1)]
            out[m.manifest_path] = (local, list(zip(cuts, cuts[1:])))
    return out


_POOL: list[cf.ProcessPoolExecutor] = []
_POOL_LOCK = threading.Lock()


def _process_pool() -> cf.ProcessPoolExecutor:
    """One pool of worker processes per process, started on first use ("spawn": safe beside threads)."""
    with _POOL_LOCK:
        if not _POOL:
            import atexit
            import multiprocessing

            pool = cf.ProcessPoolExecutor(os.cpu_count() or 1, mp_context=multiprocessing.get_context("spawn"))
            atexit.register(pool.shutdown)  # before interpreter teardown, or its callbacks fail noisily
            _POOL.append(pool)
        return _POOL[0]


# ----------------------------------------------------------------------------------------------------------------
# Column context
# ----------------------------------------------------------------------------------------------------------------

def partial_context(md: TableMetadata, columns: ColumnSelection) -> PartialContext:
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

def _int(summary: Mapping[str, str], key: str) -> int | None:
    v = summary.get(key)
    if v is None:
        return None
    try:
        n = int(v)
    except ValueError:
        return None
    return n if n >= 0 else None


@dataclass
class _Figures:
    values: dict[str, int | None] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)

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


def _from_summary(fig: _Figures, summary: Mapping[str, str]) -> None:
    for name, key in {**_SUMMARY_TOTALS, **_SUMMARY_CHANGES}.items():
        fig.offer(name, _int(summary, key), "summary")
    if fig.values.get("delete_files") == 0:
        # No delete files at all: every delete figure is a known zero.
        for name in ("position_delete_files", "equality_delete_files", "dv_files", "dv_deletes",
                     "delete_files_size_bytes", "position_deletes", "equality_deletes"):
            fig.offer(name, 0, "summary")
        fig.offer("data_files_size_bytes", fig.values.get("total_files_size_bytes"), "summary")
        fig.offer("live_records", fig.values.get("records"), "summary")


def _from_manifest_list(fig: _Figures, manifests: list[ManifestFile], snapshot_id: int) -> None:
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


def _changes(parts: Iterable[Partial], snapshot_id: int) -> tuple[list[int], list[int]]:
    """What this snapshot added and removed, from the entries its manifests record against its id."""
    added, removed = [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]
    for p in parts:
        for total, change in ((added, p.added.get(snapshot_id)), (removed, p.removed.get(snapshot_id))):
            if change:
                for i, v in enumerate(change):
                    total[i] += v
    return added, removed


def _dvs_on_live_files(parts: list[Partial], dv_refs: Mapping[str, int]) -> bool:
    """Whether every DV's referenced data file is live in one of the snapshot's manifests (v3 tables only)."""
    if any(p.live_path_hashes is None for p in parts):
        return False
    return all(any(path_hash(ref) in p.live_path_hashes for p in parts) for ref in dv_refs)


def _from_entries(fig: _Figures, p: Partial, parts: list[Partial], snapshot_id: int) -> None:
    e = "entries"
    fig.offer("data_files", p.data_files, e)
    fig.offer("records", p.records, e)
    fig.offer("data_files_size_bytes", p.data_bytes, e)
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
    fig.offer("added_data_files", added[C_DATA_FILES], e)
    fig.offer("removed_data_files", removed[C_DATA_FILES], e)
    fig.offer("added_delete_files", added[C_DELETE_FILES], e)
    fig.offer("removed_delete_files", removed[C_DELETE_FILES], e)
    fig.offer("added_records", added[C_RECORDS], e)
    fig.offer("removed_records", removed[C_RECORDS], e)
    fig.offer("added_files_size_bytes", added[C_DATA_BYTES] + added[C_DELETE_BYTES], e)
    fig.offer("removed_files_size_bytes", removed[C_DATA_BYTES] + removed[C_DELETE_BYTES], e)
    if p.pos_files == 0 and p.eq_files == 0:
        records = fig.values.get("records")
        if p.dv_files == 0:
            fig.offer("live_records", records, fig.sources.get("records", e))
        elif records is not None and sum(p.dv_refs.values()) == p.dv_rows and _dvs_on_live_files(parts, p.dv_refs):
            # every delete is a DV on a live data file: the deleted rows are exactly its cardinality
            fig.offer("live_records", records - p.dv_rows, e)


def _columns(md: TableMetadata, snapshot: Snapshot, p: Partial, columns: ColumnSelection) -> tuple[dict, tuple[str, ...]]:
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

        def complete(count_slot: int, files_slot: int) -> int | None:
            if col is None or n == 0:
                return 0 if n == 0 else None
            return col[count_slot] if col[files_slot] == n else None

        lo = hi = None
        if col is not None and columns.with_bounds and n:
            # exact when every file has a bound or holds only nulls in this column
            if col[LO_N] + col[ALL_NULL] >= n:
                lo = col[LO]
            if col[HI_N] + col[ALL_NULL] >= n:
                hi = col[HI]
        mode = md.metrics_mode(name)
        out[name] = ColumnStats(
            field_id=f.id,
            name=name,
            type=f.type,
            value_count=complete(V_SUM, V_N),
            null_count=complete(N_SUM, N_N),
            # only floating-point columns can hold NaN; for every other type zero is a fact
            nan_count=complete(NAN_SUM, NAN_N) if f.type in ("float", "double") else 0,
            min=lo,
            max=hi,
            distinct_count=ndv.get(f.id),
            bounds_truncated=f.type in TRUNCATABLE and mode.startswith("truncate") and (lo is not None or hi is not None),
            has_metrics=bool(col and (col[V_N] or col[N_N] or col[NAN_N] or col[LO_N] or col[HI_N])),
        )
    return out, tuple(omitted)


def _file_sizes(p: Partial, threshold: int) -> FileSizeStats:
    return FileSizeStats(
        count=p.data_files,
        min=p.size_min,
        max=p.size_max,
        mean=(p.data_bytes / p.data_files) if p.data_files else None,
        histogram=MappingProxyType(dict(sorted(p.histogram.items()))),
        small_file_threshold=threshold,
        small_files=p.small_files,
    )


def _snapshot_stats(
    table: LoadedTable,
    snapshot: Snapshot,
    refs: Mapping[int, tuple[str, ...]],
    depth: Depth,
    columns: ColumnSelection,
    ctx: PartialContext,
    cache: ManifestCache,
    executor: Executor | None,
) -> SnapshotStats:
    md = table.metadata
    fig = _Figures()
    _from_summary(fig, snapshot.summary)
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
            _from_manifest_list(fig, manifests, snapshot.snapshot_id)
            reached = "manifest_list"
            if depth == "entries":
                def fetch(ms: Iterable[ManifestFile]) -> Mapping[str, Partial]:
                    return _partials(table.io, ms, ctx, cache, executor)

                partial = cache.reduce(snapshot, manifests, ctx, fetch)
                # ADDED and DELETED entries of a snapshot live in the manifests it wrote; DVs need every live path
                own = manifests if partial.dv_files else [
                    m for m in manifests if m.added_snapshot_id in (snapshot.snapshot_id, None)
                ]
                _from_entries(fig, partial, list(fetch(own).values()), snapshot.snapshot_id)
                reached = "entries"
        except ManifestError as exc:
            if not _is_missing(exc) or snapshot.snapshot_id == md.current_snapshot_id:
                raise exc.with_table(table.display_name) from None
            # An expired historical snapshot: keep the summary figures, mark it unavailable.
            available = False
            error = exc.one_line()
    if partial is not None:
        col_stats, omitted = _columns(md, snapshot, partial, columns)
        partitions = tuple(
            PartitionCount(spec, len(partial.partitions.get(spec, ())), partial.partition_files.get(spec, 0))
            for spec in sorted(set(partial.partitions) | {s for s, n in partial.partition_files.items() if n})
        )
        file_sizes = _file_sizes(partial, ctx.small_file_threshold)
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
        columns=MappingProxyType(col_stats),
        columns_omitted=omitted,
        sources=MappingProxyType(dict(fig.sources)),
        summary=snapshot.summary,
        error=error,
        **{name: v.get(name) for name in _FIGURE_NAMES},
    )


_FIGURE_NAMES = (
    "data_files", "records", "data_files_size_bytes", "position_delete_files", "equality_delete_files", "dv_files",
    "delete_files", "position_deletes", "equality_deletes", "dv_deletes", "delete_files_size_bytes",
    "total_files_size_bytes", "added_data_files", "removed_data_files", "added_delete_files", "removed_delete_files",
    "added_records", "removed_records", "added_files_size_bytes", "removed_files_size_bytes", "live_records",
    "data_manifests", "delete_manifests",
)


def _is_missing(exc: ManifestError) -> bool:
    return "not found" in exc.reason


# ----------------------------------------------------------------------------------------------------------------
# Public API
# ----------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class WalkOptions:
    depth: Depth = "entries"
    columns: ColumnSelection = ALL_COLUMNS

    def __post_init__(self) -> None:
        if self.depth not in DEPTHS:
            raise ValueError(f"depth must be one of {', '.join(DEPTHS)}, not {self.depth!r}")


def _executor_or_default(executor: Executor | None, table: LoadedTable) -> tuple[Executor | None, Callable[[], None]]:
    """The caller's executor, else threads for object stores (latency-bound), else none: local reads are
    CPU-bound and the GIL makes threads pure overhead there."""
    if executor is not None:
        return executor, lambda: None
    location = table.metadata.location
    if "://" not in location or location.startswith("file:"):
        return None, lambda: None
    pool = cf.ThreadPoolExecutor(max_workers=8, thread_name_prefix="iceberg-lineage-manifests")
    return pool, lambda: pool.shutdown(wait=True)


def snapshot_stats(
    ref: Any,
    snapshot_id: int | None = None,
    *,
    depth: Depth = "entries",
    columns: ColumnSelection = ALL_COLUMNS,
    executor: Executor | None = None,
    cache: ManifestCache | None = None,
    **open_kwargs: Any,
) -> SnapshotStats:
    """Statistics of one snapshot (the current one by default) of a table reference (see :func:`open_table`)."""
    WalkOptions(depth, columns)
    table = open_table(ref, **open_kwargs)
    md = table.metadata
    sid = snapshot_id if snapshot_id is not None else md.current_snapshot_id
    if sid is None:
        raise IcebergLineageError("table has no snapshot", table=table.display_name, file=md.metadata_location)
    snapshot = md.snapshot_by_id(sid)
    if snapshot is None:
        raise IcebergLineageError(f"no snapshot {sid}", table=table.display_name, file=md.metadata_location)
    pool, close = _executor_or_default(executor, table)
    try:
        return _snapshot_stats(
            table, snapshot, md.refs_by_snapshot(), depth, columns, partial_context(md, columns),
            cache or ManifestCache(), pool,
        )
    finally:
        close()


def table_history(
    ref: Any,
    *,
    depth: Depth = "entries",
    columns: ColumnSelection = ALL_COLUMNS,
    snapshot_ids: Iterable[int] | None = None,
    executor: Executor | None = None,
    cache: ManifestCache | None = None,
    **open_kwargs: Any,
) -> TableHistory:
    """Statistics of every snapshot (or of ``snapshot_ids``) in commit order.

    All distinct manifests of the requested snapshots are read first, once each and in parallel; then every
    snapshot is a cheap reduce over cached partials.
    """
    WalkOptions(depth, columns)
    table = open_table(ref, **open_kwargs)
    md = table.metadata
    wanted = set(snapshot_ids) if snapshot_ids is not None else None
    snapshots = [s for s in md.snapshots_in_commit_order() if wanted is None or s.snapshot_id in wanted]
    cache = cache or ManifestCache()
    ctx = partial_context(md, columns)
    refs = md.refs_by_snapshot()
    pool, close = _executor_or_default(executor, table)
    try:
        if depth == "entries":
            _prefetch(table, snapshots, ctx, cache, pool)
        out = tuple(_snapshot_stats(table, s, refs, depth, columns, ctx, cache, pool) for s in snapshots)
    finally:
        close()
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
        _partials(table.io, distinct.values(), ctx, cache, pool)
    except ManifestError:
        # A missing manifest fails only the snapshots that list it; they are read (and reported) one by one.
        for m in distinct.values():
            try:
                _partials(table.io, [m], ctx, cache, None)
            except ManifestError:
                pass
