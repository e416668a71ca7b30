"""The manifest cache, and the map step that fills it: one read per distinct manifest, thread-safe.

Manifests are immutable, so a partial is cached by path and a child snapshot reuses its parent's. Large local
manifests are split into block ranges that worker processes decode side by side.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import Executor
from typing import IO, TYPE_CHECKING, Callable, Iterable, Mapping

from iceberg_lineage.errors import ManifestError
from iceberg_lineage.read.manifests import ManifestFile, iter_manifest_entries, manifests_of_snapshot
from iceberg_lineage.read.metadata import Snapshot
from iceberg_lineage.read.source import local_path
from iceberg_lineage.stats.parallel import EXECUTORS
from iceberg_lineage.stats.partials import Partial, PartialContext, merge_all, summarize_entries

if TYPE_CHECKING:
    from iceberg_lineage.read.manifests import FileOpener
    from iceberg_lineage.read.source import RelocatingIO


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

    def manifest_list(self, io: RelocatingIO, snapshot: Snapshot) -> list[ManifestFile]:
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
    io: FileOpener, manifest: ManifestFile, ctx: PartialContext, byte_range: tuple[int, int] | None = None
) -> Partial:
    """The pure map step: one manifest's bytes (or its blocks starting in ``byte_range``) to partial statistics."""
    path = manifest.manifest_path
    try:
        entries = iter_manifest_entries(io, manifest, byte_range)
        return summarize_entries(entries, manifest.partition_spec_id, ctx, path)
    except (KeyError, TypeError, AttributeError) as exc:
        # decodable Avro whose records do not have the shapes the spec requires
        raise ManifestError(f"manifest entry does not match the spec ({type(exc).__name__}: {exc})", file=path) from None


def fetch_partials(
    io: RelocatingIO, manifests: Iterable[ManifestFile], ctx: PartialContext, cache: ManifestCache,
    executor: Executor | None
) -> dict[str, Partial]:
    """The partials of ``manifests`` by path: cached ones, and the others read once each, on ``executor`` if given,
    else here, with large local manifests split across worker processes."""
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
        pool = EXECUTORS.split_processes()
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

    def open(self, path: str) -> IO[bytes]:
        return open(self._paths.get(path, path), "rb")


def _splits(io: RelocatingIO, manifests: Iterable[ManifestFile]) -> dict[str, tuple[str, list[tuple[int, int]]]]:
    """Byte ranges of the large local manifests, one per CPU: ``{manifest path: (local path, ranges)}``."""
    workers = os.cpu_count() or 1
    resolve = getattr(io, "resolve", None)
    if workers < 2 or resolve is None:
        return {}
    out = {}
    for m in manifests:
        if 0 < m.manifest_length < SPLIT_MIN_BYTES:
            continue  # small by the manifest list's word: no path resolved, no stat (a table of 300 small manifests)
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
