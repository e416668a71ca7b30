"""``iceberg-lineage scan``: parse arguments, run :func:`~iceberg_lineage.scan.run.scan_catalogs`, print the summary
on stderr.

Exit codes: 0 all well; 1 some tables (or namespaces, or deliveries) failed, or the server rejected an event; 2 usage,
configuration or lock error, or a destination other than the one the tables' events went to (until
``--new-destination``); 3 the work was done and events wait in the spool for ``replay`` (``docs/exit-codes.md``).
"""
from __future__ import annotations

import json
import sys

import click

from iceberg_lineage.cli.common import (
    EXIT_USAGE, column_flags, column_options, debug_option, fail, parsed_by, profile_option, run_guarded,
)
from iceberg_lineage.times import epoch_ms, parse_since



@click.command("scan")
@click.option("--catalog", "catalogs", multiple=True, metavar="NAME",
              help="PyIceberg catalog to scan (repeatable; default: every configured catalog).")
@click.option("--namespace", "namespaces", multiple=True, metavar="NS",
              help="Only this namespace and those below it (dotted; repeatable).")
@click.option("--table", "tables", multiple=True, metavar="GLOB", help="Only tables whose NS.TABLE matches.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip tables whose NS.TABLE matches.")
@click.option("--state", metavar="PATH", help="Watermark store (default: state.path, <user state dir>/state.db).")
@click.option("--mode", type=click.Choice(["history", "current"]), default="history", show_default=True,
              help="history: one run per snapshot not yet emitted; current: one DatasetEvent per changed table.")
@click.option("--since", metavar="AGE|TIME", callback=parsed_by(parse_since),
              help="Ignore snapshots committed before then: 7d, 12h, 30m, 90s, 2w ago, or an ISO 8601 time.")
@click.option("--executor", type=click.Choice(["threads", "processes", "dask"]), default="threads",
              show_default=True, help="Where per-table work runs.")
@click.option("--workers", type=int, metavar="N", help="Parallel table workers (default: CPUs, at most 8).")
@click.option("--dask-scheduler", metavar="ADDRESS", help="tcp://host:8786 (default: a local cluster).")
@click.option("--depth", type=click.Choice(["summary", "manifest_list", "entries"]), default="entries",
              show_default=True, help="How deep to read each new snapshot.")
@column_options
@click.option("--dry-run", is_flag=True, help="Print the events as JSON Lines on stdout; send and record nothing.")
@click.option("--wait", is_flag=True, help="Wait for a running scan to finish instead of exiting with 2.")
@click.option("--new-destination", is_flag=True,
              help="Accept an OpenLineage destination other than the one recorded for the tables, and send their "
                   "history there (without it, such a scan stops with exit 2).")
@click.option("--no-progress", is_flag=True, help="No progress bar nor progress lines.")
@click.option("--quiet", "-q", is_flag=True,
              help="No progress and no summary (unless --format json is given): only errors, one line each.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default=None,
              help="Summary format (on stderr): text on a terminal, json otherwise.")
@debug_option
@profile_option
def scan_command(catalogs, namespaces, tables, exclude, state, mode, since, executor, workers, dask_scheduler,
                 depth, column_stats, include_columns, exclude_columns, dry_run, wait, new_destination, no_progress, quiet,
                 fmt, debug, profile) -> None:
    """Emit every snapshot of every catalog table not yet emitted (tables written by any engine)."""

    def body() -> int:
        # the scanner (the walker, the state, the executors) is imported to scan, not for --help nor other commands
        from iceberg_lineage.config import load_settings
        from iceberg_lineage.read.catalogs import configured_catalogs
        from iceberg_lineage.scan import ScanOptions, TableFilter, scan_catalogs
        from iceberg_lineage.scan.summary import summary_text
        from iceberg_lineage.state.store import StateLockedError

        settings = load_settings({**column_flags(column_stats, include_columns, exclude_columns), "state.path": state,
                                  "consumer.profile": profile})
        options = ScanOptions(
            catalogs=configured_catalogs(catalogs),
            filters=TableFilter(tuple(namespaces), tuple(tables), tuple(exclude)),
            mode=mode, depth=depth, since_ms=epoch_ms(since), executor=executor, workers=workers,
            dask_scheduler=dask_scheduler, dry_run=dry_run, new_destination=new_destination,
        )
        try:
            summary, events_to = scan_catalogs(options, settings, wait=wait, progress=not (no_progress or quiet))
        except StateLockedError as exc:
            fail(exc, debug, EXIT_USAGE)
        if quiet and fmt != "json":
            for failure in summary.failures:
                click.echo(f"iceberg-lineage: scan: {failure.one_line()}", err=True)
        elif (fmt or ("text" if sys.stderr.isatty() else "json")) == "json":
            click.echo(json.dumps({**summary.to_json(), "events": events_to}), err=True)
        else:
            click.echo(summary_text(summary, events_to), err=True)
        return summary.exit_code

    run_guarded(debug, body)
