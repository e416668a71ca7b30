"""Which columns get statistics: the ``column_stats`` policy (mode, include/exclude globs, a column cap).

Column bounds can be personal data, so the policy is applied before anything is computed or emitted.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Iterable, Literal

ColumnMode = Literal["none", "counts", "bounds"]
COLUMN_MODES: tuple[ColumnMode, ...] = ("none", "counts", "bounds")


@dataclass(frozen=True)
class ColumnSelection:
    mode: ColumnMode = "bounds"
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_columns: int = 200

    def __post_init__(self) -> None:
        if self.mode not in COLUMN_MODES:
            raise ValueError(f"column_stats.mode must be one of {', '.join(COLUMN_MODES)}, not {self.mode!r}")
        if self.max_columns < 0:
            raise ValueError("column_stats.max_columns must not be negative")

    def wants(self, name: str) -> bool:
        """Whether a dotted column name passes the include/exclude globs (exclude wins)."""
        if self.mode == "none":
            return False
        if self.include and not any(fnmatch.fnmatchcase(name, g) for g in self.include):
            return False
        return not any(fnmatch.fnmatchcase(name, g) for g in self.exclude)

    def select(self, names: Iterable[str]) -> tuple[list[str], list[str]]:
        """Split names (in schema order) into (kept, omitted); omitted are cut by the globs or the cap."""
        kept: list[str] = []
        omitted: list[str] = []
        if self.mode == "none":
            return kept, omitted
        for name in names:
            if self.wants(name) and len(kept) < self.max_columns:
                kept.append(name)
            else:
                omitted.append(name)
        return kept, omitted

    @property
    def with_bounds(self) -> bool:
        return self.mode == "bounds"


ALL_COLUMNS = ColumnSelection()
