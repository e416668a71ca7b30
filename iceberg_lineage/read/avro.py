"""The Avro object container format: header, data blocks, sync markers, and block ranges of one file.

fastavro's file reader parses the writer schema of every file again; the manifests of one table share a handful of
schemas, so the header is read here and its parsed schema cached by the schema's JSON text. Nothing here knows
Iceberg: the manifest semantics are in :mod:`iceberg_lineage.read.manifests`.
"""
from __future__ import annotations

import bz2
import functools
import io
import json
import lzma
import zlib
from dataclasses import dataclass
from typing import IO, Any, Callable, Hashable, Iterator, TypeVar

import fastavro
from fastavro.read import BLOCK_READERS, LOGICAL_READERS

from iceberg_lineage.config import load_settings
from iceberg_lineage.errors import ManifestError, ManifestTooLargeError
from iceberg_lineage.jsontypes import Json
from iceberg_lineage.read.files import read_bounded

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

AVRO_MAGIC = b"Obj\x01"
_HEADER_SCHEMA = fastavro.parse_schema(
    {
        "type": "record",
        "name": "org.apache.avro.file.Header",
        "fields": [
            {"name": "magic", "type": {"type": "fixed", "name": "Magic", "size": 4}},
            {"name": "meta", "type": {"type": "map", "values": "bytes"}},
            {"name": "sync", "type": {"type": "fixed", "name": "Sync", "size": 16}},
        ],
    }
)
#: Parsed writer schemas by their JSON text. Every manifest of a table and spec carries the same schema, and
#: parsing it is most of fastavro's per-file cost (~0.13 ms of ~0.22 ms for a one-entry manifest).
_PARSED_SCHEMAS: dict[bytes, Json] = {}
_CACHE_LIMIT = 256


@dataclass(frozen=True)
class AvroHeader:
    """An Avro object container header. ``schema_json`` is the writer schema as written: the cache key for
    everything derived from the schema."""

    schema_json: bytes
    schema: Json
    codec: str
    sync: bytes


def cached(cache: dict[K, V], key: K, build: Callable[[], V]) -> V:
    """``cache[key]``, built on a miss; the cache is emptied when full (a handful of distinct schemas is normal)."""
    value = cache.get(key)
    if value is None:
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        value = cache[key] = build()
    return value


#: The bytes of headers already read, up to their sync marker (magic number and metadata), and what they were read
#: as: the manifests of one table repeat them byte for byte, so a file that starts with them has that header (Avro
#: decoding is a function of the bytes it reads) and only its sync marker is new. Reading a header was a tenth of
#: a one-entry manifest's cost.
_KNOWN_HEADERS: dict[bytes, tuple[bytes, Json, str]] = {}
_KNOWN_LIMIT = 16
#: Longer headers are not remembered: every later header read reads as many bytes as the longest one known.
KNOWN_HEADER_BYTES = 64 * 1024


def read_header(stream: IO[bytes], path: str) -> AvroHeader:
    """Read the container header, checking what fastavro does not: the magic number."""
    seekable = stream.seekable()
    if seekable:
        start = stream.tell()
        known_headers = tuple(_KNOWN_HEADERS.items())  # a copy: manifest threads add to it
        if known_headers:
            head = stream.read(max(len(known) for known, _ in known_headers) + 16)
            for known, (schema_json, schema, codec) in known_headers:
                end = len(known)
                if len(head) >= end + 16 and head.startswith(known):
                    stream.seek(start + end + 16)
                    return AvroHeader(schema_json, schema, codec, head[end : end + 16])
            stream.seek(start)
    header = _read_header(stream, path)
    if seekable and (end := stream.tell() - 16) - start <= KNOWN_HEADER_BYTES:
        stream.seek(start)
        if len(_KNOWN_HEADERS) >= _KNOWN_LIMIT:
            _KNOWN_HEADERS.clear()
        _KNOWN_HEADERS[stream.read(end - start)] = (header.schema_json, header.schema, header.codec)
        stream.seek(end + 16)
    return header


def _read_header(stream: IO[bytes], path: str) -> AvroHeader:
    """A header not seen before, decoded by fastavro."""
    try:
        header = fastavro.schemaless_reader(stream, _HEADER_SCHEMA, None)
    except Exception as exc:  # noqa: BLE001 - truncated or garbled header
        raise ManifestError(f"not a readable Avro file ({type(exc).__name__}: {exc})", file=path) from None
    if header["magic"] != AVRO_MAGIC:
        raise ManifestError("not a readable Avro file (bad magic number)", file=path)
    meta = header["meta"]
    schema_json = meta.get("avro.schema")
    if schema_json is None:
        raise ManifestError("not a readable Avro file (no avro.schema in the header)", file=path)
    try:
        schema = cached(_PARSED_SCHEMAS, schema_json, lambda: _parse_writer_schema(schema_json))
        codec = meta.get("avro.codec", b"null").decode() or "null"
    except Exception as exc:  # noqa: BLE001 - invalid JSON, invalid schema, undecodable codec name
        raise ManifestError(f"not a readable Avro file ({type(exc).__name__}: {exc})", file=path) from None
    if codec not in BLOCK_READERS:
        raise ManifestError(f"not a readable Avro file (unknown codec {codec!r})", file=path)
    return AvroHeader(schema_json, schema, codec, header["sync"])


def inert_logical_types(schema: Json) -> Json:
    """The schema without the logical types fastavro has no reader for (Iceberg's ``"logicalType": "map"`` on the
    arrays of key/value records): they decode to the same values, but fastavro looks each one up again for every
    value it reads (six maps per manifest entry)."""
    if isinstance(schema, list):
        return [inert_logical_types(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: inert_logical_types(v) if k in ("type", "fields", "items", "values") else v for k, v in schema.items()}
    kind, logical = out.get("type"), out.get("logicalType")
    if logical is not None and isinstance(kind, str) and f"{kind}-{logical}" not in LOGICAL_READERS:
        del out["logicalType"]
    return out


def _parse_writer_schema(schema_json: bytes) -> Json:
    return fastavro.parse_schema(inert_logical_types(json.loads(schema_json)))


#: Manifests up to this size are read whole before decoding: a buffered file pays a method call per small read.
IN_MEMORY_BYTES = 4 * 1024 * 1024


def in_memory(stream: IO[bytes], length: int) -> IO[bytes]:
    """The stream's bytes in memory when the manifest list says the file is small, else the stream itself."""
    if 0 < length <= IN_MEMORY_BYTES:
        data = stream.read(length + 1)  # not more: a read allocates its whole size up front
        if len(data) <= length:
            return io.BytesIO(data)
        stream.seek(0)  # the manifest list understated the size: stream it after all
    return stream


def _read_long(stream: IO[bytes]) -> int | None:
    """A zig-zag varint, or ``None`` at a clean end of file."""
    byte = stream.read(1)
    if not byte:
        return None
    b = byte[0]
    value, shift = b & 0x7F, 7
    while b & 0x80:
        byte = stream.read(1)
        if not byte or shift > 63:
            raise EOFError("truncated block header")
        b = byte[0]
        value |= (b & 0x7F) << shift
        shift += 7
    return (value >> 1) ^ -(value & 1)


def iter_records(stream: IO[bytes], header: AvroHeader, path: str) -> Iterator[dict]:
    """Decode the data blocks one at a time (memory is one block), with the header's already-parsed schema."""
    schema, sync, codec, cap = header.schema, header.sync, header.codec, max_block_bytes()
    decode = fastavro.schemaless_reader
    try:
        while (count := _read_long(stream)) is not None:
            block = _read_block(stream, count, codec, cap, path)
            for _ in range(count):
                yield decode(block, schema, None)
            if stream.read(16) != sync:
                raise ValueError("sync marker mismatch")
    except ManifestTooLargeError:
        raise
    except Exception as exc:  # noqa: BLE001 - truncated blocks, flipped bits, schema mismatch
        raise ManifestError(f"corrupt Avro data ({type(exc).__name__}: {exc})", file=path) from None


#: On top of ``manifest.max_block_bytes``, a block may inflate to at most this much per declared record.
MAX_BYTES_PER_RECORD = 1 << 20


@functools.lru_cache(maxsize=1)
def max_block_bytes() -> int:
    """``manifest.max_block_bytes``, resolved once per process (pool workers inherit the environment)."""
    return load_settings().manifest.max_block_bytes


def _read_block(stream: IO[bytes], count: int, codec: str, cap: int, path: str) -> io.BytesIO:
    """One block's records, inflated incrementally up to the cap; past it a :class:`ManifestTooLargeError`.

    Every record takes at least one byte, so a block declaring more records than it holds bytes is corrupt (it
    would otherwise decode millions of empty records from a few bytes)."""
    if count < 0:
        raise ValueError(f"negative block count {count}")
    limit = min(cap, count * MAX_BYTES_PER_RECORD)
    inflate = INFLATERS.get(codec)
    if inflate is None:  # an unknown codec: fastavro's table names the missing library
        block = BLOCK_READERS[codec](stream)
        size = block.seek(0, io.SEEK_END)
        block.seek(0)
    else:
        stored = _read_long(stream)
        if stored is None or stored < 0:
            raise ValueError(f"bad block size {stored}")
        if stored > cap:
            raise _too_large(count, limit, cap, path)
        data = read_bounded(stream, stored)  # not read(stored): that allocates it all up front
        if len(data) < stored:
            raise EOFError(f"truncated block: {len(data)} of {stored} bytes")
        try:
            data = inflate(data, limit)
        except _OverLimit:
            raise _too_large(count, limit, cap, path) from None
        size = len(data)
        block = io.BytesIO(data)
    if size > limit:
        raise _too_large(count, limit, cap, path)
    if count > size:
        raise ValueError(f"block declares {count} records in {size} bytes")
    return block


def _too_large(count: int, limit: int, cap: int, path: str) -> ManifestTooLargeError:
    return ManifestTooLargeError(
        f"an Avro block of {count} record(s) takes more than {limit} bytes (manifest.max_block_bytes is {cap}, "
        f"and a record may take at most {MAX_BYTES_PER_RECORD} bytes)",
        file=path,
    )


def _inflate_streams(make: Callable[[], Any], data: bytes, limit: int) -> bytes:
    """Inflate concatenated bzip2 or xz streams, at most ``limit + 1`` bytes of output (enough to see it is over)."""
    out: list[bytes] = []
    total = 0
    while data:
        decompressor = make()
        part = decompressor.decompress(data, max_length=limit + 1 - total)
        out.append(part)
        total += len(part)
        if total > limit:
            break
        if not decompressor.eof:
            raise EOFError("truncated compressed block")
        data = decompressor.unused_data
    return b"".join(out)


class _OverLimit(Exception):
    """A block's own header declares more inflated bytes than the limit: refused before inflating."""


def _inflate_zstd(data: bytes, limit: int) -> bytes:
    """Concatenated zstd frames, at most ``limit + 1`` bytes, through ``zstandard`` (a PyIceberg dependency; fastavro
    itself needs ``backports.zstd`` for this codec)."""
    import zstandard

    out, total = [], 0
    with zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True) as reader:
        while total <= limit:
            part = reader.read(limit + 1 - total)
            if not part:
                break
            out.append(part)
            total += len(part)
    return b"".join(out)


def _declared_snappy(data: bytes) -> int:
    """The uncompressed length a raw snappy block declares (its leading varint)."""
    length = shift = 0
    for byte in data[:5]:
        length |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return length
        shift += 7
    raise ValueError("bad snappy length")


def _checked(declared: Callable[[bytes], int], inflate: Callable[[bytes], bytes]) -> Callable[[bytes, int], bytes]:
    """For codecs whose blocks state their inflated size (snappy, lz4): the size is checked before inflating."""

    def run(data: bytes, limit: int) -> bytes:
        if declared(data) > limit:
            raise _OverLimit
        return inflate(data)

    return run


def _optional_inflaters() -> dict[str, Callable[[bytes, int], bytes]]:
    """snappy (Avro: raw snappy, then a CRC32) and lz4 (a block with its size in 4 leading bytes), each only where
    its library is installed; otherwise fastavro's table reports the missing library."""
    found: dict[str, Callable[[bytes, int], bytes]] = {}
    try:
        from cramjam import snappy as cramjam_snappy

        found["snappy"] = _checked(_declared_snappy, lambda d: bytes(cramjam_snappy.decompress_raw(d[:-4])))
    except ImportError:
        pass
    try:
        import lz4.block

        found["lz4"] = _checked(lambda d: int.from_bytes(d[:4], "little"), lz4.block.decompress)
    except ImportError:
        pass
    return found


#: Inflaters by codec: ``(stored bytes, limit) -> at most limit + 1 inflated bytes`` (or :class:`_OverLimit`).
INFLATERS: dict[str, Callable[[bytes, int], bytes]] = {
    "null": lambda data, limit: data,
    # -15: raw deflate, no zlib header, as Avro writes it
    "deflate": lambda data, limit: zlib.decompressobj(-15).decompress(data, limit + 1),
    "bzip2": lambda data, limit: _inflate_streams(bz2.BZ2Decompressor, data, limit),
    "xz": lambda data, limit: _inflate_streams(lzma.LZMADecompressor, data, limit),
    "zstandard": _inflate_zstd,
    **_optional_inflaters(),
}


def block_range(stream: IO[bytes], byte_range: tuple[int, int], path: str) -> IO[bytes]:
    """A stream of the header plus the blocks that start inside ``byte_range`` (a seekable stream).

    Avro blocks end with the file's 16-byte sync marker, so block starts are found by searching for it, as
    Hadoop splits Avro files: several workers can then decode one large manifest, each its own blocks, each
    reading only its own bytes.
    """
    sync = read_header(stream, path).sync
    header_end = stream.tell()
    stream.seek(0)
    header = stream.read(header_end)

    def block_start(offset: int) -> int:
        if offset <= header_end:
            return header_end
        stream.seek(offset - 16)
        position, tail = offset - 16, b""
        while True:
            chunk = stream.read(1 << 20)
            if not chunk:
                return position + len(tail)  # end of file
            window = tail + chunk
            found = window.find(sync)
            if found >= 0:
                return position + found + 16
            position += len(window) - 15
            tail = window[-15:]

    lo, hi = byte_range
    start, end = block_start(lo), block_start(hi)
    stream.seek(start)
    return io.BytesIO(header + stream.read(max(0, end - start)))
