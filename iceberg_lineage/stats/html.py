"""Compact HTML of statistics for Jupyter (``_repr_html_``), and the table markup the notebook's event views share.

Every name and value goes through :func:`html.escape`: column names, bounds, job names and facet values come from
tables and catalogs we do not control, and must never become markup in the notebook. This module sits below the
model, which renders through it, so it takes the model's objects without importing their classes.
"""
from __future__ import annotations

import datetime as dt
import html
from typing import Any, Iterable, Sequence

from iceberg_lineage.stats.text import COLUMN_HEADINGS, column_row, figure_rows, format_value, human_bytes

_TABLE = '<table style="border-collapse:collapse;font-size:12px">'
_CELL = "padding:1px 8px;text-align:{align};vertical-align:top"
#: Right-aligned (numeric) columns of the per-column table.
_NUMERIC_COLUMNS = tuple(COLUMN_HEADINGS.index(h) for h in ("values", "nulls", "null %", "NaNs", "distinct"))


def escaped(value: object) -> str:
    """A value as escaped text: ``—`` for unknown, thousands separators for counts."""
    return html.escape(format_value(value))


def html_table(header: Sequence[str], rows: Iterable[Sequence[str]], right: Iterable[int] = ()) -> str:
    """A table of already-escaped cells; columns listed in ``right`` are right-aligned (numbers)."""
    right = set(right)

    def cells(tag: str, row: Sequence[str]) -> str:
        return "".join(
            f'<{tag} style="{_CELL.format(align="right" if i in right else "left")}">{cell}</{tag}>'
            for i, cell in enumerate(row)
        )

    body = "".join(f"<tr>{cells('td', row)}</tr>" for row in rows)
    head = cells("th", [html.escape(h) for h in header])
    return f"{_TABLE}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def html_title(text: str) -> str:
    return f'<div style="font-weight:bold;margin:6px 0 2px">{text}</div>'


def _note(text: str) -> str:
    return f'<div style="color:#a33;margin:2px 0">{text}</div>'


def _when(ms: int) -> str:
    moment = dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _snapshot_title(stats: Any) -> str:
    refs = ", ".join(stats.refs) or ("staged" if stats.staged else "—")
    return escaped(f"snapshot {stats.snapshot_id} · {stats.operation or '?'} · {_when(stats.timestamp_ms)} · "
                   f"refs: {refs}")


def _file_sizes(sizes: Any) -> list[str]:
    return [html_title("data file sizes"), html_table(
        ("files", "min", "≈ median", "mean", "max", f"small (< {human_bytes(sizes.small_file_threshold)})"),
        [(escaped(sizes.count), escaped(human_bytes(sizes.min)), escaped(human_bytes(sizes.approx_median)),
          escaped(human_bytes(sizes.mean)), escaped(human_bytes(sizes.max)), escaped(sizes.small_files))],
        right=range(6),
    )]


def snapshot_html(stats: Any) -> str:
    """One SnapshotStats: its figures with where each came from, file sizes, partitions and per-column metrics."""
    parts = [html_title(_snapshot_title(stats))]
    if not stats.available:
        parts.append(_note("manifest list unavailable: only the summary's figures are known"))
    if stats.error:
        parts.append(_note(escaped(stats.error)))
    parts.append(html_table(("figure", "value", "source"),
                            ([html.escape(cell) for cell in row] for row in figure_rows(stats)), right=(1,)))
    if stats.file_sizes is not None:
        parts += _file_sizes(stats.file_sizes)
    if stats.partitions:
        parts.append(html_title("partitions per spec"))
        parts.append(html_table(
            ("spec", "partitions", "data files"),
            ((escaped(p.spec_id), escaped(p.partitions), escaped(p.files)) for p in stats.partitions), right=range(3),
        ))
    if stats.columns:
        parts.append(html_title("columns"))
        parts.append(html_table(
            COLUMN_HEADINGS,
            ([html.escape(cell) for cell in column_row(name, c)] for name, c in stats.columns.items()),
            right=_NUMERIC_COLUMNS,
        ))
    if stats.columns_omitted:
        parts.append(f"<div>columns without metrics (not selected): {escaped(', '.join(stats.columns_omitted))}</div>")
    return f'<div class="iceberg-lineage-snapshot">{"".join(parts)}</div>'


def history_html(history: Any) -> str:
    """A TableHistory's snapshots in commit order, one row each; the current snapshot is bold."""
    info = history.table
    head = escaped(f"{info.name or info.location} · format v{info.format_version} · uuid {info.uuid} · "
                   f"{len(history)} snapshot(s)")
    rows = []
    for s in history.snapshots:
        cells = tuple(escaped(v) for v in (
            s.snapshot_id, _when(s.timestamp_ms), s.operation or "?", ", ".join(s.refs),
            s.records, s.data_files, s.delete_files, human_bytes(s.total_files_size_bytes),
            s.added_records, s.removed_records, s.schema_id,
            s.error or ("" if s.available else "manifest list unavailable: summary figures only"),
        ))
        rows.append(tuple(f"<b>{cell}</b>" for cell in cells) if s.snapshot_id == info.current_snapshot_id else cells)
    body = html_table(
        ("snapshot", "committed (UTC)", "operation", "refs", "records", "data files", "delete files",
         "total size", "added records", "removed records", "schema", "note"),
        rows, right=(4, 5, 6, 7, 8, 9, 10),
    )
    return f'<div class="iceberg-lineage-history">{html_title(head)}<div>{escaped(info.location)}</div>{body}</div>'


__all__ = ["escaped", "history_html", "html_table", "html_title", "human_bytes", "snapshot_html"]
