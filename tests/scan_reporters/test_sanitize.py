"""Java ``ExpressionUtil.sanitize`` tokens and ``ExpressionParser`` JSON shapes."""

from __future__ import annotations

import datetime as dt

from pyiceberg.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    EqualTo,
    GreaterThan,
    In,
    IsNaN,
    IsNull,
    LessThan,
    Not,
    NotIn,
    NotNull,
    NotStartsWith,
    Or,
    StartsWith,
)
from pyiceberg.schema import Schema
from pyiceberg.types import DateType, DoubleType, LongType, NestedField, StringType, StructType

from scan_reporters.sanitize import date_token, hash_token, number_token, sanitize, sanitize_json, timestamp_token


def test_hash_is_icebergs_string_bucket_hash():
    # Iceberg spec: murmur3 bucket hash of the string "iceberg" is 1210000089 = 0x481f22d9
    assert hash_token("iceberg") == "(hash-481f22d9)"


def test_number_tokens_count_digits_like_java():
    assert number_token(0, "int") == "(1-digit-int)"
    assert number_token(7, "int") == "(1-digit-int)"
    assert number_token(-12345, "int") == "(5-digit-int)"
    assert number_token(0.25, "float") == "(1-digit-float)"
    assert number_token(123.4, "float") == "(3-digit-float)"


def test_date_and_timestamp_tokens_are_relative_to_now():
    assert date_token(100, 100) == "(date-today)"
    assert date_token(97, 100) == "(date-3-days-ago)"
    assert date_token(110, 100) == "(date-10-days-from-now)"
    assert date_token(0, 100) == "(date)"
    hour = 3600 * 1_000_000
    now = 1_000_000 * hour
    assert timestamp_token(now - 60_000_000, now) == "(timestamp-about-now)"
    assert timestamp_token(now - 5 * hour, now) == "(timestamp-5-hours-ago)"
    assert timestamp_token(now + 72 * hour, now) == "(timestamp-72-hours-from-now)"
    assert timestamp_token(now - 24 * 10 * hour, now) == "(timestamp-10-days-ago)"
    assert timestamp_token(now - 24 * 400 * hour, now) == "(timestamp)"


def test_unbound_json_shapes_and_literal_tokens():
    today = dt.datetime.now(dt.timezone.utc).date()
    expr = And(
        Or(EqualTo("name", "iceberg"), Not(IsNull("name"))),
        And(In("n", [1, 22, 333]), LessThan("d", (today - dt.timedelta(days=2)).isoformat())),
    )
    assert sanitize(expr) == {
        "type": "and",
        "left": {
            "type": "or",
            "left": {"type": "eq", "term": "name", "value": "(hash-481f22d9)"},
            "right": {"type": "not", "child": {"type": "is-null", "term": "name"}},
        },
        "right": {
            "type": "and",
            "left": {"type": "in", "term": "n", "values": ["(1-digit-int)", "(2-digit-int)", "(3-digit-int)"]},
            "right": {"type": "lt", "term": "d", "value": "(date-2-days-ago)"},
        },
    }
    assert sanitize(AlwaysTrue()) is True and sanitize(AlwaysFalse()) is False
    assert sanitize(StartsWith("name", "ice"))["type"] == "starts-with"
    assert sanitize(NotStartsWith("name", "ice"))["type"] == "not-starts-with"
    assert sanitize(NotIn("n", [1, 2]))["type"] == "not-in"
    assert sanitize(NotNull("n")) == {"type": "not-null", "term": "n"}
    assert sanitize(IsNaN("x")) == {"type": "is-nan", "term": "x"}
    assert sanitize(EqualTo("t", "10:15:00")) == {"type": "eq", "term": "t", "value": "(time)"}
    assert sanitize(EqualTo("t", "2024-13-45"))["value"].startswith("(hash-")  # unparsable date: a plain string


def test_bound_sanitising_uses_column_types_and_full_names():
    schema = Schema(
        NestedField(1, "v", DoubleType()),
        NestedField(2, "d", DateType()),
        NestedField(3, "s", StructType(NestedField(4, "x", LongType()))),
        NestedField(5, "name", StringType()),
    )
    assert sanitize(GreaterThan("v", 1), schema) == {"type": "gt", "term": "v", "value": "(1-digit-float)"}
    assert sanitize(EqualTo("s.x", 12), schema) == {"type": "eq", "term": "s.x", "value": "(2-digit-int)"}
    assert sanitize(EqualTo("d", "1999-01-01"), schema) == {"type": "eq", "term": "d", "value": "(date)"}
    assert sanitize(EqualTo("missing", 1), schema) == {"type": "eq", "term": "missing", "value": "(1-digit-int)"}


def test_a_filter_as_it_arrives_in_json_is_sanitised_as_java_does_and_java_tokens_stay():
    """A report's ``filter`` in ``ExpressionParser`` JSON: literals become Java's tokens (``iceberg`` hashes to the
    spec's value), tokens Java already wrote stay, operators and terms (transforms included) stay."""
    today = dt.datetime.now(dt.timezone.utc).date()
    planted = {
        "type": "and",
        "left": {"type": "or",
                 "left": {"type": "eq", "term": "name", "value": "iceberg"},
                 "right": {"type": "not", "child": {"type": "is-null", "term": "name"}}},
        "right": {"type": "and",
                  "left": {"type": "in", "term": "n", "values": [333, 1, 22.5]},
                  "right": {"type": "lt",
                            "term": {"type": "transform", "transform": "day", "term": "d"},
                            "value": (today - dt.timedelta(days=2)).isoformat()}},
    }
    assert sanitize_json(planted) == {
        "type": "and",
        "left": {"type": "or",
                 "left": {"type": "eq", "term": "name", "value": "(hash-481f22d9)"},
                 "right": {"type": "not", "child": {"type": "is-null", "term": "name"}}},
        "right": {"type": "and",
                  "left": {"type": "in", "term": "n", "values": ["(1-digit-int)", "(2-digit-float)", "(3-digit-int)"]},
                  "right": {"type": "lt", "term": {"type": "transform", "transform": "day", "term": "d"},
                            "value": "(date-2-days-ago)"}},
    }
    java = {"type": "eq", "term": "id", "value": "(hash-3e5c6e7d)"}
    assert sanitize_json(java) == java  # already sanitised by Java: unchanged
    assert sanitize_json(True) is True and sanitize_json(False) is False
    assert sanitize_json({"type": "eq", "term": "ok", "value": True}) == {"type": "eq", "term": "ok",
                                                                         "value": hash_token("true")}
    leaked = sanitize_json({"type": "eq", "term": "k", "value": {"type": "string", "value": "AKIA-SECRET"},
                            "extra": "AKIA-SECRET"})
    assert "AKIA-SECRET" not in repr(leaked) and set(leaked) == {"type", "term", "value"}
    assert "AKIA-SECRET" not in repr(sanitize_json("AKIA-SECRET"))
