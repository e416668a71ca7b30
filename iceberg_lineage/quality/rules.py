"""Check rules: the YAML ``checks:`` configuration (per table glob), the default set, and the depth each rule reads.

A rule is its kind, its severity and its settings, validated here once, so that evaluation
(:mod:`~iceberg_lineage.quality.evaluate`) never meets a bad value. Sizes take ``KB``/``MB``/``GB`` (powers of 1024)
or bytes; durations ``s``/``m``/``h``/``d`` or seconds.
"""
from __future__ import annotations

import fnmatch
import math
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from iceberg_lineage.config.yamlfile import read_yaml
from iceberg_lineage.errors import ConfigError
from iceberg_lineage.jsontypes import Json
from iceberg_lineage.quality.schema import CHANGE_KINDS
from iceberg_lineage.stats.model import DEPTHS, Depth

SEVERITIES = ("error", "warn")
#: A schema change kind may also be switched off.
SCHEMA_SEVERITIES = (*SEVERITIES, "ignore")
_UNITS = {"": 1, "b": 1, "kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30, "tb": 1 << 40}
_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_QUANTITY = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*")


def _quantity(value: Json, units: Mapping[str, int], what: str) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    m = _QUANTITY.fullmatch(str(value))
    if not m or m.group(2).lower() not in units:
        raise ValueError(f"not a {what}: {value!r}")
    amount = float(m.group(1)) * units[m.group(2).lower()]
    if not math.isfinite(amount):
        raise ValueError(f"not a finite {what}")
    return amount


def size_bytes(value: Json) -> int:
    return int(_quantity(value, _UNITS, "size"))


def shown_size(n: int) -> str:
    """Bytes as the largest unit that divides them (``32 MiB``), else bytes."""
    for unit, factor in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n and n % factor == 0:
            return f"{n // factor} {unit}"
    return f"{n} bytes"


def duration_s(value: Json) -> float:
    return _quantity(value, _SECONDS, "duration")


def _number(value: Json) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"not a non-negative number: {value!r}")
    return float(value)


def _count(value: Json) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"not a non-negative integer: {value!r}")
    return value


def _columns(value: Json) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, str) for v in value):
        raise ValueError(f"not a list of column names: {value!r}")
    return tuple(value)


def _globs(value: Json) -> tuple[str, ...]:
    return () if value in (None, []) else _columns(value)


def _schema_severity(value: Json) -> str:
    if value not in SCHEMA_SEVERITIES:
        raise ValueError(f"must be one of {', '.join(SCHEMA_SEVERITIES)}, not {value!r}")
    return value


@dataclass(frozen=True)
class RuleKind:
    """What a rule accepts (setting -> parser; ``required`` ones must be given) and the depth it reads: ``depth``
    first, ``fallback`` when an input is unknown there (the summary lacks the delete totals...)."""

    settings: Mapping[str, Any]
    depth: Depth
    fallback: Depth | None = None
    required: tuple[str, ...] = ()


RULE_KINDS: Mapping[str, RuleKind] = MappingProxyType({
    "freshness": RuleKind({"max_age": duration_s}, "summary", required=("max_age",)),
    "row_count": RuleKind({"min": _count, "max_drop_pct": _number}, "summary"),
    "null_fraction": RuleKind({"columns": _columns, "max": _number}, "entries", required=("columns", "max")),
    "small_files": RuleKind({"size": size_bytes, "max_ratio": _number}, "entries", required=("size", "max_ratio")),
    "delete_ratio": RuleKind({"max": _number}, "summary", "entries", required=("max",)),
    "equality_deletes": RuleKind({"max_files_ratio": _number}, "manifest_list", "entries",
                                 required=("max_files_ratio",)),
    "snapshots": RuleKind({"max": _count}, "summary", required=("max",)),
    "manifests": RuleKind({"max": _count}, "manifest_list", required=("max",)),
    "partition_skew": RuleKind({"max_ratio": _number}, "entries", required=("max_ratio",)),
    "schema": RuleKind({**{k: _schema_severity for k in CHANGE_KINDS}, "ignore": _globs}, "summary"),
})

SCHEMA_DEFAULTS: Mapping[str, str] = MappingProxyType(
    {"added": "warn", "removed": "error", "type_changed": "error", "promoted": "warn", "renamed": "warn"})


@dataclass(frozen=True)
class Rule:
    """One configured rule: ``settings`` are parsed (bytes, seconds, numbers); ``params`` as written, for the
    assertion's ``params``."""

    kind: str
    severity: str
    settings: Mapping[str, Any]
    params: Mapping[str, Any]

    @property
    def depth(self) -> Depth:
        return RULE_KINDS[self.kind].depth

    @property
    def fallback(self) -> Depth | None:
        return RULE_KINDS[self.kind].fallback


def make_rule(kind: str, config: Mapping[str, Any] | None) -> Rule:
    """A validated rule; a bad one is a :class:`ConfigError` naming the rule and the setting."""
    spec = RULE_KINDS.get(kind)
    if spec is None:
        raise ConfigError(f"checks: unknown rule {kind!r}; known: {', '.join(RULE_KINDS)}")
    if config is not None and not isinstance(config, Mapping):
        raise ConfigError(f"checks: rule {kind} takes a mapping of settings")
    config = dict(config or {})
    severity = config.pop("severity", "warn")
    if severity not in SEVERITIES:
        raise ConfigError(f"checks: {kind}.severity must be one of {', '.join(SEVERITIES)}, not {severity!r}")
    unknown = sorted(set(config) - set(spec.settings))
    if unknown:
        raise ConfigError(f"checks: unknown settings of {kind}: {', '.join(unknown)}")
    missing = [k for k in spec.required if k not in config]
    if missing:
        raise ConfigError(f"checks: {kind} needs {', '.join(missing)}")
    settings: dict[str, Any] = {**SCHEMA_DEFAULTS, "ignore": ()} if kind == "schema" else {}
    for key, value in config.items():
        try:
            settings[key] = spec.settings[key](value)
        except ValueError as exc:
            raise ConfigError(f"checks: {kind}.{key}: {exc}") from None
    return Rule(kind, severity, MappingProxyType(settings), MappingProxyType(config))


@dataclass(frozen=True)
class RuleSet:
    """The rules of one table, in configuration order."""

    rules: tuple[Rule, ...]

    def get(self, kind: str) -> Rule | None:
        return next((r for r in self.rules if r.kind == kind), None)

    def depth(self) -> Depth:
        """The deepest first read any rule needs."""
        return max((r.depth for r in self.rules), key=DEPTHS.index, default="summary")


def rule_set(rules: Mapping[str, Any]) -> RuleSet:
    if not isinstance(rules, Mapping):
        raise ConfigError("checks: `rules` must be a mapping of rule name to settings")
    return RuleSet(tuple(make_rule(str(kind), config) for kind, config in rules.items()))


#: Applies to every table no ``checks:`` entry names (docs/check.md).
DEFAULT_RULES = rule_set({
    "row_count": {"max_drop_pct": 50},
    "small_files": {"size": "32MB", "max_ratio": 0.5},
    "delete_ratio": {"max": 0.2},
    "equality_deletes": {"max_files_ratio": 0.1},
    "snapshots": {"max": 1000},
    "manifests": {"max": 1000},
    "schema": {},
})


@dataclass(frozen=True)
class ChecksConfig:
    """The ``checks:`` entries: table globs and their rules. A table named by several entries gets their rules
    merged, a later entry's rule replacing an earlier one of the same kind; a table named by none, the default set."""

    entries: tuple[tuple[tuple[str, ...], RuleSet], ...] = ()

    def rules_for(self, name: str) -> RuleSet:
        merged: dict[str, Rule] = {}
        matched = False
        for globs, rules in self.entries:
            if any(fnmatch.fnmatchcase(name, g) for g in globs):
                matched = True
                merged.update((r.kind, r) for r in rules.rules)
        return RuleSet(tuple(merged.values())) if matched else DEFAULT_RULES


def checks_config(entries: Iterable[Any] | None) -> ChecksConfig:
    """Parse the ``checks:`` list; ``tables`` is one glob or a list of them, on the dotted table name."""
    if entries in (None, ()):
        return ChecksConfig()
    if not isinstance(entries, (list, tuple)):
        raise ConfigError("checks: must be a list of {tables: GLOB, rules: {...}} entries")
    parsed = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or set(entry) - {"tables", "rules"} or "tables" not in entry:
            raise ConfigError(f"checks[{i}]: an entry has `tables` (a glob or a list) and `rules`")
        tables = entry["tables"]
        globs = (tables,) if isinstance(tables, str) else tuple(str(t) for t in tables)
        parsed.append((globs, rule_set(entry.get("rules") or {})))
    return ChecksConfig(tuple(parsed))


def read_checks_file(path: str) -> ChecksConfig:
    """The ``checks:`` entries of a rules file (a mapping with ``checks``, or the list itself), read within the
    bounded YAML reader's limits; every error names the file."""
    data = read_yaml(path, "the rules")
    entries = data.get("checks") if isinstance(data, dict) else data
    try:
        return checks_config(entries)
    except ConfigError as exc:
        raise ConfigError(exc.reason, file=path) from None
