"""Per-manifest partial statistics (a pure map over streamed entries) and their merge (a pure reduce).

A manifest never changes, so its partial is computed once and reused by every snapshot that lists it. Memory is
bounded by columns and partitions, never by files: entries are consumed one at a time.
"""
from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

from iceberg_lineage.read.bounds import TRUNCATABLE, BoundDecodeError, Decoder, decoder_for, sort_key, valid_lengths
from iceberg_lineage.errors import ManifestError
from iceberg_lineage.read.manifests import ADDED, DATA, DELETED, EQUALITY_DELETES, EXISTING, POSITION_DELETES
from iceberg_lineage.stats.tallies import ChangeTally, ColumnTally



@dataclass(frozen=True)
class PartialContext:
    """What a partial depends on besides the manifest bytes; the cache key, and plain data so it pickles to
    worker processes.

    ``bound_types`` maps tracked field ids to the Iceberg type their bounds are decoded with, or to ``None`` to
    keep counts only.
    """

    bound_types: tuple[tuple[int, str | None], ...]
    small_file_threshold: int
    collect_paths: bool = False
    #: Count live records per partition (a check's ``partition_skew``); off for everyone else.
    partition_records: bool = False

    @property
    def key(self) -> tuple:
        return (self.bound_types, self.small_file_threshold, self.collect_paths, self.partition_records)

    def decoders(self) -> dict[int, Decoder | None]:
        """Tracked field ids and their bound decoders (``None``: counts only, or a type without bounds)."""
        return _decoders(self.bound_types)

    def bound_plan(self) -> tuple[BoundPlan, ...]:
        """How each bounded column's raw bounds are reduced: worked out once per context, not per manifest (a
        table of one-entry manifests pays this per entry)."""
        return _bound_plan(self.bound_types)


@functools.lru_cache(maxsize=64)
def _decoders(bound_types: tuple[tuple[int, str | None], ...]) -> dict[int, Decoder | None]:
    return {fid: decoder_for(t) if t else None for fid, t in bound_types}


#: A bounded column: its field id, decoder, sort key, valid byte lengths (``None``: any) and whether Iceberg may
#: truncate its bounds (string, binary, fixed: their greatest lower bound is kept too).
BoundPlan = tuple[int, Decoder, Callable[[bytes], Any], "set[int] | None", bool]


def _may_truncate(type_name: str) -> bool:
    return type_name in TRUNCATABLE or type_name.startswith("fixed")


@functools.lru_cache(maxsize=64)
def _bound_plan(bound_types: tuple[tuple[int, str | None], ...]) -> tuple[BoundPlan, ...]:
    types = dict(bound_types)  # a column with a decoder has a type
    return tuple((fid, decoder, sort_key(decoder), valid_lengths(decoder), _may_truncate(types[fid]))
                 for fid, decoder in _decoders(bound_types).items() if decoder is not None)


@dataclass(slots=True)
class Partial:
    """Statistics of the live entries of some manifests, plus the changes recorded in them. Slotted: its figures
    are updated once per manifest entry."""

    data_files: int = 0
    records: int = 0
    data_bytes: int = 0
    pos_files: int = 0
    pos_rows: int = 0
    pos_bytes: int = 0
    eq_files: int = 0
    eq_rows: int = 0
    eq_bytes: int = 0
    dv_files: int = 0
    dv_rows: int = 0
    dv_bytes: int = 0
    size_min: int | None = None
    size_max: int | None = None
    small_files: int = 0
    histogram: dict[int, int] = field(default_factory=dict)
    partitions: dict[int, set] = field(default_factory=dict)
    partition_files: dict[int, int] = field(default_factory=dict)
    #: Live records per (spec id, partition), only when the context asks for them.
    partition_rows: dict[tuple, int] | None = None
    columns: dict[int, ColumnTally] = field(default_factory=dict)
    added: dict[int, ChangeTally] = field(default_factory=dict)
    removed: dict[int, ChangeTally] = field(default_factory=dict)
    dv_refs: dict[str, int] = field(default_factory=dict)
    live_path_hashes: set[bytes] | None = None
    #: The snapshots that added the live data files with bounds: the metrics modes that applied are theirs.
    file_snapshots: set = field(default_factory=set)
    entries: int = 0

    # -- reduce ---------------------------------------------------------------------------------------------------
    def merge(self, other: "Partial") -> "Partial":
        """Fold the live-file statistics of ``other`` into self (a fresh accumulator owned by the caller).

        What a manifest records about changes (``added``, ``removed``) and its live paths stay with the manifest:
        a snapshot reads them from its own manifests, so merged partials never grow with history."""
        # spelled out, not a loop over names: a snapshot of 300 one-entry manifests merges 300 partials
        self.data_files += other.data_files
        self.records += other.records
        self.data_bytes += other.data_bytes
        self.pos_files += other.pos_files
        self.pos_rows += other.pos_rows
        self.pos_bytes += other.pos_bytes
        self.eq_files += other.eq_files
        self.eq_rows += other.eq_rows
        self.eq_bytes += other.eq_bytes
        self.dv_files += other.dv_files
        self.dv_rows += other.dv_rows
        self.dv_bytes += other.dv_bytes
        self.small_files += other.small_files
        self.entries += other.entries
        if other.size_min is not None:
            self.size_min = other.size_min if self.size_min is None else min(self.size_min, other.size_min)
            self.size_max = other.size_max if self.size_max is None else max(self.size_max, other.size_max)
        for k, v in other.histogram.items():
            self.histogram[k] = self.histogram.get(k, 0) + v
        for spec, parts in other.partitions.items():
            self.partitions.setdefault(spec, set()).update(parts)
        for spec, n in other.partition_files.items():
            self.partition_files[spec] = self.partition_files.get(spec, 0) + n
        if other.partition_rows is not None:
            mine = self.partition_rows = self.partition_rows or {}
            for key, rows in other.partition_rows.items():
                mine[key] = mine.get(key, 0) + rows
        for fid, col in other.columns.items():
            mine = self.columns.get(fid)
            if mine is None:
                self.columns[fid] = col.copy()
            else:
                mine.merge(col)
        for path, rows in other.dv_refs.items():
            self.dv_refs[path] = self.dv_refs.get(path, 0) + rows
        self.file_snapshots |= other.file_snapshots
        return self

    def copy(self) -> "Partial":
        return Partial().merge(self)

    def absorb(self, other: "Partial") -> "Partial":
        """Fold in another piece of the same manifest (a block range): everything, changes and paths included."""
        self.merge(other)
        for target, source in ((self.added, other.added), (self.removed, other.removed)):
            for sid, change in source.items():
                mine = target.get(sid)
                target[sid] = change.copy() if mine is None else mine.merge(change)
        if other.live_path_hashes is not None:
            self.live_path_hashes = (self.live_path_hashes or set()) | other.live_path_hashes
        return self


def merge_all(partials: Iterable[Partial], base: Partial | None = None) -> Partial:
    """A fresh partial: ``base`` (copied, untouched) plus ``partials``."""
    out = base.copy() if base is not None else Partial()
    for p in partials:
        out.merge(p)
    return out


def path_hash(path: str) -> bytes:
    """A stable 8-byte digest of a file path (the same in every process, unlike ``hash``)."""
    return hashlib.blake2b(path.encode("utf-8", "surrogatepass"), digest_size=8).digest()


#: Flush buffered bounds every this many entries: C-level ``min``/``max`` over a batch instead of a Python
#: comparison per bound, with memory bounded by the batch.
BOUND_BATCH = 2048


def summarize_entries(entries: Iterator[dict], spec_id: int, ctx: PartialContext, path: str) -> Partial:
    """The partial statistics of one manifest's entries. Pure: entries in, partial out.

    Each entry counts as a live data file, a live delete file, and as a change of the snapshot that wrote it
    (added or removed), as its status and content say; raw bounds are buffered and reduced in batches."""
    p = Partial()
    live = _LiveDataFiles(p, spec_id, ctx, path)
    n_entries = 0
    for entry in entries:
        n_entries += 1
        df = entry["data_file"]
        status = entry["status"]
        content = df.get("content") or DATA
        rc = df["record_count"]
        size = df["file_size_in_bytes"]
        if type(rc) is not int or rc < 0 or rc > 1 << 62 or type(size) is not int or size < 0 or size > 1 << 62:
            raise ManifestError(f"invalid record_count {rc!r} or file_size_in_bytes {size!r}", file=path)
        if content != DATA:
            size = _count_delete_file(p, df, content, status != DELETED, rc, size, path)
        elif status != DELETED:
            live.add(entry, df, rc, size)
        if status != EXISTING:
            changes = p.added if status == ADDED else p.removed
            sid = entry.get("snapshot_id")
            change = changes.get(sid)
            if change is None:
                change = changes[sid] = ChangeTally()
            if content == DATA:
                change.data_files += 1
                change.records += rc
                change.data_bytes += size
            else:
                change.delete_files += 1
                change.delete_bytes += size
    live.finish()
    p.entries = n_entries
    return p


def _count_delete_file(p: Partial, df: dict, content: int, is_live: bool, rc: int, size: int, path: str) -> int:
    """Count a delete file if it is live; its size as a change counts it (a DV's: its blob's, not the Puffin
    file's, which other DVs share)."""
    if content == POSITION_DELETES and str(df.get("file_format", "")).upper() == "PUFFIN":
        size = df.get("content_size_in_bytes")
        if type(size) is not int or size < 0:
            raise ManifestError("deletion vector without content_size_in_bytes", file=path)
        if is_live:
            p.dv_files += 1
            p.dv_rows += rc
            p.dv_bytes += size
            ref = df.get("referenced_data_file")
            if ref:
                p.dv_refs[ref] = p.dv_refs.get(ref, 0) + rc
    elif content == POSITION_DELETES:
        if is_live:
            p.pos_files += 1
            p.pos_rows += rc
            p.pos_bytes += size
    elif content == EQUALITY_DELETES:
        if is_live:
            p.eq_files += 1
            p.eq_rows += rc
            p.eq_bytes += size
    else:
        raise ManifestError(f"unknown data file content {content!r}", file=path)
    return size


class _LiveDataFiles:
    """The live data files of one manifest, folded into its partial: counts and sizes, partitions, paths, and the
    columns' counts; raw bounds are buffered and reduced every :data:`BOUND_BATCH` files (:func:`_flush_bounds`)
    and decoded once at the end."""

    def __init__(self, p: Partial, spec_id: int, ctx: PartialContext, path: str) -> None:
        self.p = p
        self.spec_id = spec_id
        self.path = path
        self.threshold = ctx.small_file_threshold
        decoders = ctx.decoders()
        self.counted = {fid: p.columns.setdefault(fid, ColumnTally()) for fid in decoders}
        self.plan = ctx.bound_plan()
        self.lows: dict[int, list] = {fid: [] for fid, *_ in self.plan}
        self.highs: dict[int, list] = {fid: [] for fid, *_ in self.plan}
        # the raw winning lower bound, upper bound and greatest lower bound of each bounded column
        self.best: dict[int, list] = {fid: [None, None, None] for fid, *_ in self.plan}
        self.parts: set = p.partitions.setdefault(spec_id, set())
        p.partition_rows = {} if ctx.partition_records else None
        p.live_path_hashes = set() if ctx.collect_paths else None
        self.pending = 0

    def add(self, entry: dict, df: dict, rc: int, size: int) -> None:
        p = self.p
        p.data_files += 1
        p.records += rc
        p.data_bytes += size
        if p.size_min is None or size < p.size_min:
            p.size_min = size
        if p.size_max is None or size > p.size_max:
            p.size_max = size
        bucket = 1 << size.bit_length()
        p.histogram[bucket] = p.histogram.get(bucket, 0) + 1
        if size < self.threshold:
            p.small_files += 1
        partition = df.get("partition")
        key = tuple(partition.values()) if partition else ()
        self.parts.add(key)
        if p.partition_rows is not None:
            p.partition_rows[(self.spec_id, key)] = p.partition_rows.get((self.spec_id, key), 0) + rc
        if p.live_path_hashes is not None:
            p.live_path_hashes.add(path_hash(df["file_path"]))
        if not self.counted:
            return
        value_counts = df.get("value_counts") or ()
        _count_columns(df, value_counts, self.counted)
        if self.plan:
            lower = df.get("lower_bounds") or ()
            _buffer(lower, self.lows)
            _buffer(df.get("upper_bounds") or (), self.highs)
            if len(lower) < len(value_counts):
                _count_all_null(df, value_counts, self.counted)
            p.file_snapshots.add(entry.get("snapshot_id"))
            self.pending += 1
            if self.pending == BOUND_BATCH:
                _flush_bounds(self.lows, self.highs, self.best, self.counted, self.plan, self.path)
                self.pending = 0

    def finish(self) -> None:
        """Reduce the last buffered bounds, decode the winners, and count the partitions seen."""
        if self.pending:
            _flush_bounds(self.lows, self.highs, self.best, self.counted, self.plan, self.path)
        counted, best = self.counted, self.best
        for fid, decoder, *_ in self.plan:  # one call per bound that is there: a table of one-entry manifests
            lo_raw, hi_raw, max_lo_raw = best[fid]  # pays this per entry
            col = counted[fid]
            try:
                col.lower = None if lo_raw is None else decoder(lo_raw)
                col.upper = None if hi_raw is None else decoder(hi_raw)
                col.max_lower = None if max_lo_raw is None else decoder(max_lo_raw)
            except (BoundDecodeError, ValueError, OverflowError) as exc:
                raise ManifestError(f"bad bound for field id {fid}: {exc}", file=self.path) from None
        self.p.partition_files[self.spec_id] = self.p.data_files
        if not self.parts:
            del self.p.partitions[self.spec_id]


def _buffer(bounds, buffers: dict[int, list]) -> None:
    """Append a data file's raw bounds to the buffers of the bounded columns."""
    for kv in bounds:
        buf = buffers.get(kv["key"])
        if buf is not None:
            buf.append(kv["value"])


def _count_columns(df: dict, value_counts, counted: dict[int, ColumnTally]) -> None:
    """Fold one data file's value, null and NaN counts into the accumulators (hot path: keep it flat)."""
    for kv in value_counts:
        col = counted.get(kv["key"])
        if col is not None:
            col.values += kv["value"]
            col.value_files += 1
    for kv in df.get("null_value_counts") or ():
        col = counted.get(kv["key"])
        if col is not None:
            col.nulls += kv["value"]
            col.null_files += 1
    for kv in df.get("nan_value_counts") or ():
        col = counted.get(kv["key"])
        if col is not None:
            col.nans += kv["value"]
            col.nan_files += 1


def _count_all_null(df: dict, value_counts, counted: dict[int, ColumnTally]) -> None:
    """Columns that hold only nulls in this file: they need no bound for the aggregate min/max to stay exact.
    Only called for files where some column has no lower bound."""
    nulls = {kv["key"]: kv["value"] for kv in df.get("null_value_counts") or ()}
    bounded = {kv["key"] for kv in df.get("lower_bounds") or ()}
    for kv in value_counts:
        fid = kv["key"]
        col = counted.get(fid)
        if col is not None and fid not in bounded and nulls.get(fid) == kv["value"]:
            col.all_null_files += 1


def _flush_bounds(lows: dict, highs: dict, best: dict, counted: dict, plan: tuple[BoundPlan, ...], path: str) -> None:
    """Reduce buffered raw bounds to the running winners with C-level min/max over order-preserving keys (and the
    greatest lower bound of truncatable types: their raw bytes sort like their values, no key needed)."""
    for fid, _, key, lengths, truncatable in plan:
        winners = best[fid]
        buf = lows[fid]
        if buf:
            winners[0] = _winner(buf, min, winners[0], key, lengths, fid, path)
            if truncatable:
                top = buf[0] if len(buf) == 1 else max(buf)
                winners[2] = top if winners[2] is None else max(winners[2], top)
            counted[fid].lower_files += len(buf)
            buf.clear()
        buf = highs[fid]
        if buf:
            winners[1] = _winner(buf, max, winners[1], key, lengths, fid, path)
            counted[fid].upper_files += len(buf)
            buf.clear()


def _winner(buf: list, pick: Callable, current: bytes | None, key: Callable[[bytes], Any] | None,
            lengths: set[int] | None, fid: int, path: str) -> bytes:
    """The least (``min``) or greatest (``max``) of the buffered raw bounds and the current winner. A lone bound
    and no winner yet (a one-entry manifest, the common case) is only checked, as ``min`` and ``max`` check a lone
    item (its key called once), without their setup."""
    lone = current is None and len(buf) == 1
    if lengths is not None and (len(buf[0]) not in lengths if lone else not set(map(len, buf)) <= lengths):
        bad = next(len(b) for b in buf if len(b) not in lengths)
        raise ManifestError(f"bound of field id {fid} has a wrong length ({bad} bytes)", file=path)
    try:
        if lone:
            if key is not None:
                key(buf[0])
            return buf[0]
        candidate = pick(buf, key=key)
        return candidate if current is None else pick((current, candidate), key=key)
    except (BoundDecodeError, ValueError, OverflowError, TypeError) as exc:
        raise ManifestError(f"bad bound for field id {fid}: {exc}", file=path) from None


__all__ = [
    "Partial",
    "PartialContext",
    "merge_all",
    "path_hash",
    "summarize_entries",
]
