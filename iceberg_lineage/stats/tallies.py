"""The named accumulators of a manifest's partial statistics (:mod:`~iceberg_lineage.stats.partials`): one column's
metrics, and one snapshot's changes. Plain classes with slots: they are updated once per manifest entry."""
from __future__ import annotations


class ColumnTally:
    """One column's metrics over some data files: the value, null and NaN counts and how many files gave each (a
    sum is exact only when every file did), the winning bounds and how many files had each, the files that hold
    only nulls, and the greatest lower bound (``max_lower``), kept for types Iceberg may truncate: an upper bound
    equal to it is a value, so it is exact. Slots, not a dict: this is the per-entry hot path."""

    __slots__ = ("values", "value_files", "nulls", "null_files", "nans", "nan_files", "lower", "upper",
                 "lower_files", "upper_files", "all_null_files", "max_lower")

    def __init__(self) -> None:
        self.values = self.value_files = self.nulls = self.null_files = self.nans = self.nan_files = 0
        self.lower_files = self.upper_files = self.all_null_files = 0
        self.lower = self.upper = self.max_lower = None

    def merge(self, other: "ColumnTally") -> None:
        self.values += other.values
        self.value_files += other.value_files
        self.nulls += other.nulls
        self.null_files += other.null_files
        self.nans += other.nans
        self.nan_files += other.nan_files
        self.lower_files += other.lower_files
        self.upper_files += other.upper_files
        self.all_null_files += other.all_null_files
        if other.lower is not None and (self.lower is None or other.lower < self.lower):
            self.lower = other.lower
        if other.upper is not None and (self.upper is None or other.upper > self.upper):
            self.upper = other.upper
        if other.max_lower is not None and (self.max_lower is None or other.max_lower > self.max_lower):
            self.max_lower = other.max_lower

    def copy(self) -> "ColumnTally":
        out = ColumnTally()
        out.merge(self)
        return out


class ChangeTally:
    """What the entries one snapshot wrote in a manifest added (or removed): data files, their records and bytes,
    delete files and their bytes."""

    __slots__ = ("data_files", "records", "data_bytes", "delete_files", "delete_bytes")

    def __init__(self) -> None:
        self.data_files = self.records = self.data_bytes = self.delete_files = self.delete_bytes = 0

    def merge(self, other: "ChangeTally") -> "ChangeTally":
        self.data_files += other.data_files
        self.records += other.records
        self.data_bytes += other.data_bytes
        self.delete_files += other.delete_files
        self.delete_bytes += other.delete_bytes
        return self

    def copy(self) -> "ChangeTally":
        return ChangeTally().merge(self)


__all__ = ["ChangeTally", "ColumnTally"]
