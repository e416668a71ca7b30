"""Readable terminal output of statistics (rich tables). Only the CLI's text format uses it."""
from __future__ import annotations

from typing import Any

from iceberg_lineage.stats.model import SnapshotStats, TableHistory, bound_to_json


def format_value(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(bound_to_json(value))


FIGURE_ROWS = (
    ("data files", "data_files"),
    ("records", "records"),
    ("live records", "live_records"),
    ("data bytes", "data_files_size_bytes"),
    ("position-delete files", "position_delete_files"),
    ("equality-delete files", "equality_delete_files"),
    ("deletion vectors", "dv_files"),
    ("position deletes (incl. DVs)", "position_deletes"),
    ("equality deletes", "equality_deletes"),
    ("delete bytes", "delete_files_size_bytes"),
    ("total bytes", "total_files_size_bytes"),
    ("added data files", "added_data_files"),
    ("removed data files", "removed_data_files"),
    ("added records", "added_records"),
    ("removed records", "removed_records"),
    ("data manifests", "data_manifests"),
    ("delete manifests", "delete_manifests"),
)


def snapshot_tables(s: SnapshotStats) -> list[Any]:
    from rich.table import Table

    title = (
        f"snapshot {s.snapshot_id} · {s.operation or '?'} · {s.timestamp.isoformat()} · "
        f"refs: {', '.join(s.refs) or ('staged' if s.staged else '—')}"
        + ("" if s.available else " · UNAVAILABLE (manifest list gone)")
    )
    figures = Table(title=title, title_justify="left", show_header=True)
    figures.add_column("figure")
    figures.add_column("value", justify="right")
    figures.add_column("source")
    for label, key in FIGURE_ROWS:
        figures.add_row(label, format_value(getattr(s, key)), s.sources.get(key, ""))
    out = [figures]
    if s.columns:
        cols = Table(show_header=True, title="columns", title_justify="left")
        for name in ("column", "type", "values", "nulls", "NaNs", "min", "max", "distinct"):
            cols.add_column(name)
        for name, c in s.columns.items():
            trunc = "…" if c.bounds_truncated else ""
            cols.add_row(name, c.type, format_value(c.value_count), format_value(c.null_count), format_value(c.nan_count),
                         format_value(c.min) + trunc, format_value(c.max) + trunc, format_value(c.distinct_count))
        out.append(cols)
    return out


def print_history(history: TableHistory) -> None:
    from rich.console import Console

    console = Console()
    t = history.table
    console.print(f"[bold]{t.name or t.location}[/bold]  uuid {t.uuid}  v{t.format_version}  location {t.location}")
    for s in history.snapshots:
        for table in snapshot_tables(s):
            console.print(table)
