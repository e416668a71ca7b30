"""The ``jobs`` report as HTML for Jupyter: one row per job, failures in red, flagged jobs marked.

Job names, table names and error messages come from whoever wrote the events: every cell goes through
:func:`html.escape` (:func:`~iceberg_lineage.stats.html.html_table` takes escaped cells only). It sits below the
model, so it takes the model's objects without importing their classes.
"""
from __future__ import annotations

import html
from typing import Any

from iceberg_lineage.jobs.text import (
    FAILURE_COLUMNS, JOB_HEADINGS, NUMERIC_COLUMNS, ZERO_CELLS, failure_line, job_row, report_heading,
)
from iceberg_lineage.stats.html import html_table, html_title

_RED = '<span style="color:#c33;font-weight:bold">{}</span>'


def _cells(job: Any) -> list[str]:
    cells = [html.escape(cell) for cell in job_row(job)]
    for i in FAILURE_COLUMNS:
        if cells[i] not in ZERO_CELLS:
            cells[i] = _RED.format(cells[i])
    if job.flagged:
        cells[0] = _RED.format("⚑ " + cells[0])
    line = failure_line(job)
    if line is not None:
        cells[0] += f'<div style="color:#a33;font-size:11px">{html.escape(line)}</div>'
    return cells


def report_html(report: Any) -> str:
    title = html_title(html.escape(report_heading(report)))
    if not report.jobs:
        return title + "<div>no runs in these events</div>"
    bad = "".join(f'<div style="color:#a33">{html.escape(f"{b.file}:{b.line}: {b.reason}")}</div>'
                  for b in report.bad_line_samples)
    return title + html_table(JOB_HEADINGS, (_cells(job) for job in report.jobs), right=NUMERIC_COLUMNS) + bad


__all__ = ["report_html"]
