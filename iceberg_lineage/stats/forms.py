"""The published forms of the statistics model, declared on the dataclass fields themselves.

A figure of :class:`~iceberg_lineage.stats.model.SnapshotStats` is declared once, with :func:`figure`: its label in
the text and HTML tables and its path in the ``icebergTableStatistics`` facet. Every model's two JSON forms, snake_case
(``iceberg-lineage stats --format json``) and camelCase (the facets), come from :func:`as_json`; a field's
:func:`json_field` metadata may leave it out of a form or convert its value.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import functools
import uuid
from dataclasses import dataclass, field, fields, is_dataclass
from types import MappingProxyType
from typing import Any, Callable, Collection, Literal, Mapping

from iceberg_lineage.jsontypes import Json

Form = Literal["snake", "camel"]
SNAKE: Form = "snake"
CAMEL: Form = "camel"
BOTH: tuple[Form, ...] = (SNAKE, CAMEL)

_FIGURE = "iceberg_lineage.figure"
_JSON = "iceberg_lineage.json"


@dataclass(frozen=True)
class Figure:
    """How one snapshot figure is shown and published. ``path`` is dotted (``bytes.data``): a group of the
    ``icebergTableStatistics`` facet and its key, or a top-level key; the same path keys the facet's ``sources``.
    ``shown`` figures are rows of the text and HTML tables."""

    label: str
    path: str
    shown: bool = True


def figure(label: str, path: str, *, shown: bool = True) -> None:
    """A figure field: unknown (``None``) until the walker knows it. Adding a figure is this one declaration."""
    return field(default=None, metadata={_FIGURE: Figure(label, path, shown)})


@functools.cache
def declared_figures(model: type) -> Mapping[str, Figure]:
    """The figures a model class declares, by field name, in declaration order (the order of its JSON)."""
    return MappingProxyType({f.name: f.metadata[_FIGURE] for f in fields(model) if _FIGURE in f.metadata})


@dataclass(frozen=True)
class JsonField:
    """A field's part in the JSON forms: the forms that carry it, those that leave it out when it is falsy, and a
    conversion of its value."""

    forms: Collection[Form] = BOTH
    omit_empty: Collection[Form] = ()
    convert: Callable[[Any], Any] | None = None


_PLAIN = JsonField()


def json_field(
    *, forms: Collection[Form] = BOTH, omit_empty: Collection[Form] = (), convert: Callable[[Any], Any] | None = None,
    **kwargs: object,
) -> Any:
    """A dataclass field (``kwargs`` go to :func:`dataclasses.field`) with its JSON forms declared."""
    return field(metadata={_JSON: JsonField(frozenset(forms), frozenset(omit_empty), convert)}, **kwargs)


def not_json(**kwargs: object) -> Any:
    """A field neither JSON form carries (raw inputs, counters of the walk)."""
    return json_field(forms=(), **kwargs)


def camel_case(name: str) -> str:
    """``small_file_threshold`` -> ``smallFileThreshold``."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def as_json(model: object, form: Form = SNAKE) -> dict[str, Any]:
    """A dataclass as JSON in ``form``, fields in declaration order; nested dataclasses, sequences and mappings
    follow (mapping keys are kept as they are: they are names, such as column names)."""
    out: dict[str, Any] = {}
    for name, key, omit_empty, convert in _plan(type(model), form):
        value = getattr(model, name)
        if omit_empty and not value:
            continue
        out[key] = convert(value) if convert is not None else _value(value, form)
    return out


@functools.cache
def _plan(model: type, form: Form) -> tuple[tuple[str, str, bool, Callable[[Any], Any] | None], ...]:
    """Per field of ``model`` that ``form`` carries: its name, its key, whether a falsy value is left out, and its
    conversion. Read once per class: the statistics of a wide table serialise thousands of columns."""
    plan = []
    for f in fields(model):
        spec: JsonField = f.metadata.get(_JSON, _PLAIN)
        if form in spec.forms:
            key = camel_case(f.name) if form == CAMEL else f.name
            plan.append((f.name, key, form in spec.omit_empty, spec.convert))
    return tuple(plan)


def _value(value: object, form: Form) -> object:
    if value is None or isinstance(value, (str, int, float)):
        return value
    if isinstance(value, (tuple, list)):
        return [_value(v, form) for v in value]
    if isinstance(value, Mapping):
        return {k: _value(v, form) for k, v in value.items()}
    return as_json(value, form) if is_dataclass(value) else value


class JsonModel:
    """Gives a model dataclass its snake_case ``to_json``."""

    def to_json(self) -> dict[str, Any]:
        return as_json(self)


def bound_to_json(value: object, type_name: str | None = None) -> Json:
    """The JSON form of a decoded bound: numbers stay numbers; dates and times are ISO-8601; decimal and uuid are text;
    binary and fixed are hex."""
    if value is None or isinstance(value, (bool, int, float, str)):
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            return str(value)
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    return str(value)
