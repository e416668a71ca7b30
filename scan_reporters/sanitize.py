"""Java ``ExpressionUtil.sanitize`` for PyIceberg expressions, rendered as Java ``ExpressionParser`` JSON.

Literals are replaced by Java's tokens so that no data value leaves the process: numbers by their magnitude
(``(2-digit-int)``, ``(1-digit-float)``), dates and timestamps by their distance from now
(``(date-today)``, ``(date-3-days-ago)``, ``(timestamp-5-hours-from-now)``, ``(date)``, ``(timestamp)``),
times by ``(time)`` and everything else by ``(hash-%08x)``, where the hash is Iceberg's
``bucket[2147483647]`` transform of the string (murmur3), exactly as Java's ``HASH_FUNC``.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import time
import uuid
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from pyiceberg.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BooleanExpression,
    BoundPredicate,
    Not,
    Or,
)
from pyiceberg.expressions.literals import (
    BooleanLiteral,
    DateLiteral,
    DoubleLiteral,
    FloatLiteral,
    Literal,
    LongLiteral,
    StringLiteral,
    TimeLiteral,
    TimestampLiteral,
    UUIDLiteral,
)

if TYPE_CHECKING:
    from pyiceberg.schema import Schema

_FIVE_MINUTES_MICROS = 5 * 60 * 1_000_000
_HOUR_MICROS = 3600 * 1_000_000
_THREE_DAYS_HOURS = 72
_NINETY_DAYS_HOURS = 90 * 24
_INT_MAX = 2147483647

# ExpressionUtil.java patterns (matched against the whole string).
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIME = re.compile(r"\d{2}:\d{2}(:\d{2}(.\d{1,9})?)?")
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(.\d{1,9})?)?")
_TIMESTAMPTZ = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(.\d{1,9})?)?([-+]\d{2}:\d{2}|Z)")

_OPS = {
    "EqualTo": "eq",
    "NotEqualTo": "not-eq",
    "LessThan": "lt",
    "LessThanOrEqual": "lt-eq",
    "GreaterThan": "gt",
    "GreaterThanOrEqual": "gt-eq",
    "StartsWith": "starts-with",
    "NotStartsWith": "not-starts-with",
    "In": "in",
    "NotIn": "not-in",
    "IsNull": "is-null",
    "NotNull": "not-null",
    "IsNaN": "is-nan",
    "NotNaN": "not-nan",
}
_UNARY = {"is-null", "not-null", "is-nan", "not-nan"}
_SET = {"in", "not-in"}


@dataclass(frozen=True)
class _Clock:
    """Java's sanitizer fixes ``now`` (micros) and ``today`` (days) once per expression."""

    now_micros: int
    today: int

    @classmethod
    def current(cls) -> _Clock:
        now_ms = time.time_ns() // 1_000_000
        return cls(now_micros=now_ms * 1000, today=now_ms // 86_400_000)


@lru_cache(maxsize=1)
def _string_hash() -> Any:
    from pyiceberg.transforms import BucketTransform
    from pyiceberg.types import StringType

    return BucketTransform(_INT_MAX).transform(StringType())


def hash_token(value: str) -> str:
    """``(hash-%08x)`` of Iceberg's string bucket hash, as Java's ``sanitizeSimpleString``."""
    return f"(hash-{_string_hash()(value):08x})"


def number_token(value: float, kind: str) -> str:
    v = float(value)
    if v == 0.0 or math.isnan(v):
        digits = 1  # Java: log10(0) is undefined; (int) NaN == 0
    elif math.isinf(v):
        digits = -_INT_MAX - 1  # Java: (int) Infinity + 1 overflows
    else:
        digits = int(math.log10(abs(v))) + 1
    return f"({digits}-digit-{kind})"


def date_token(days: int, today: int) -> str:
    direction = "ago" if today > days else "from-now"
    diff = abs(today - days)
    if diff == 0:
        return "(date-today)"
    if diff < 90:
        return f"(date-{diff}-days-{direction})"
    return "(date)"


def timestamp_token(micros: int, now_micros: int) -> str:
    direction = "ago" if now_micros > micros else "from-now"
    diff = abs(now_micros - micros)
    if diff < _FIVE_MINUTES_MICROS:
        return "(timestamp-about-now)"
    hours = diff // _HOUR_MICROS
    if hours <= _THREE_DAYS_HOURS:
        return f"(timestamp-{hours}-hours-{direction})"
    if hours < _NINETY_DAYS_HOURS:
        return f"(timestamp-{hours // 24}-days-{direction})"
    return "(timestamp)"


_FRACTION = re.compile(r"(T\d{2}:\d{2}:\d{2})\.(\d{1,9})")


def _iso_to_micros(value: str) -> int:
    """Parse like Java's ``Literal.to(timestamp)``; nanosecond fractions truncate to micros as Java does."""
    normalized = _FRACTION.sub(lambda m: f"{m.group(1)}.{m.group(2)[:6].ljust(6, '0')}", value.replace("Z", "+00:00"))
    parsed = dt.datetime.fromisoformat(normalized)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.timezone.utc)
    delta = parsed - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def string_token(value: str, clock: _Clock) -> str:
    """Java ``sanitizeString``: date/time-looking strings get date/time tokens, everything else a hash."""
    try:
        if _DATE.fullmatch(value):
            return date_token((dt.date.fromisoformat(value) - dt.date(1970, 1, 1)).days, clock.today)
        if _TIMESTAMP.fullmatch(value) or _TIMESTAMPTZ.fullmatch(value):
            return timestamp_token(_iso_to_micros(value), clock.now_micros)
        if _TIME.fullmatch(value):
            return "(time)"
    except ValueError:
        pass  # Java: an unparsable date/timestamp string is treated as a plain string
    return hash_token(value)


def literal_token(lit: Literal[Any], clock: _Clock) -> str:
    value = lit.value
    if isinstance(lit, StringLiteral):
        return string_token(value, clock)
    if isinstance(lit, DateLiteral):
        return date_token(value, clock.today)
    if isinstance(lit, TimestampLiteral):
        return timestamp_token(value, clock.now_micros)
    if isinstance(lit, TimeLiteral):
        return "(time)"
    if isinstance(lit, (FloatLiteral, DoubleLiteral)):
        return number_token(value, "float")
    if isinstance(lit, LongLiteral) or (isinstance(value, int) and not isinstance(value, bool)):
        return number_token(value, "int")
    if isinstance(lit, BooleanLiteral):
        return hash_token("true" if value else "false")
    if isinstance(lit, UUIDLiteral):
        return hash_token(str(uuid.UUID(bytes=value)))
    if isinstance(value, bytes):
        return hash_token(value.hex().upper())  # Java hashes ByteBuffer.toString(); the hex form is stabler
    return hash_token(str(value))


def _term_name(pred: Any, schema: Schema | None) -> str:
    if isinstance(pred, BoundPredicate):
        field = pred.term.ref().field
        return (schema.find_column_name(field.field_id) if schema is not None else None) or field.name
    return pred.term.name


def _op(pred: Any) -> str:
    name = type(pred).__name__
    return _OPS[name[len("Bound") :] if name.startswith("Bound") else name]


def _to_json(expr: BooleanExpression, clock: _Clock, schema: Schema | None) -> Any:
    if isinstance(expr, AlwaysTrue):
        return True
    if isinstance(expr, AlwaysFalse):
        return False
    if isinstance(expr, (And, Or)):
        return {
            "type": "and" if isinstance(expr, And) else "or",
            "left": _to_json(expr.left, clock, schema),
            "right": _to_json(expr.right, clock, schema),
        }
    if isinstance(expr, Not):
        return {"type": "not", "child": _to_json(expr.child, clock, schema)}
    op = _op(expr)
    out: dict[str, Any] = {"type": op, "term": _term_name(expr, schema)}
    if op in _SET:
        out["values"] = sorted(literal_token(lit, clock) for lit in expr.literals)  # type: ignore[attr-defined]
    elif op not in _UNARY:
        out["value"] = literal_token(expr.literal, clock)  # type: ignore[attr-defined]
    return out


def sanitize(expr: BooleanExpression, schema: Schema | None = None, case_sensitive: bool = True) -> Any:
    """Sanitised Java ``ExpressionParser`` JSON of ``expr`` (``true``, ``false`` or a predicate object).

    Like Java's ``sanitize(struct, expr, caseSensitive)``, the expression is first bound to ``schema`` so
    literals are sanitised by column type (``v >= 1.5`` on a double gives ``(1-digit-float)``, a date string on a
    date column gives a date token); if it cannot be bound, the unbound expression is sanitised by literal type.
    Set literals are sorted because PyIceberg keeps them in a set and the JSON must be deterministic.
    """
    clock = _Clock.current()
    if schema is not None:
        from pyiceberg.expressions.visitors import bind

        try:
            return _to_json(bind(schema, expr, case_sensitive), clock, schema)
        except Exception:  # noqa: BLE001 - Java falls back to the unbound expression as well
            pass
    return _to_json(expr, clock, None)


#: The tokens Java's sanitiser writes (``ExpressionUtil``): kept as they are when an expression arrives sanitised.
_TOKEN = re.compile(
    r"\((hash-[0-9a-f]{8}|-?\d+-digit-(int|float)|date|date-today|date-\d+-days-(ago|from-now)|time|timestamp"
    r"|timestamp-about-now|timestamp-\d+-(hours|days)-(ago|from-now))\)"
)
_LOGICAL = {"and": ("left", "right"), "or": ("left", "right"), "not": ("child",)}


def _json_token(value: Any, clock: _Clock) -> str:
    """A literal of the JSON form by its JSON type, as Java sanitises an unbound literal."""
    if isinstance(value, str):
        return value if _TOKEN.fullmatch(value) else string_token(value, clock)
    if isinstance(value, bool):
        return hash_token("true" if value else "false")
    if isinstance(value, int):
        return number_token(value, "int")
    if isinstance(value, float):
        return number_token(value, "float")
    return hash_token(type(value).__name__)  # an object or a list where a literal belongs: nothing of it is kept


def sanitize_json(expr: Any) -> Any:
    """An expression in Java's ``ExpressionParser`` JSON form (a report's ``filter`` as it arrives) with every literal
    that is not already one of Java's tokens replaced as Java's sanitiser does; operators and terms stay. Anything
    that is not a known shape keeps only what cannot carry data (``true``, ``false``), else becomes one hash token."""
    clock = _Clock.current()

    def walk(node: Any, depth: int) -> Any:
        if isinstance(node, bool):
            return node
        if not isinstance(node, dict) or depth > 200 or not isinstance(node.get("type"), str):
            return _json_token(node, clock)
        kind = node["type"].lower()
        if kind in _LOGICAL:
            return {"type": kind, **{key: walk(node.get(key), depth + 1) for key in _LOGICAL[kind]}}
        out: dict[str, Any] = {"type": kind}
        if "term" in node:
            out["term"] = _term(node["term"])
        if "value" in node:
            out["value"] = _json_token(node["value"], clock)
        if isinstance(node.get("values"), list):
            out["values"] = sorted(_json_token(v, clock) for v in node["values"])
        return out

    return walk(expr, 0)


def _term(term: Any) -> Any:
    """A reference (a column name) or a transform of one, as the JSON form names them; anything else hashed."""
    if isinstance(term, str):
        return term
    if isinstance(term, dict) and term.get("type") in ("reference", "transform"):
        kept = {k: term[k] for k in ("type", "transform") if isinstance(term.get(k), str)}
        return {**kept, "term": _term(term.get("term"))} if "term" in term else kept
    return hash_token(repr(term))
