"""Compact HTML for Jupyter: pure functions from statistics and event JSON to markup.

Every name and value goes through :func:`html.escape`: column names, bounds, job names and facet values come from
tables and catalogs we do not control, and must never become markup in the notebook.
"""
from __future__ import annotations

import datetime as dt
import html
import json
from typing import Any, Iterable, Mapping, Sequence

from iceberg_lineage.cli.render import FIGURE_ROWS, format_value
from iceberg_lineage.stats.model import ColumnStats, SnapshotStats, TableHistory

_TABLE = '<table style="border-collapse:collapse;font-size:12px">'
_CELL = "padding:1px 8px;text-align:{align};vertical-align:top"
_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def e(value: Any) -> str:
    """A value as escaped text: ``—`` for unknown, thousands separators for counts."""
    return html.escape(format_value(value))


def human_bytes(n: int | float | None) -> str:
    """Bytes in binary units (``1.5 MiB``), for people; JSON and the CLI keep exact bytes."""
    if n is None:
        return "—"
    exponent = min((int(abs(n)).bit_length() - 1) // 10, len(_UNITS) - 1) if n else 0
    if exponent == 0:
        return f"{int(n)} B"
    return f"{n / 1024 ** exponent:.1f}".removesuffix(".0") + f" {_UNITS[exponent]}"


def _when(ms: int) -> str:
    moment = dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _table(header: Sequence[str], rows: Iterable[Sequence[str]], right: Iterable[int] = ()) -> str:
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


def _title(text: str) -> str:
    return f'<div style="font-weight:bold;margin:6px 0 2px">{text}</div>'


def _note(text: str) -> str:
    return f'<div style="color:#a33;margin:2px 0">{text}</div>'


def _snapshot_title(stats: SnapshotStats) -> str:
    refs = ", ".join(stats.refs) or ("staged" if stats.staged else "—")
    return e(f"snapshot {stats.snapshot_id} · {stats.operation or '?'} · {_when(stats.timestamp_ms)} · refs: {refs}")


def snapshot_html(stats: SnapshotStats) -> str:
    """One snapshot: its figures with where each came from, file sizes, partitions and per-column metrics."""
    parts = [_title(_snapshot_title(stats))]
    if not stats.available:
        parts.append(_note("manifest list unavailable: only the summary's figures are known"))
    if stats.error:
        parts.append(_note(e(stats.error)))
    parts.append(_table(
        ("figure", "value", "source"),
        ((e(label), e(getattr(stats, key)), e(stats.sources.get(key, ""))) for label, key in FIGURE_ROWS),
        right=(1,),
    ))
    sizes = stats.file_sizes
    if sizes is not None:
        parts.append(_title("data file sizes"))
        parts.append(_table(
            ("files", "min", "≈ median", "mean", "max", f"small (< {human_bytes(sizes.small_file_threshold)})"),
            [(e(sizes.count), e(human_bytes(sizes.min)), e(human_bytes(sizes.approx_median)),
              e(human_bytes(sizes.mean)), e(human_bytes(sizes.max)), e(sizes.small_files))],
            right=range(6),
        ))
    if stats.partitions:
        parts.append(_title("partitions per spec"))
        parts.append(_table(("spec", "partitions", "data files"),
                           ((e(p.spec_id), e(p.partitions), e(p.files)) for p in stats.partitions), right=range(3)))
    if stats.columns:
        parts.append(_title("columns"))
        parts.append(_table(
            ("column", "type", "values", "nulls", "null %", "NaNs", "min", "max", "distinct"),
            (_column_row(name, c) for name, c in stats.columns.items()),
            right=(2, 3, 4, 5, 8),
        ))
    if stats.columns_omitted:
        parts.append(f"<div>columns without metrics (not selected): {e(', '.join(stats.columns_omitted))}</div>")
    return f'<div class="iceberg-lineage-snapshot">{"".join(parts)}</div>'


def _column_row(name: str, c: ColumnStats) -> tuple[str, ...]:
    nulls = None
    if c.null_count is not None and c.value_count:
        nulls = f"{100 * c.null_count / c.value_count:.1f}"
    cut = "…" if c.bounds_truncated else ""
    return (e(name), e(c.type), e(c.value_count), e(c.null_count), e(nulls), e(c.nan_count),
            e(c.min) + cut, e(c.max) + cut, e(c.distinct_count))


def history_html(history: TableHistory) -> str:
    """A table's snapshots in commit order, one row each; the current snapshot is bold."""
    info = history.table
    head = e(f"{info.name or info.location} · format v{info.format_version} · uuid {info.uuid} · "
             f"{len(history)} snapshot(s)")
    rows = []
    for s in history.snapshots:
        cells = (
            e(s.snapshot_id), e(_when(s.timestamp_ms)), e(s.operation or "?"), e(", ".join(s.refs)),
            e(s.records), e(s.data_files), e(s.delete_files), e(human_bytes(s.total_files_size_bytes)),
            e(s.added_records), e(s.removed_records), e(s.schema_id),
            e(s.error or ("" if s.available else "manifest list unavailable: summary figures only")),
        )
        rows.append(tuple(f"<b>{cell}</b>" for cell in cells) if s.snapshot_id == info.current_snapshot_id else cells)
    body = _table(
        ("snapshot", "committed (UTC)", "operation", "refs", "records", "data files", "delete files",
         "total size", "added records", "removed records", "schema", "note"),
        rows, right=(4, 5, 6, 7, 8, 9, 10),
    )
    return f'<div class="iceberg-lineage-history">{_title(head)}<div>{e(info.location)}</div>{body}</div>'


# -- OpenLineage events (as the JSON documents that were sent) --------------------------------------------------------


def dataset_label(dataset: Mapping[str, Any]) -> str:
    """The table's catalog name when the event has one (``symlinks``), else ``namespace:name``; then ``@ version``."""
    facets = dataset.get("facets") or {}
    names = [i.get("name") for i in (facets.get("symlinks") or {}).get("identifiers") or [] if i.get("name")]
    label = names[0] if names else f"{dataset.get('namespace')}:{dataset.get('name')}"
    version = (facets.get("version") or {}).get("datasetVersion")
    return f"{label} @ {version}" if version else label


def _datasets(items: Sequence[Mapping[str, Any]] | None) -> str:
    return "<br>".join(
        f'<span title="{html.escape(str(d.get("namespace")))}:{html.escape(str(d.get("name")))}">'
        f"{html.escape(dataset_label(d))}</span>"
        for d in items or ()
    )


def event_kind(event: Mapping[str, Any]) -> str:
    """RunEvents have an eventType; dataset and job events are named by their kind."""
    if event.get("eventType"):
        return str(event["eventType"])
    return "DATASET" if "dataset" in event else "JOB"


def event_type_label(event: Mapping[str, Any]) -> str:
    """The event type with the job type our events carry (``COMPLETE · ALTER``): a commit, a scan and a schema
    change are all COMPLETE runs."""
    job_type = (((event.get("job") or {}).get("facets") or {}).get("jobType") or {}).get("jobType")
    return f"{event_kind(event)} · {job_type}" if job_type else event_kind(event)


def event_job(event: Mapping[str, Any]) -> str:
    job = event.get("job") or {}
    return f"{job.get('namespace')}/{job.get('name')}" if job else ""


def events_html(events: Sequence[Mapping[str, Any]]) -> str:
    """Events in the order they were sent: time, type, job, inputs and outputs with their versions."""
    if not events:
        return "<div>no OpenLineage events yet</div>"
    rows = []
    for i, ev in enumerate(events):
        outputs = ev.get("outputs") or ([ev["dataset"]] if "dataset" in ev else [])
        rows.append((e(i), e(ev.get("eventTime")), e(event_type_label(ev)), e(event_job(ev)),
                     _datasets(ev.get("inputs")), _datasets(outputs)))
    return _table(("#", "time", "type", "job", "inputs", "outputs"), rows, right=(0,))


def json_html(summary: str, data: Any) -> str:
    """A pretty-printed JSON document, open, that a click on its summary line folds away."""
    text = json.dumps(data, indent=2, sort_keys=True, default=str)
    return (f"<details open><summary>{html.escape(summary)}</summary>"
            f'<pre style="font-size:11px;max-height:40em;overflow:auto">{html.escape(text)}</pre></details>')


def event_summary(event: Mapping[str, Any]) -> str:
    """One line naming an event: type, job, time."""
    return f"{event_kind(event)} {event_job(event)} at {event.get('eventTime')}"


def event_html(event: Mapping[str, Any]) -> str:
    return json_html(event_summary(event), event)


def mapping_html(title: str, values: Mapping[str, Any]) -> str:
    """A two-column table of named values (status lines, scan summaries)."""
    return _title(e(title)) + _table(("", ""), ((e(k), e(v)) for k, v in values.items()))


__all__ = [
    "dataset_label",
    "event_html",
    "event_kind",
    "event_summary",
    "event_type_label",
    "events_html",
    "history_html",
    "human_bytes",
    "json_html",
    "mapping_html",
    "snapshot_html",
]
