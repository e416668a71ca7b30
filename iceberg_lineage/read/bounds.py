"""Decode Iceberg single-value binary serialization (spec Appendix D) into typed Python values.

Type promotion does not rewrite old bounds, so the type a bound was written with is inferred from its byte length
(long+4 bytes was an int, double+4 a float, timestamp+4 a date). Decoders are built once per type and reused for
every entry: this sits on the per-entry hot path.
"""
from __future__ import annotations

import datetime as dt
import decimal
import functools
import re
import struct
import uuid
from dataclasses import dataclass
from typing import Any, Callable

Decoder = Callable[[bytes], Any]

_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_TZ = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_INT = struct.Struct("<i").unpack
_LONG = struct.Struct("<q").unpack
_FLOAT = struct.Struct("<f").unpack
_DOUBLE = struct.Struct("<d").unpack
_DECIMAL_RE = re.compile(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)")

#: Types whose bounds Iceberg may truncate under the ``truncate(N)`` metrics mode.
TRUNCATABLE = ("string", "binary")


class BoundDecodeError(ValueError):
    """A bound whose length does not fit its column type."""


def _int(b: bytes) -> int:
    if len(b) != 4:
        raise BoundDecodeError(f"int bound of {len(b)} bytes")
    return _INT(b)[0]


def _long(b: bytes) -> int:
    if len(b) == 8:
        return _LONG(b)[0]
    if len(b) == 4:  # promoted from int
        return _INT(b)[0]
    raise BoundDecodeError(f"long bound of {len(b)} bytes")


def _float(b: bytes) -> float:
    if len(b) != 4:
        raise BoundDecodeError(f"float bound of {len(b)} bytes")
    return _FLOAT(b)[0]


def _double(b: bytes) -> float:
    if len(b) == 8:
        return _DOUBLE(b)[0]
    if len(b) == 4:  # promoted from float
        return _FLOAT(b)[0]
    raise BoundDecodeError(f"double bound of {len(b)} bytes")


def _date(b: bytes) -> dt.date:
    return _EPOCH_DATE + dt.timedelta(days=_int(b))


def _time(b: bytes) -> dt.time:
    micros = _long(b)
    if not 0 <= micros < 86_400_000_000:
        raise BoundDecodeError(f"time bound {micros} out of range")
    secs, us = divmod(micros, 1_000_000)
    h, rem = divmod(secs, 3600)
    m, s = divmod(rem, 60)
    return dt.time(h, m, s, us)


def _timestamp_decoder(epoch: dt.datetime) -> Decoder:
    def decode(b: bytes) -> dt.datetime:
        if len(b) == 4:  # promoted from date: days
            return epoch + dt.timedelta(days=_INT(b)[0])
        if len(b) != 8:
            raise BoundDecodeError(f"timestamp bound of {len(b)} bytes")
        try:
            return epoch + dt.timedelta(microseconds=_LONG(b)[0])
        except OverflowError:
            raise BoundDecodeError("timestamp bound out of range") from None

    return decode


@dataclass(frozen=True, order=True)
class NanoTimestamp:
    """A ``timestamp_ns`` / ``timestamptz_ns`` bound in whole nanoseconds since the epoch: ``datetime`` holds
    microseconds only, and a maximum cut to them is below the real maximum, so no longer an upper bound."""

    nanos: int
    utc: bool = False

    def isoformat(self) -> str:
        """ISO-8601 with all 9 fractional digits (``+00:00`` for ``timestamptz_ns``)."""
        seconds, fraction = divmod(self.nanos, 1_000_000_000)
        whole = (_EPOCH + dt.timedelta(seconds=seconds)).isoformat()
        return f"{whole}.{fraction:09d}{'+00:00' if self.utc else ''}"

    __str__ = isoformat


_NANOS_PER_DAY = 86_400 * 1_000_000_000


def _nanos(b: bytes) -> int:
    """Nanoseconds since the epoch of a raw ``timestamp_ns`` bound (4 bytes: promoted from date, in days)."""
    if len(b) == 8:
        return _LONG(b)[0]
    if len(b) == 4:
        return _INT(b)[0] * _NANOS_PER_DAY
    raise BoundDecodeError(f"timestamp bound of {len(b)} bytes")


def _nano_timestamp_decoder(utc: bool) -> Decoder:
    def decode(b: bytes) -> NanoTimestamp:
        value = NanoTimestamp(_nanos(b), utc)
        try:
            value.isoformat()  # a date promoted to nanoseconds may lie outside years 1..9999
        except OverflowError:
            raise BoundDecodeError("timestamp bound out of range") from None
        return value

    decode.sort_key, decode.lengths = _nanos, {4, 8}  # type: ignore[attr-defined]
    return decode


def _string(b: bytes) -> str:
    return b.decode("utf-8", "replace")


def _uuid(b: bytes) -> uuid.UUID:
    if len(b) != 16:
        raise BoundDecodeError(f"uuid bound of {len(b)} bytes")
    return uuid.UUID(bytes=bytes(b))


def _binary(b: bytes) -> bytes:
    return bytes(b)


def _boolean(b: bytes) -> bool:
    if len(b) != 1:
        raise BoundDecodeError(f"boolean bound of {len(b)} bytes")
    return b != b"\x00"


def _decimal_decoder(scale: int) -> Decoder:
    def decode(b: bytes) -> decimal.Decimal:
        if not b or len(b) > 16:
            raise BoundDecodeError(f"decimal bound of {len(b)} bytes")
        # Exact at any precision: Decimal arithmetic (scaleb too) would round to the context's 28 digits.
        sign, digits, _ = decimal.Decimal(int.from_bytes(b, "big", signed=True)).as_tuple()
        return decimal.Decimal((sign, digits, -scale))

    decode.sort_key, decode.lengths = _BE, set(range(1, 17))  # type: ignore[attr-defined]
    return decode


_DECODERS: dict[str, Decoder] = {
    "boolean": _boolean,
    "int": _int,
    "long": _long,
    "float": _float,
    "double": _double,
    "date": _date,
    "time": _time,
    "timestamp": _timestamp_decoder(_EPOCH),
    "timestamptz": _timestamp_decoder(_EPOCH_TZ),
    "timestamp_ns": _nano_timestamp_decoder(utc=False),
    "timestamptz_ns": _nano_timestamp_decoder(utc=True),
    "string": _string,
    "uuid": _uuid,
    "binary": _binary,
}


_LE = functools.partial(int.from_bytes, byteorder="little", signed=True)
_BE = functools.partial(int.from_bytes, byteorder="big", signed=True)

# Order-preserving comparison keys on raw bounds (C-level where the byte layout allows), and the byte lengths a
# bound of each type may have (promotion included). ``None`` key: the raw bytes already sort like the values
# (UTF-8 strings, binary, big-endian uuid, boolean).
for _decoder, _key, _lengths in (
    (_boolean, None, {1}),
    (_int, _LE, {4}),
    (_long, _LE, {4, 8}),
    (_float, struct.Struct("<f").unpack, {4}),
    (_double, _double, {4, 8}),
    (_date, _LE, {4}),
    (_time, _LE, {8}),
    (_string, None, None),
    (_uuid, None, {16}),
    (_binary, None, None),
):
    _decoder.sort_key, _decoder.lengths = _key, _lengths  # type: ignore[attr-defined]
for _name in ("timestamp", "timestamptz"):
    _DECODERS[_name].sort_key, _DECODERS[_name].lengths = _DECODERS[_name], {4, 8}  # type: ignore[attr-defined]


def sort_key(decoder: Decoder) -> Callable[[bytes], Any] | None:
    """A function mapping raw bounds of this decoder's type to keys that sort like the values."""
    return getattr(decoder, "sort_key", decoder)


def valid_lengths(decoder: Decoder) -> set[int] | None:
    """Byte lengths a bound may have (``None``: any)."""
    return getattr(decoder, "lengths", None)


def decoder_for(type_name: str) -> Decoder | None:
    """The decoder of a primitive type string, or ``None`` when the type has no single-value form (struct, list,
    map, variant, geometry, unknown)."""
    found = _DECODERS.get(type_name)
    if found is not None:
        return found
    m = _DECIMAL_RE.fullmatch(type_name)
    if m:
        return _decimal_decoder(int(m.group(2)))
    if type_name.startswith("fixed"):
        return _binary  # raw bytes; a fixed length is checked by the writer's schema, not here
    return None


def decode_bound(type_name: str, raw: bytes) -> object:
    """Decode one bound; raises :class:`BoundDecodeError` on a length that does not fit the type."""
    decoder = decoder_for(type_name)
    if decoder is None:
        raise BoundDecodeError(f"type {type_name} has no single-value serialization")
    return decoder(raw)
