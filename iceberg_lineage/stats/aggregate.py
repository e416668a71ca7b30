"""Per-manifest partial statistics (a pure map over streamed entries) and their merge (a pure reduce).

A manifest never changes, so its partial is computed once and reused by every snapshot that lists it. Memory is
bounded by columns and partitions, never by files: entries are consumed one at a time.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Mapping

from ..bounds import BoundDecodeError, Decoder
from ..errors import ManifestError
from ..manifests import ADDED, DATA, DELETED, EQUALITY_DELETES, POSITION_DELETES

# Column accumulator slots (a list, because this is the per-entry hot path).
V_SUM, V_N, N_SUM, N_N, NAN_SUM, NAN_N, LO, HI, LO_N, HI_N, ANY = range(11)

# Change accumulator slots, per snapshot id.
C_DATA_FILES, C_RECORDS, C_DATA_BYTES, C_DELETE_FILES, C_DELETE_BYTES = range(5)


@dataclass(frozen=True)
class PartialContext:
    """What a partial depends on besides the manifest bytes; part of the cache key.

    ``decoders`` maps tracked field ids to a bound decoder, or to ``None`` to keep counts only.
    """

    decoders: Mapping[int, Decoder | None]
    small_file_threshold: int
    collect_paths: bool = False

    @property
    def key(self) -> tuple:
        return (
            tuple(sorted((k, v is not None) for k, v in self.decoders.items())),
            self.small_file_threshold,
            self.collect_paths,
        )


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
    columns: dict[int, list] = field(default_factory=dict)
    added: dict[int, list] = field(default_factory=dict)
    removed: dict[int, list] = field(default_factory=dict)
    dv_refs: dict[str, int] = field(default_factory=dict)
    live_path_hashes: set[bytes] | None = None
    entries: int = 0

    # -- reduce ---------------------------------------------------------------------------------------------------
    def merge(self, other: "Partial") -> "Partial":
        """Fold ``other`` into self (self is a fresh accumulator owned by the caller)."""
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
        for fid, col in other.columns.items():
            mine = self.columns.get(fid)
            if mine is None:
                self.columns[fid] = list(col)
            else:
                _merge_column(mine, col)
        for target, source in ((self.added, other.added), (self.removed, other.removed)):
            for sid, change in source.items():
                mine = target.get(sid)
                target[sid] = list(change) if mine is None else [a + b for a, b in zip(mine, change)]
        for path, rows in other.dv_refs.items():
            self.dv_refs[path] = self.dv_refs.get(path, 0) + rows
        if other.live_path_hashes is not None:
            if self.live_path_hashes is None:
                self.live_path_hashes = set()
            self.live_path_hashes |= other.live_path_hashes
        return self


def _merge_column(mine: list, col: list) -> None:
    for i in (V_SUM, V_N, N_SUM, N_N, NAN_SUM, NAN_N, LO_N, HI_N):
        mine[i] += col[i]
    if col[LO] is not None and (mine[LO] is None or col[LO] < mine[LO]):
        mine[LO] = col[LO]
    if col[HI] is not None and (mine[HI] is None or col[HI] > mine[HI]):
        mine[HI] = col[HI]
    mine[ANY] = mine[ANY] or col[ANY]


def merge_all(partials: Iterable[Partial]) -> Partial:
    out = Partial()
    for p in partials:
        out.merge(p)
    return out


def path_hash(path: str) -> bytes:
    """A stable 8-byte digest of a file path (the same in every process, unlike ``hash``)."""
    return hashlib.blake2b(path.encode("utf-8", "surrogatepass"), digest_size=8).digest()


def _new_column() -> list:
    return [0, 0, 0, 0, 0, 0, None, None, 0, 0, False]


def summarize_entries(entries: Iterator[dict], spec_id: int, ctx: PartialContext, path: str) -> Partial:
    """The partial statistics of one manifest's entries. Pure: entries in, partial out."""
    p = Partial()
    decoders = ctx.decoders
    tracked = decoders.keys()
    columns = p.columns
    histogram = p.histogram
    threshold = ctx.small_file_threshold
    parts: set = p.partitions.setdefault(spec_id, set())
    hashes: set[bytes] | None = set() if ctx.collect_paths else None
    p.live_path_hashes = hashes
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
        is_dv = content == POSITION_DELETES and str(df.get("file_format", "")).upper() == "PUFFIN"
        if is_dv:
            size = df.get("content_size_in_bytes")
            if type(size) is not int or size < 0:
                raise ManifestError("deletion vector without content_size_in_bytes", file=path)
        if status != DELETED:
            if content == DATA:
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
                parts.add(tuple(partition.values()) if partition else ())
                if hashes is not None:
                    hashes.add(path_hash(df["file_path"]))
                if tracked:
                    _columns_of(df, columns, decoders, rc, path)
            elif is_dv:
                p.dv_files += 1
                p.dv_rows += rc
                p.dv_bytes += size
                ref = df.get("referenced_data_file")
                if ref:
                    p.dv_refs[ref] = p.dv_refs.get(ref, 0) + rc
            elif content == POSITION_DELETES:
                p.pos_files += 1
                p.pos_rows += rc
                p.pos_bytes += size
            elif content == EQUALITY_DELETES:
                p.eq_files += 1
                p.eq_rows += rc
                p.eq_bytes += size
            else:
                raise ManifestError(f"unknown data file content {content!r}", file=path)
        if status == ADDED or status == DELETED:
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
    p.entries = n_entries
    p.partition_files[spec_id] = p.data_files
    if not parts:
        del p.partitions[spec_id]
    return p


def _columns_of(df: dict, columns: dict, decoders: Mapping[int, Decoder | None], rc: int, path: str) -> None:
    """Fold one data file's column metrics into the accumulators (hot path: keep it flat)."""
    seen_value: dict[int, int] = {}
    seen_null: dict[int, int] = {}
    for slot, key in ((V_SUM, "value_counts"), (N_SUM, "null_value_counts"), (NAN_SUM, "nan_value_counts")):
        kvs = df.get(key)
        if not kvs:
            continue
        for kv in kvs:
            fid = kv["key"]
            if fid in decoders:
                col = columns.get(fid)
                if col is None:
                    col = columns[fid] = _new_column()
                v = kv["value"]
                col[slot] += v
                col[slot + 1] += 1
                col[ANY] = True
                if slot == V_SUM:
                    seen_value[fid] = v
                elif slot == N_SUM:
                    seen_null[fid] = v
    for slot, key, is_lower in ((LO, "lower_bounds", True), (HI, "upper_bounds", False)):
        kvs = df.get(key)
        covered: set[int] = set()
        if kvs:
            for kv in kvs:
                fid = kv["key"]
                decode = decoders.get(fid)
                if decode is None:
                    continue
                try:
                    value = decode(kv["value"])
                except (BoundDecodeError, ValueError, OverflowError) as exc:
                    raise ManifestError(f"bad bound for field id {fid}: {exc}", file=path) from None
                col = columns.get(fid)
                if col is None:
                    col = columns[fid] = _new_column()
                col[ANY] = True
                cur = col[slot]
                try:
                    if cur is None or (value < cur if is_lower else value > cur):
                        col[slot] = value
                except TypeError:
                    raise ManifestError(f"bounds of field id {fid} have mixed types", file=path) from None
                covered.add(fid)
        # A file whose column holds only nulls has no bound, and needs none for the min/max to be exact.
        for fid in covered:
            columns[fid][slot + 2] += 1  # LO_N / HI_N
        for fid, v in seen_value.items():
            if fid not in covered and decoders.get(fid) is not None and v == seen_null.get(fid, -1):
                columns[fid][slot + 2] += 1


def partial_key(path: str, ctx: PartialContext) -> tuple:
    return (path, ctx.key)


__all__ = [
    "Partial",
    "PartialContext",
    "merge_all",
    "partial_key",
    "path_hash",
    "summarize_entries",
]
