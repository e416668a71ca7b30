"""Bounds decoding of every primitive type, round-tripped through PyIceberg's own serializer
(``pyiceberg.conversions.to_bytes``), plus promotion by byte length (spec Appendix D)."""
from __future__ import annotations

import datetime as dt
import decimal
import uuid

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from pyiceberg.conversions import to_bytes
from pyiceberg.types import (
    BinaryType, BooleanType, DateType, DecimalType, DoubleType, FixedType, FloatType, IntegerType, LongType,
    StringType, TimestampType, TimestamptzType, TimeType, UUIDType,
)

from iceberg_lineage.read.bounds import BoundDecodeError, decode_bound

EPOCH = dt.datetime(1970, 1, 1)
FAST = settings(max_examples=150, deadline=None, derandomize=True)
INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)


@FAST
@given(st.booleans())
def test_boolean(v):
    assert decode_bound("boolean", to_bytes(BooleanType(), v)) is v


@FAST
@given(INT32)
def test_int_and_long_promoted_from_int(v):
    raw = to_bytes(IntegerType(), v)
    assert decode_bound("int", raw) == v
    assert decode_bound("long", raw) == v  # an int column promoted to long keeps 4-byte bounds


@FAST
@given(INT64)
def test_long(v):
    assert decode_bound("long", to_bytes(LongType(), v)) == v


@FAST
@given(st.floats(width=32, allow_nan=False))
def test_float_and_double_promoted_from_float(v):
    raw = to_bytes(FloatType(), v)
    assert decode_bound("float", raw) == v
    assert decode_bound("double", raw) == v


@FAST
@given(st.floats(allow_nan=False))
def test_double(v):
    assert decode_bound("double", to_bytes(DoubleType(), v)) == v


@FAST
@given(st.integers(-700_000, 2_900_000))
def test_date_and_timestamp_promoted_from_date(days):
    raw = to_bytes(DateType(), days)
    assert decode_bound("date", raw) == dt.date(1970, 1, 1) + dt.timedelta(days=days)
    assert decode_bound("timestamp", raw) == EPOCH + dt.timedelta(days=days)


@FAST
@given(st.integers(0, 86_400_000_000 - 1))
def test_time(micros):
    t = decode_bound("time", to_bytes(TimeType(), micros))
    assert ((t.hour * 60 + t.minute) * 60 + t.second) * 1_000_000 + t.microsecond == micros


@FAST
@given(st.integers(-(2**50), 2**50))
def test_timestamps(micros):
    assert decode_bound("timestamp", to_bytes(TimestampType(), micros)) == EPOCH + dt.timedelta(microseconds=micros)
    aware = decode_bound("timestamptz", to_bytes(TimestamptzType(), micros))
    assert aware == EPOCH.replace(tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=micros)


@FAST
@given(st.integers(-(2**63) + 1, 2**63 - 1) | st.sampled_from([-(2**63), -1, 0, 999, 1_000]))
def test_nanosecond_timestamps_keep_every_nanosecond(nanos):
    """numpy's datetime64[ns] is the independent reference: same instant, 9 fractional digits (numpy spends the
    least value on NaT, so it is checked by hand)."""
    if nanos == -(2**63):
        assert str(decode_bound("timestamp_ns", to_bytes(LongType(), nanos))) == "1677-09-21T00:12:43.145224192"
        return
    raw = to_bytes(LongType(), nanos)
    reference = str(np.datetime64(nanos, "ns"))
    assert decode_bound("timestamp_ns", raw).isoformat() == reference
    assert str(decode_bound("timestamptz_ns", raw)) == reference + "+00:00"


def test_a_nanosecond_maximum_is_not_cut_below_the_value():
    assert str(decode_bound("timestamp_ns", to_bytes(LongType(), 750_007_433))) == "1970-01-01T00:00:00.750007433"
    before_epoch = decode_bound("timestamp_ns", to_bytes(LongType(), -1))
    assert before_epoch.isoformat() == "1969-12-31T23:59:59.999999999"


def test_nanosecond_timestamp_promoted_from_date():
    assert str(decode_bound("timestamp_ns", to_bytes(DateType(), 1))) == "1970-01-02T00:00:00.000000000"
    with pytest.raises(BoundDecodeError):
        decode_bound("timestamp_ns", to_bytes(DateType(), 2**31 - 1))  # past year 9999


@FAST
@given(st.text())
def test_string(v):
    assert decode_bound("string", to_bytes(StringType(), v)) == v


@FAST
@given(st.uuids())
def test_uuid(v):
    assert decode_bound("uuid", to_bytes(UUIDType(), v)) == v


@FAST
@given(st.binary(max_size=64))
def test_binary_and_fixed(v):
    assert decode_bound("binary", to_bytes(BinaryType(), v)) == v
    assert decode_bound(f"fixed[{len(v)}]", to_bytes(FixedType(len(v)), v)) == v


@FAST
@given(st.integers(1, 38).flatmap(lambda p: st.tuples(st.just(p), st.integers(0, p),
                                                      st.integers(-(10**p) + 1, 10**p - 1))))
def test_decimal(args):
    precision, scale, unscaled = args
    value = decimal.Decimal(unscaled).scaleb(-scale)
    decoded = decode_bound(f"decimal({precision}, {scale})", to_bytes(DecimalType(precision, scale), value))
    assert decoded == value
    # a decimal promoted to a wider precision keeps its scale, so old bounds decode the same
    assert decode_bound(f"decimal(38, {scale})", to_bytes(DecimalType(precision, scale), value)) == value


@pytest.mark.parametrize("type_name,raw", [("int", b"\x01\x02"), ("long", b"\x01" * 5), ("double", b"\x00" * 3),
                                           ("uuid", b"\x00" * 15), ("boolean", b""), ("date", b"\x00" * 8)])
def test_wrong_length_is_a_typed_error(type_name, raw):
    with pytest.raises(BoundDecodeError):
        decode_bound(type_name, raw)


def test_types_without_single_value_form():
    for t in ("struct", "list", "map", "variant", "geometry"):
        with pytest.raises(BoundDecodeError):
            decode_bound(t, b"\x00")
    assert decode_bound("uuid", uuid.UUID(int=1).bytes) == uuid.UUID(int=1)
