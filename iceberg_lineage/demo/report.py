"""What ``make run`` prints after its scan: one row per demo table (snapshots emitted, current version, rows, files,
last operation) and two commands to try next, which work as printed."""
from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from iceberg_lineage.errors import IcebergLineageError
from iceberg_lineage.read.catalogs import DEFAULT_CATALOG
from iceberg_lineage.read.source import open_table
from iceberg_lineage.scan.summary import TableOutcome
from iceberg_lineage.stats import table_history

HEADINGS = ("table", "snapshots emitted", "current version", "rows", "files", "last operation")


@dataclass(frozen=True)
class DemoRow:
    """One demo table after the scan; ``version`` is the current snapshot id, the events' ``datasetVersion``."""

    table: str
    emitted: int
    by_hooks: int
    version: int | None
    rows: int | None
    files: int | None
    operation: str | None

    def cells(self) -> tuple[str, ...]:
        emitted = str(self.emitted) + (f" (+{self.by_hooks} by the hook)" if self.by_hooks else "")
        return (self.table, emitted, *("?" if v is None else str(v)
                                       for v in (self.version, self.rows, self.files, self.operation)))


def demo_rows(catalog: Any, identifiers: Iterable[str], outcomes: Mapping[str, TableOutcome]) -> list[DemoRow]:
    """The figures ``iceberg-lineage stats --depth summary`` gives of each table's current snapshot."""
    rows = []
    for identifier in identifiers:
        try:
            loaded = open_table(identifier, catalog=catalog)
            current = loaded.metadata.current_snapshot_id
            history = table_history(loaded, depth="summary", snapshot_ids=[] if current is None else [current])
            s = history.snapshots[-1] if history.snapshots else None
        except IcebergLineageError:  # the scan's summary says why; the row shows "?"
            s = None
        outcome = outcomes.get(identifier)
        rows.append(DemoRow(identifier, outcome.emitted if outcome else 0, outcome.by_hooks if outcome else 0,
                            s and s.snapshot_id, s and s.records, s and s.data_files, s and s.operation))
    return rows


def table_text(rows: Sequence[DemoRow]) -> str:
    """A plain fixed-width table (it goes to stderr, often a log, rarely a terminal); numbers right-aligned."""
    lines = [HEADINGS, *(row.cells() for row in rows)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(HEADINGS))]
    left = {0, len(HEADINGS) - 1}
    return "\n".join(
        "  ".join(cell.ljust(w) if i in left else cell.rjust(w) for i, (cell, w) in enumerate(zip(line, widths)))
        .rstrip() for line in lines)


def cli_command() -> str:
    """How to run ``iceberg-lineage`` from here: the console script beside this interpreter (``.venv/bin`` is not
    on PATH unless activated), relative when it lies below the working directory."""
    script = Path(sys.executable).with_name("iceberg-lineage")
    if not script.exists():
        return f"{shlex.quote(sys.executable)} -m iceberg_lineage.cli"
    try:
        shown = script.relative_to(Path.cwd())
    except ValueError:
        shown = script
    return shlex.quote(str(shown))


def next_commands(identifier: str) -> list[str]:
    """A ``stats`` and an ``events`` on a demo table, through the embedded default catalog."""
    where = f"--catalog {DEFAULT_CATALOG} --table {shlex.quote(identifier)}"
    return [f"{cli_command()} stats {where}", f"{cli_command()} events {where} --all-snapshots"]


def next_steps(example: str) -> str:
    return "\n".join(["try next:", *(f"  {command}" for command in next_commands(example))])
