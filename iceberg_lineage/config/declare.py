"""How a setting is declared, once: a field of a frozen section dataclass made with :func:`setting`.

Everything else is derived from the declarations (dlt's ``@configspec`` style): the file key (``section.key``), the
environment variable (``ICEBERG_LINEAGE__SECTION__KEY``), the parsing from text or YAML (by the annotated type), the
validation (the type, a :class:`Range`, a ``Literal``'s choices) and its error message, and the reference table.
Error messages name the key and what it expects, never the value: a secret pasted into the wrong key stays unprinted.
"""
from __future__ import annotations

import math
import os
import types
from collections import abc
from dataclasses import dataclass, field, fields
from functools import cache
from typing import Any, Callable, Iterator, Literal, Mapping, TypeVar, Union, get_args, get_origin, get_type_hints

from iceberg_lineage.errors import ConfigError

T = TypeVar("T")

ENV_PREFIX = "ICEBERG_LINEAGE__"
_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")
_NULL = ("null", "none")


@dataclass(frozen=True)
class Range:
    """A number's bounds: the check, and the words its error message and the reference use."""

    gt: float | None = None
    ge: float | None = None
    le: float | None = None

    def holds(self, value: float) -> bool:
        return ((self.gt is None or value > self.gt) and (self.ge is None or value >= self.ge)
                and (self.le is None or value <= self.le))

    def describe(self) -> str:
        words = [("above", self.gt), ("at least", self.ge), ("at most", self.le)]
        return " and ".join(f"{word} {bound:g}" for word, bound in words if bound is not None)


POSITIVE = Range(gt=0)
NON_NEGATIVE = Range(ge=0)


def setting(default: T, doc: str, *, check: Range | None = None, secret: bool = False,
            normalize: Callable[[T], T] | None = None, compare: bool = True) -> T:
    """One setting: its default, its reference line, its bounds; ``secret`` keeps it out of reprs and listings;
    ``normalize`` tidies a parsed value (a URI's trailing slash); ``compare=False`` for values that may not hash."""
    meta = {"doc": doc, "check": check, "secret": secret, "normalize": normalize}
    if isinstance(default, dict):  # a mapping cannot hash, so it does not take part in comparisons either
        return field(default_factory=dict, repr=not secret, compare=False, metadata=meta)
    return field(default=default, repr=not secret, compare=compare, metadata=meta)


def section(cls: type[T], doc: str) -> T:
    """A section of :class:`Settings`, defaulting to the section's own defaults."""
    return field(default_factory=cls, metadata={"doc": doc, "section": True})


class Section:
    """Base of every section: construction validates each declared field, so no section holds a bad value."""

    def __post_init__(self) -> None:
        for decl in declared(type(self), _PREFIXES.get(type(self), "")):
            if decl.section is None:
                continue  # a whole sub-section, validated when it was built
            value = getattr(self, decl.attr)
            if not decl.valid(value):
                raise ConfigError(decl.expects())


@dataclass(frozen=True)
class Declared:
    """One setting as declared: its dotted key, its attribute path, its type and its metadata."""

    key: str
    attr: str
    type: object
    default: object
    doc: str
    check: Range | None
    secret: bool
    normalize: Callable[[Any], Any] | None
    section: type | None  # the declaring class (``None`` for a sub-section field itself)

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.key.replace(".", "__").upper()

    def takes(self) -> str:
        """What a value must be, in words: its type, and its bounds."""
        return type_name(self.type) + (f", {self.check.describe()}" if self.check else "")

    def expects(self) -> str:
        """The error message for a bad value: the key and what it takes, never the value."""
        return f"{self.key} must be {self.takes()}"

    def parse(self, raw: object) -> object:
        """A value from YAML or text (the environment, a flag) as the declared type; ``ValueError`` if not one."""
        value = _parse(self.type, raw)
        if self.normalize is not None and value is not None:
            value = self.normalize(value)
        if not self.valid(value):
            raise ValueError(self.key)
        return value

    def valid(self, value: object) -> bool:
        inner, optional = _unwrap(self.type)
        if value is None:
            return optional or inner is Any
        if get_origin(inner) is Literal:
            return value in get_args(inner)
        if inner in (int, float):
            return (not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
                    and (self.check is None or self.check.holds(value)))
        return True


@cache
def declared(cls: type, prefix: str = "") -> tuple[Declared, ...]:
    """The fields a section declares (``prefix``: the enclosing sections' keys); a sub-section is one entry whose
    ``section`` is ``None``."""
    hints = get_type_hints(cls)
    out = []
    for f in fields(cls):
        if "doc" not in f.metadata:
            continue
        default = f.default_factory() if callable(f.default_factory) else f.default
        sub = f.metadata.get("section")
        out.append(Declared(f"{prefix}{f.name}", f.name, hints[f.name], default, f.metadata["doc"],
                            None if sub else f.metadata["check"], not sub and f.metadata["secret"],
                            None if sub else f.metadata["normalize"], None if sub else cls))
    return tuple(out)


#: Each section class's key prefix (``column_stats.``), learnt as its root is walked: its own errors name full keys.
_PREFIXES: dict[type, str] = {}


def settings_of(cls: type, prefix: str = "") -> Iterator[Declared]:
    """Every setting under ``cls``, sub-sections walked, in declaration order."""
    for decl in declared(cls, prefix):
        if decl.section is None:
            _PREFIXES.setdefault(decl.type, decl.key + ".")
            yield from settings_of(decl.type, decl.key + ".")
        else:
            yield decl


@cache
def keys_of(cls: type) -> Mapping[str, Declared]:
    """Every setting under ``cls`` by its dotted key."""
    return {decl.key: decl for decl in settings_of(cls)}


def parse_setting(cls: type, key: str, raw: object) -> object:
    """A value for the dotted ``key`` of ``cls`` as its declared type; a :class:`ConfigError` naming the key, never
    the value."""
    decl = keys_of(cls).get(key)
    if decl is None:
        raise ConfigError(f"unknown configuration key {key}")
    try:
        return decl.parse(raw)
    except (TypeError, ValueError):
        raise ConfigError(decl.expects()) from None


def build(cls: type[T], values: Mapping[str, object], base: T | None = None) -> T:
    """``base`` (else the defaults) of ``cls`` with ``values`` (dotted keys, already parsed) put in."""
    kwargs = {}
    for decl in declared(cls):
        current = getattr(base, decl.attr) if base is not None else decl.default
        if decl.section is None:
            # a section is built anew without a base: its defaults may depend on the environment (the user state dir)
            sub = getattr(base, decl.attr) if base is not None else None
            inner = {k[len(decl.attr) + 1:]: v for k, v in values.items() if k.startswith(decl.attr + ".")}
            kwargs[decl.attr] = build(decl.type, inner, sub) if inner or sub is None else sub
        else:
            kwargs[decl.attr] = values.get(decl.attr, current)
    return cls(**kwargs)


def type_name(tp: object) -> str:
    """A type in words, for error messages and the reference."""
    inner, optional = _unwrap(tp)
    if get_origin(inner) is Literal:
        name = "one of " + ", ".join(str(v) for v in get_args(inner))
    elif get_origin(inner) is tuple:
        name = "a list of strings"
    elif inner is Any:
        name = "YAML"
    elif get_origin(inner) in (abc.Mapping, dict):
        name = "a mapping of strings"
    else:
        name = {bool: "a boolean", int: "an integer", float: "a finite number", str: "a string"}[inner]
    return f"{name} or null" if optional else name


def _unwrap(tp: object) -> tuple[object, bool]:
    """``X | None`` as ``(X, True)``; any other type as ``(type, False)``."""
    if get_origin(tp) in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        return args[0], len(args) < len(get_args(tp))
    return tp, False


def _parse(tp: object, raw: object) -> object:
    from iceberg_lineage.config.yamlfile import parse_yaml

    inner, optional = _unwrap(tp)
    if optional and (raw in ("", None) or (inner is not str and isinstance(raw, str) and raw.lower() in _NULL)):
        return None
    if inner is Any:
        return parse_yaml(raw, "the value") if isinstance(raw, str) else raw
    if isinstance(raw, os.PathLike):
        raw = os.fspath(raw)
    if inner is bool:
        return raw if isinstance(raw, bool) else _choice(str(raw).strip().lower())
    if get_origin(inner) is tuple:
        return _strings(raw)
    if get_origin(inner) in (abc.Mapping, dict):
        return _mapping(parse_yaml(raw, "the value") if isinstance(raw, str) else raw)
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise ValueError("not a scalar")
    if inner is int:
        if isinstance(raw, float):
            raise ValueError("not an integer")
        return int(raw)
    if inner is float:
        return float(raw)
    return str(raw)  # str, and a Literal's choice (checked by ``valid``)


def _choice(text: str) -> bool:
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise ValueError("not a boolean")


def _strings(raw: object) -> tuple[str, ...]:
    if raw is None:
        return ()
    if isinstance(raw, str):
        return tuple(v.strip() for v in raw.split(",") if v.strip())
    if isinstance(raw, (list, tuple)) and all(isinstance(v, str) for v in raw):
        return tuple(raw)
    raise ValueError("not a list of strings")


def _mapping(raw: object) -> dict[str, str]:
    if raw is None:
        return {}
    if isinstance(raw, Mapping) and all(isinstance(v, (str, int, float, bool)) for v in raw.values()):
        return {str(k): str(v) for k, v in raw.items()}
    raise ValueError("not a mapping of strings")


def reference(cls: type) -> str:
    """The markdown reference table of every setting under ``cls``."""
    rows = ["| Key | Environment variable | Type | Default | Meaning |", "|---|---|---|---|---|"]
    for decl in settings_of(cls):
        rows.append(f"| `{decl.key}` | `{decl.env}` | {decl.takes()} | {_shown(decl)} | {decl.doc} |")
    return "\n".join(rows) + "\n"


def _shown(decl: Declared) -> str:
    value = decl.default
    if value in (None, (), {}):
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value:g}`" if isinstance(value, float) else f"`{value}`"


