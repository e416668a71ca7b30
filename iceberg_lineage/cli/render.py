"""Readable terminal output of statistics (rich tables). Only the CLI's text format uses it; the rows are those of
the notebook's HTML (:mod:`iceberg_lineage.stats.text`).

Rich renders every string as markup, and names, refs, locations and bounds come from metadata: each passes through
:func:`~iceberg_lineage.printable.markup_safe` (``[/bold]`` stays text, an escape sequence is shown, not obeyed)."""
from __future__ import annotations

from typing import Any

from iceberg_lineage.printable import markup_safe
from iceberg_lineage.stats.model import SnapshotStats, TableHistory
from iceberg_lineage.stats.text import COLUMN_HEADINGS, column_row, figure_rows


def snapshot_tables(s: SnapshotStats) -> list[Any]:
    from rich.table import Table

    title = (
        f"snapshot {s.snapshot_id} · {markup_safe(s.operation or '?')} · {s.timestamp.isoformat()} · "
        f"refs: {', '.join(markup_safe(r) for r in s.refs) or ('staged' if s.staged else '—')}"
        + ("" if s.available else " · UNAVAILABLE (manifest list gone)")
    )
    figures = Table(title=title, title_justify="left", show_header=True)
    figures.add_column("figure")
    figures.add_column("value", justify="right")
    figures.add_column("source")
    for row in figure_rows(s):
        figures.add_row(*map(markup_safe, row))
    out = [figures]
    if s.columns:
        cols = Table(show_header=True, title="columns", title_justify="left")
        for heading in COLUMN_HEADINGS:
            cols.add_column(heading)
        for name, c in s.columns.items():
            cols.add_row(*map(markup_safe, column_row(name, c)))
        out.append(cols)
    return out


def print_history(history: TableHistory) -> None:
    from rich.console import Console

    console = Console()
    t = history.table
    console.print(f"[bold]{markup_safe(t.name or t.location)}[/bold]  uuid {markup_safe(t.uuid)}  "
                  f"v{t.format_version}  location {markup_safe(t.location)}", highlight=False)
    for s in history.snapshots:
        for table in snapshot_tables(s):
            console.print(table)
