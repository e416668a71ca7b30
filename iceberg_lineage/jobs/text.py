"""How job statistics read to people: the cells that the CLI's rich table and the notebook's HTML table share (each
adds only its own markup and escaping). It sits below the model, so it takes the model's objects without
importing their classes."""
from __future__ import annotations

import datetime as dt
from typing import Any

from iceberg_lineage.stats.text import format_value, human_bytes

#: Run states of the report, in the order they are counted and drawn.
STATES = ("completed", "failed", "aborted", "open")
#: Headings of the per-job table; :func:`job_row` gives the cells in this order.
JOB_HEADINGS = ("job", "completed", "failed", "aborted", "open", "failure rate", "p50", "p95", "rows written",
                "bytes written", "tables read → written")
#: Columns whose cells say something went wrong when they are not zero (or unknown: ``ZERO_CELLS``).
FAILURE_COLUMNS = (2, 3, 5)
ZERO_CELLS = ("0", "0.0 %", "—")
#: Right-aligned (numeric) columns.
NUMERIC_COLUMNS = tuple(range(1, 10))
_SHOWN_TABLES = 3


def iso(moment: dt.datetime | None) -> str | None:
    """ISO 8601 in UTC with milliseconds and ``Z``, as OpenLineage writes event times."""
    if moment is None:
        return None
    return moment.astimezone(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def human_duration(seconds: float | None) -> str:
    """``850 ms``, ``12.3 s``, ``4.2 min``, ``1.5 h``, ``2.1 d``; ``—`` for unknown."""
    if seconds is None:
        return "—"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.1f} s"


def percent(rate: float | None) -> str:
    return "—" if rate is None else f"{100 * rate:.1f} %"


def _tables(names: tuple[tuple[str, str], ...], truncated: bool) -> str:
    shown = [name for _, name in names[:_SHOWN_TABLES]]
    more = len(names) - len(shown)
    return ", ".join(shown) + (f" +{more}" if more else "") + ("+" if truncated else "") if shown else "—"


def job_row(job: Any) -> tuple[str, ...]:
    """The cells of one JobStats, as text (not yet escaped)."""
    tables = f"{_tables(job.inputs, job.tables_truncated)} → {_tables(job.outputs, job.tables_truncated)}"
    return (job.label, format_value(job.completed), format_value(job.failed), format_value(job.aborted),
            format_value(job.open), percent(job.failure_rate), human_duration(job.duration_p50_s),
            human_duration(job.duration_p95_s), format_value(job.rows_written), human_bytes(job.bytes_written),
            tables)


def failure_line(job: Any) -> str | None:
    """``last failure at TIME (FAIL, run ID): message`` of a job that failed, else ``None``."""
    last = job.last_failure
    if last is None:
        return None
    message = last.message if last.message is not None else "no errorMessage"
    return f"last failure at {iso(last.time)} ({last.state}, run {last.run_id}): {message}"


def report_heading(report: Any) -> str:
    """One line: how many jobs and events, from where, since when, and which are flagged."""
    sources = ", ".join(report.sources) or "no source"
    since = f" since {iso(report.since)}" if report.since is not None else ""
    line = f"{len(report.jobs)} job(s), {report.events} run event(s) from {sources}{since}"
    if report.max_failure_rate is not None:
        line += f"; {len(report.flagged)} above {percent(report.max_failure_rate)} failures"
    if report.bad_lines:
        line += f"; {report.bad_lines} bad line(s) skipped"
    return line


__all__ = ["FAILURE_COLUMNS", "JOB_HEADINGS", "NUMERIC_COLUMNS", "STATES", "ZERO_CELLS", "failure_line",
           "human_duration", "iso", "job_row", "percent", "report_heading"]
