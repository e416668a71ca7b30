"""``iceberg-lineage jobs``: runs, failure rates, durations and tables of every job in OpenLineage event files.

Exit codes: 0 no job is above ``--max-failure-rate`` (or none was given); 1 some job is (flagged); 2 usage error,
including an events file that is missing or a directory. Bad lines do not change the exit code: each of the first
ones is named on stderr (file:line and why), then their count.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from iceberg_lineage.cli.common import EXIT_OK, EXIT_TABLE_FAILED, debug_option, default_format, parsed_by, run_guarded
from iceberg_lineage.jobs.options import parse_rate
from iceberg_lineage.printable import markup_safe, printable
from iceberg_lineage.times import parse_since

if TYPE_CHECKING:
    from iceberg_lineage.jobs import JobsReport


#: Columns of the text table when it is not written to a terminal.
_PIPE_WIDTH = 200


@click.command("jobs")
@click.option("--events", "events", multiple=True, metavar="FILE",
              help="OpenLineage events, JSON Lines, plain or gzip; '-' for stdin; repeatable "
                   "(default: events.jsonl beside state.path, in the per-user state folder: the embedded file "
                   "transport's).")
@click.option("--since", metavar="AGE|TIME", callback=parsed_by(parse_since),
              help="Only events since then: 7d, 12h, 30m, 90s, 2w, or an ISO 8601 time.")
@click.option("--job", "job_globs", multiple=True, metavar="GLOB",
              help="Only jobs whose name matches (namespace/name when the glob has a '/'); repeatable.")
@click.option("--max-failure-rate", metavar="RATE", callback=parsed_by(parse_rate),
              help="Flag the jobs failing more often than this (5% or 0.05); exit 1 if any is.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default=None,
              help="text (a table) is the default on a terminal, json otherwise.")
@debug_option
def jobs_command(events, since, job_globs, max_failure_rate, fmt, debug) -> None:
    """Job statistics and failure rates from OpenLineage run events."""

    def body() -> int:
        from iceberg_lineage.jobs import read_jobs

        report = read_jobs(list(events) or None, since=since, job=job_globs, max_failure_rate=max_failure_rate)
        for bad in report.bad_line_samples:
            click.echo(printable(f"iceberg-lineage: jobs: {bad.file}:{bad.line}: {bad.reason}"), err=True)
        if report.bad_lines:
            click.echo(f"iceberg-lineage: jobs: {report.bad_lines} bad line(s) skipped", err=True)
        if (fmt or default_format()) == "json":
            for chunk in report.json_chunks():
                click.echo(chunk, nl=False)
            click.echo()
        else:
            print_report(report)
        return EXIT_TABLE_FAILED if report.flagged else EXIT_OK

    run_guarded(debug, body)


def print_report(report: JobsReport) -> None:
    """A rich table, one row per job; flagged jobs in bold red, failure counts in red, every value escaped."""
    from rich.console import Console
    from rich.table import Table

    from iceberg_lineage.jobs.text import (
        FAILURE_COLUMNS, JOB_HEADINGS, NUMERIC_COLUMNS, ZERO_CELLS, failure_line, job_row, report_heading,
    )

    console = Console()
    if not console.is_terminal:  # a file or a pipe: no line is cut at 80 columns
        console.width = max(console.width, _PIPE_WIDTH)
    console.print(markup_safe(report_heading(report)), soft_wrap=True, highlight=False)
    table = Table()
    for i, heading in enumerate(JOB_HEADINGS):
        table.add_column(heading, justify="right" if i in NUMERIC_COLUMNS else "left")
    for job in report.jobs:
        cells = [markup_safe(cell) for cell in job_row(job)]
        for i in FAILURE_COLUMNS:
            if cells[i] not in ZERO_CELLS:
                cells[i] = f"[red]{cells[i]}[/red]"
        table.add_row(*cells, style="bold red" if job.flagged else None)
    console.print(table)
    for job in report.jobs:
        line = failure_line(job)
        if line is not None:
            style = "bold red" if job.flagged else "red"
            console.print(f"[{style}]{markup_safe(job.label)}[/{style}]: {markup_safe(line)}", highlight=False,
                          soft_wrap=True)
