"""Per-manifest partial statistics (a pure map over streamed entries) and their merge (a pure reduce).

A manifest never changes, so its partial is computed once and reused by every snapshot that lists it. Memory is
bounded by columns and partitions, never by files: entries are consumed one at a time.
"""
from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from iceberg_lineage.read.bounds import TRUNCATABLE, BoundDecodeError, Decoder, decoder_for, sort_key, valid_lengths
from iceberg_lineage.errors import ManifestError
from iceberg_lineage.read.manifests import ADDED, DATA, DELETED, EQUALITY_DELETES, EXISTING, POSITION_DELETES

# Column accumulator slots (a list, because this is the per-entry hot path). ``MAX_LO`` is the greatest lower
# bound, kept for types Iceberg may truncate: an upper bound equal to it is a value, so it is exact.
V_SUM, V_N, N_SUM, N_N, NAN_SUM, NAN_N, LO, HI, LO_N, HI_N, ALL_NULL, MAX_LO = range(12)

# Change accumulator slots, per snapshot id.
C_DATA_FILES, C_RECORDS, C_DATA_BYTES, C_DELETE_FILES, C_DELETE_BYTES = range(5)


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

    def truncatable(self) -> frozenset[int]:
        """Field ids with bounds Iceberg may truncate (string, binary, fixed)."""
        return _truncatable(self.bound_types)


@functools.lru_cache(maxsize=64)
def _decoders(bound_types: tuple[tuple[int, str | None], ...]) -> dict[int, Decoder | None]:
    return {fid: decoder_for(t) if t else None for fid, t in bound_types}


@functools.lru_cache(maxsize=64)
def _truncatable(bound_types: tuple[tuple[int, str | None], ...]) -> frozenset[int]:
    return frozenset(fid for fid, t in bound_types if t and (t in TRUNCATABLE or t.startswith("fixed")))


@dataclass
class Partial:
    """Statistics of the live entries of some manifests, plus the changes recorded in them."""

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
    columns: dict[int, list] = field(default_factory=dict)
    added: dict[int, list] = field(default_factory=dict)
    removed: dict[int, list] = field(default_factory=dict)
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
        for name in (
            "data_files", "records", "data_bytes", "pos_files", "pos_rows", "pos_bytes", "eq_files", "eq_rows",
            "eq_bytes", "dv_files", "dv_rows", "dv_bytes", "small_files", "entries",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
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
                self.columns[fid] = list(col)
            else:
                _merge_column(mine, col)
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
                target[sid] = list(change) if mine is None else [a + b for a, b in zip(mine, change)]
        if other.live_path_hashes is not None:
            self.live_path_hashes = (self.live_path_hashes or set()) | other.live_path_hashes
        return self


def _merge_column(mine: list, col: list) -> None:
    for i in (V_SUM, V_N, N_SUM, N_N, NAN_SUM, NAN_N, LO_N, HI_N, ALL_NULL):
        mine[i] += col[i]
    if col[LO] is not None and (mine[LO] is None or col[LO] < mine[LO]):
        mine[LO] = col[LO]
    if col[HI] is not None and (mine[HI] is None or col[HI] > mine[HI]):
        mine[HI] = col[HI]
    if col[MAX_LO] is not None and (mine[MAX_LO] is None or col[MAX_LO] > mine[MAX_LO]):
        mine[MAX_LO] = col[MAX_LO]


def merge_all(partials: Iterable[Partial], base: Partial | None = None) -> Partial:
    """A fresh partial: ``base`` (copied, untouched) plus ``partials``."""
    out = base.copy() if base is not None else Partial()
    for p in partials:
        out.merge(p)
    return out


def path_hash(path: str) -> bytes:
    """A stable 8-byte digest of a file path (the same in every process, unlike ``hash``)."""
    return hashlib.blake2b(path.encode("utf-8", "surrogatepass"), digest_size=8).digest()


def _new_column() -> list:
    return [0, 0, 0, 0, 0, 0, None, None, 0, 0, 0, None]


#: Flush buffered bounds every this many entries: C-level ``min``/``max`` over a batch instead of a Python
#: comparison per bound, with memory bounded by the batch.
BOUND_BATCH = 2048


def summarize_entries(entries: Iterator[dict], spec_id: int, ctx: PartialContext, path: str) -> Partial:
    """The partial statistics of one manifest's entries. Pure: entries in, partial out."""
    p = Partial()
    columns = p.columns
    decoders = ctx.decoders()
    counted = {fid: columns.setdefault(fid, _new_column()) for fid in decoders}
    bounded = {fid: decoder for fid, decoder in decoders.items() if decoder is not None}
    lows: dict[int, list] = {fid: [] for fid in bounded}
    highs: dict[int, list] = {fid: [] for fid in bounded}
    best: dict[int, list] = {fid: [None, None, None] for fid in bounded}  # raw winning lower / upper / greatest lower
    truncatable = ctx.truncatable()
    file_snapshots = p.file_snapshots
    histogram = p.histogram
    threshold = ctx.small_file_threshold
    parts: set = p.partitions.setdefault(spec_id, set())
    part_rows: dict[tuple, int] | None = {} if ctx.partition_records else None
    p.partition_rows = part_rows
    hashes: set[bytes] | None = set() if ctx.collect_paths else None
    p.live_path_hashes = hashes
    n_entries = 0
    pending = 0
    for entry in entries:
        n_entries += 1
        df = entry["data_file"]
        status = entry["status"]
        content = df.get("content") or DATA
        rc = df["record_count"]
        size = df["file_size_in_bytes"]
        if type(rc) is not int or rc < 0 or rc > 1 << 62 or type(size) is not int or size < 0 or size > 1 << 62:
            raise ManifestError(f"invalid record_count {rc!r} or file_size_in_bytes {size!r}", file=path)
        if content == DATA:
            if status != DELETED:
                p.data_files += 1
                p.records += rc
                p.data_bytes += size
                if p.size_min is None or size < p.size_min:
                    p.size_min = size
                if p.size_max is None or size > p.size_max:
                    p.size_max = size
                bucket = 1 << size.bit_length()
                histogram[bucket] = histogram.get(bucket, 0) + 1
                if size < threshold:
                    p.small_files += 1
                partition = df.get("partition")
                key = tuple(partition.values()) if partition else ()
                parts.add(key)
                if part_rows is not None:
                    part_rows[(spec_id, key)] = part_rows.get((spec_id, key), 0) + rc
                if hashes is not None:
                    hashes.add(path_hash(df["file_path"]))
                if counted:
                    value_counts = df.get("value_counts") or ()
                    _count_columns(df, value_counts, counted)
                    if bounded:
                        lower = df.get("lower_bounds") or ()
                        for kv in lower:
                            buf = lows.get(kv["key"])
                            if buf is not None:
                                buf.append(kv["value"])
                        for kv in df.get("upper_bounds") or ():
                            buf = highs.get(kv["key"])
                            if buf is not None:
                                buf.append(kv["value"])
                        if len(lower) < len(value_counts):
                            _count_all_null(df, value_counts, counted)
                        file_snapshots.add(entry.get("snapshot_id"))
                        pending += 1
                        if pending == BOUND_BATCH:
                            _flush_bounds(lows, highs, best, counted, bounded, truncatable, path)
                            pending = 0
        else:
            if content == POSITION_DELETES and str(df.get("file_format", "")).upper() == "PUFFIN":
                size = df.get("content_size_in_bytes")  # a DV: its blob, not the shared Puffin file
                if type(size) is not int or size < 0:
                    raise ManifestError("deletion vector without content_size_in_bytes", file=path)
                if status != DELETED:
                    p.dv_files += 1
                    p.dv_rows += rc
                    p.dv_bytes += size
                    ref = df.get("referenced_data_file")
                    if ref:
                        p.dv_refs[ref] = p.dv_refs.get(ref, 0) + rc
            elif content == POSITION_DELETES:
                if status != DELETED:
                    p.pos_files += 1
                    p.pos_rows += rc
                    p.pos_bytes += size
            elif content == EQUALITY_DELETES:
                if status != DELETED:
                    p.eq_files += 1
                    p.eq_rows += rc
                    p.eq_bytes += size
            else:
                raise ManifestError(f"unknown data file content {content!r}", file=path)
        if status != EXISTING:
            target = p.added if status == ADDED else p.removed
            sid = entry.get("snapshot_id")
            change = target.get(sid)
            if change is None:
                change = target[sid] = [0, 0, 0, 0, 0]
            if content == DATA:
                change[C_DATA_FILES] += 1
                change[C_RECORDS] += rc
                change[C_DATA_BYTES] += size
            else:
                change[C_DELETE_FILES] += 1
                change[C_DELETE_BYTES] += size
    if pending:
        _flush_bounds(lows, highs, best, counted, bounded, truncatable, path)
    for fid, (lo_raw, hi_raw, max_lo_raw) in best.items():
        col = counted[fid]
        col[LO] = _decode(bounded[fid], lo_raw, fid, path)
        col[HI] = _decode(bounded[fid], hi_raw, fid, path)
        col[MAX_LO] = _decode(bounded[fid], max_lo_raw, fid, path)
    p.entries = n_entries
    p.partition_files[spec_id] = p.data_files
    if not parts:
        del p.partitions[spec_id]
    return p


def _count_columns(df: dict, value_counts, counted: dict[int, list]) -> None:
    """Fold one data file's value, null and NaN counts into the accumulators (hot path: keep it flat)."""
    for kv in value_counts:
        col = counted.get(kv["key"])
        if col is not None:
            col[V_SUM] += kv["value"]
            col[V_N] += 1
    for kv in df.get("null_value_counts") or ():
        col = counted.get(kv["key"])
        if col is not None:
            col[N_SUM] += kv["value"]
            col[N_N] += 1
    for kv in df.get("nan_value_counts") or ():
        col = counted.get(kv["key"])
        if col is not None:
            col[NAN_SUM] += kv["value"]
            col[NAN_N] += 1


def _count_all_null(df: dict, value_counts, counted: dict[int, list]) -> None:
    """Columns that hold only nulls in this file: they need no bound for the aggregate min/max to stay exact.
    Only called for files where some column has no lower bound."""
    nulls = {kv["key"]: kv["value"] for kv in df.get("null_value_counts") or ()}
    bounded = {kv["key"] for kv in df.get("lower_bounds") or ()}
    for kv in value_counts:
        fid = kv["key"]
        col = counted.get(fid)
        if col is not None and fid not in bounded and nulls.get(fid) == kv["value"]:
            col[ALL_NULL] += 1


def _flush_bounds(
    lows: dict, highs: dict, best: dict, counted: dict, bounded: dict, truncatable: frozenset[int], path: str
) -> None:
    """Reduce buffered raw bounds to the running winners with C-level min/max over order-preserving keys (and the
    greatest lower bound of truncatable types: their raw bytes sort like their values, no key needed)."""
    for fid, decoder in bounded.items():
        key = sort_key(decoder)
        lengths = valid_lengths(decoder)
        winners = best[fid]
        for i, (buffers, pick) in enumerate(((lows, min), (highs, max))):
            buf = buffers[fid]
            if not buf:
                continue
            if lengths is not None and not set(map(len, buf)) <= lengths:
                bad = next(len(b) for b in buf if len(b) not in lengths)
                raise ManifestError(f"bound of field id {fid} has a wrong length ({bad} bytes)", file=path)
            try:
                candidate = pick(buf, key=key) if key is not None else pick(buf)
                current = winners[i]
                if current is not None:
                    candidate = pick((current, candidate), key=key) if key is not None else pick(current, candidate)
            except (BoundDecodeError, ValueError, OverflowError, TypeError) as exc:
                raise ManifestError(f"bad bound for field id {fid}: {exc}", file=path) from None
            winners[i] = candidate
            if i == 0 and fid in truncatable:
                top = max(buf)
                winners[2] = top if winners[2] is None else max(winners[2], top)
            counted[fid][LO_N + i] += len(buf)
            buf.clear()


def _decode(decoder: Decoder, raw: bytes | None, fid: int, path: str):
    if raw is None:
        return None
    try:
        return decoder(raw)
    except (BoundDecodeError, ValueError, OverflowError) as exc:
        raise ManifestError(f"bad bound for field id {fid}: {exc}", file=path) from None


__all__ = [
    "Partial",
    "PartialContext",
    "merge_all",
    "path_hash",
    "summarize_entries",
]
