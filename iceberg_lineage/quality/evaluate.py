"""Rules in, assertions out: each evaluated rule over a snapshot's statistics, its parent's, and their schemas.

Pure: the caller reads the statistics (through the walker, no deeper than :meth:`RuleSet.depth`) and the clock.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Mapping

from iceberg_lineage.quality.assertions import NOT_APPLICABLE, UNKNOWN, Assertion
from iceberg_lineage.quality.rules import Rule, RuleSet, shown_size
from iceberg_lineage.quality.schema import schema_diff
from iceberg_lineage.read.metadata import Schema
from iceberg_lineage.stats.model import SnapshotStats


@dataclass(frozen=True)
class CountsGap:
    """Why a column's value or null count is unknown: the live data files without one, and how many of them were
    written before the column existed (it was added by schema evolution after them, in schema ``added_in``)."""

    files: int
    predating: int = 0
    added_in: int | None = None

    def describe(self, column: str) -> str:
        left_out = "the writer left out value or null counts"
        if not self.predating:
            return left_out
        why = f"{self.predating} file(s) predate column {column} (added in schema id {self.added_in})"
        others = self.files - self.predating
        return why if others <= 0 else f"{why}; in {others} other file(s) {left_out}"


@dataclass(frozen=True)
class CheckInputs:
    """What the rules look at. ``stats`` is ``None`` for a table without snapshots; ``parent`` is the parent
    snapshot's statistics (summary depth is enough), ``None`` for a first snapshot."""

    stats: SnapshotStats | None
    parent: SnapshotStats | None
    schema: Schema
    parent_schema: Schema | None
    format_version: int
    snapshot_count: int
    #: Commit time of the head of ``main`` (freshness), ``None`` without one.
    main_timestamp_ms: int | None
    now_ms: int
    #: Live records per partition, where the walker counted them (partition_skew).
    partition_records: tuple[int, ...] | None = None
    #: Why the counts of a column ``null_fraction`` names are unknown, by column, where the caller looked.
    counts_gaps: Mapping[str, CountsGap] = field(default_factory=lambda: MappingProxyType({}))


NO_PARENT = "no parent snapshot to compare with (a first snapshot, or its parent expired)"


def ratio(x: float) -> str:
    return f"{x:.4g}"


def _result(rule: Rule, success: bool, expected: str, actual: str, description: str | None = None,
            column: str | None = None, name: str | None = None) -> Assertion:
    return Assertion(rule.kind, name or rule.kind, success, rule.severity, expected, actual, column, description,
                     rule.params)


def _unknown(rule: Rule, expected: str, why: str, column: str | None = None) -> Assertion:
    return _result(rule, False, expected, UNKNOWN, why, column)


def _not_applicable(rule: Rule, expected: str, why: str, column: str | None = None) -> Assertion:
    return _result(rule, True, expected, NOT_APPLICABLE, why, column)


def _bounded(rule: Rule, expected: str, value: float | None, limit: float, shown: str, why_unknown: str) -> Assertion:
    if value is None:
        return _unknown(rule, expected, why_unknown)
    return _result(rule, value <= limit, expected, shown)


def row_estimate(stats: SnapshotStats) -> tuple[int | None, bool]:
    """Rows of a snapshot and whether that is exact: ``live_records`` when exact, else records minus position and
    DV deletes (equality-deleted rows cannot be counted from metadata)."""
    if stats.live_records is not None:
        return stats.live_records, True
    if stats.records is not None and stats.position_deletes is not None:
        return max(stats.records - stats.position_deletes, 0), False
    return None, False


def _row_count(rule: Rule, inputs: CheckInputs) -> list[Assertion]:
    s, minimum, max_drop = inputs.stats, rule.settings.get("min"), rule.settings.get("max_drop_pct")
    expected = ", ".join([*([f">= {minimum} rows"] if minimum is not None else []),
                          *([f"drop <= {max_drop:g}%"] if max_drop is not None else [])]) or "any"
    assert s is not None
    rows, exact = row_estimate(s)
    if rows is None:
        return [_unknown(rule, expected, "the metadata gives neither live records nor records and position deletes")]
    notes = [] if exact else ["estimate: records minus position and DV deletes (equality deletes not subtracted)"]
    success, actual = minimum is None or rows >= minimum, str(rows)
    if max_drop is not None:
        parent_rows = row_estimate(inputs.parent)[0] if inputs.parent is not None else None
        if inputs.parent is None:
            if minimum is None:
                return [_not_applicable(rule, expected, NO_PARENT)]
            notes.append(f"{NO_PARENT}: drop not checked")
        elif parent_rows is None:
            return [_unknown(rule, expected, "the parent snapshot's rows are unknown")]
        else:
            change = 100.0 * (rows - parent_rows) / parent_rows if parent_rows else 0.0
            success = success and -change <= max_drop
            actual = f"{rows} ({change:+.1f}% from {parent_rows})"
    return [_result(rule, success, expected, actual, "; ".join(notes) or None)]


def _ratio_rule(rule: Rule, limit: float, expected: str, part: int | None, whole: int | None, what: str,
                empty: str) -> Assertion:
    if part is None or whole is None:
        return _unknown(rule, expected, f"the metadata does not give {what}")
    if whole == 0:
        return _not_applicable(rule, expected, empty)
    return _result(rule, part / whole <= limit, expected, f"{ratio(part / whole)} ({part} of {whole})")


def _small_files(rule: Rule, inputs: CheckInputs) -> list[Assertion]:
    size, limit = rule.settings["size"], rule.settings["max_ratio"]
    expected = f"<= {limit:g} of files < {shown_size(size)}"
    sizes = inputs.stats.file_sizes if inputs.stats is not None else None
    if sizes is not None and sizes.small_file_threshold != size:
        sizes = None
    return [_ratio_rule(rule, limit, expected, sizes.small_files if sizes else None, sizes.count if sizes else None,
                        "the data file sizes", "no data files")]


def _delete_ratio(rule: Rule, inputs: CheckInputs) -> list[Assertion]:
    s = inputs.stats
    assert s is not None
    limit = rule.settings["max"]
    expected = f"<= {limit:g} of records"
    return [_ratio_rule(rule, limit, expected, s.position_deletes, s.records, "the position-deleted rows and records",
                        "no records")]


def _equality_deletes(rule: Rule, inputs: CheckInputs) -> list[Assertion]:
    s = inputs.stats
    assert s is not None
    limit = rule.settings["max_files_ratio"]
    expected = f"<= {limit:g} per data file"
    return [_ratio_rule(rule, limit, expected, s.equality_delete_files, s.data_files,
                        "the equality-delete and data file counts", "no data files")]


def _snapshots(rule: Rule, inputs: CheckInputs) -> list[Assertion]:
    limit = rule.settings["max"]
    return [_result(rule, inputs.snapshot_count <= limit, f"<= {limit}", str(inputs.snapshot_count))]


def _manifests(rule: Rule, inputs: CheckInputs) -> list[Assertion]:
    s, limit = inputs.stats, rule.settings["max"]
    assert s is not None
    known = s.data_manifests is not None and s.delete_manifests is not None
    total = (s.data_manifests or 0) + (s.delete_manifests or 0) if known else None
    return [_bounded(rule, f"<= {limit}", total, limit, str(total), "the manifest list was not read")]


def _freshness(rule: Rule, inputs: CheckInputs) -> list[Assertion]:
    max_age = rule.settings["max_age"]
    expected = f"<= {max_age:g} s since the last commit on main"
    if inputs.main_timestamp_ms is None:
        return [_unknown(rule, expected, "no commit on main")]
    age = (inputs.now_ms - inputs.main_timestamp_ms) / 1000
    return [_result(rule, age <= max_age, expected, f"{age:.0f} s")]


def _null_fraction(rule: Rule, inputs: CheckInputs) -> list[Assertion]:
    limit, out = rule.settings["max"], []
    columns = inputs.stats.columns if inputs.stats is not None else {}
    expected = f"<= {limit:g}"
    for pattern in rule.settings["columns"]:
        names = [n for n, _ in inputs.schema.columns() if fnmatch.fnmatchcase(n, pattern)]
        if not names:
            out.append(_result(rule, False, expected, "missing", f"no column {pattern} in the schema", pattern))
        for name in names:
            col = columns.get(name)
            if col is None or col.null_count is None or col.value_count is None:
                out.append(_unknown(rule, expected, inputs.counts_gaps.get(name, CountsGap(0)).describe(name), name))
            elif col.value_count == 0:
                out.append(_not_applicable(rule, expected, "no values", name))
            else:
                frac = col.null_count / col.value_count
                out.append(_result(rule, frac <= limit, expected,
                                   f"{ratio(frac)} ({col.null_count} of {col.value_count})", column=name))
    return out


def _partition_skew(rule: Rule, inputs: CheckInputs) -> list[Assertion]:
    limit = rule.settings["max_ratio"]
    expected = f"largest <= {limit:g} x median records"
    counts = inputs.partition_records
    if counts is None:
        return [_unknown(rule, expected, "records per partition were not counted")]
    if len(counts) < 2:
        return [_not_applicable(rule, expected, "fewer than two partitions")]
    ordered = sorted(counts)
    mid = len(ordered) // 2
    median = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    if median == 0:
        return [_not_applicable(rule, expected, "the median partition holds no records")]
    skew = ordered[-1] / median
    return [_result(rule, skew <= limit, expected, f"{ratio(skew)} ({ordered[-1]} / {median:g})")]


def schema_assertions(rule: Rule, old: Schema | None, new: Schema, format_version: int = 2) -> list[Assertion]:
    """One assertion per reported change (``success`` false, the severity its kind's), or one passing assertion
    when nothing the rule reports changed; not applicable without a previous schema."""
    reported = [k for k in ("added", "removed", "type_changed", "promoted", "renamed")
                if rule.settings[k] != "ignore"]
    expected = "no " + ", ".join(reported) if reported else "any change"
    if old is None:
        return [_not_applicable(rule, expected, NO_PARENT)]
    out = []
    for change in schema_diff(old, new, format_version):
        severity = rule.settings[change.kind]
        names = (change.name, change.old_name or change.name)
        if severity == "ignore" or any(fnmatch.fnmatchcase(n, g) for g in rule.settings["ignore"] for n in names):
            continue
        out.append(Assertion("schema", f"schema.{change.kind}", False, severity, expected, change.describe(),
                             change.name, f"field id {change.field_id}", rule.params, change))
    return out or [_result(rule, True, expected, "no change")]


def _schema(rule: Rule, inputs: CheckInputs) -> list[Assertion]:
    return schema_assertions(rule, inputs.parent_schema, inputs.schema, inputs.format_version)


_EVALUATORS: dict[str, Callable[[Rule, CheckInputs], list[Assertion]]] = {
    "freshness": _freshness, "row_count": _row_count, "null_fraction": _null_fraction, "small_files": _small_files,
    "delete_ratio": _delete_ratio, "equality_deletes": _equality_deletes, "snapshots": _snapshots,
    "manifests": _manifests, "partition_skew": _partition_skew, "schema": _schema,
}
#: Rules that still apply to a table without any snapshot.
_WITHOUT_SNAPSHOT = frozenset({"freshness", "snapshots"})


def evaluate_rule(rule: Rule, inputs: CheckInputs) -> list[Assertion]:
    if inputs.stats is None and rule.kind not in _WITHOUT_SNAPSHOT:
        return [_not_applicable(rule, "", "the table has no snapshot")]
    return _EVALUATORS[rule.kind](rule, inputs)


def evaluate(rules: RuleSet, inputs: CheckInputs) -> tuple[Assertion, ...]:
    """Every rule's assertions, in rule order."""
    return tuple(a for rule in rules.rules for a in evaluate_rule(rule, inputs))
