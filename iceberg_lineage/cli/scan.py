"""``iceberg-lineage scan``: parse arguments, wire state, delivery and progress, print the summary on stderr.

Exit codes: 0 all well; 1 some tables (or namespaces, or deliveries) failed; 2 usage, configuration or lock error.
"""
from __future__ import annotations

import datetime as dt
import json
import sys
from typing import IO, Callable

import click

from iceberg_lineage.cli.common import EXIT_USAGE, column_flags, column_options, fail, profile_option, run_guarded
from iceberg_lineage.config import Settings, load_settings
from iceberg_lineage.errors import ConfigError
from iceberg_lineage.printable import markup_safe
from iceberg_lineage.read.catalogs import configured_catalogs
from iceberg_lineage.scan.discovery import TableFilter
from iceberg_lineage.scan.driver import ScanOptions, scan
from iceberg_lineage.scan.sinks import delivery_sink, printing_sink
from iceberg_lineage.scan.summary import ScanSummary, TableOutcome, outcome_line, summary_text
from iceberg_lineage.state.store import StateLockedError, StateStore, acquire_lock

#: Plain progress prints a count line every this many tables (updated and failed tables always get a line).
PLAIN_EVERY = 100


def parse_since(value: str | None) -> int | None:
    """ISO-8601 time (UTC when no offset is given) to epoch milliseconds."""
    if not value:
        return None
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(f"--since: not an ISO time: {value!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return int(moment.timestamp() * 1000)


class Progress:
    """A rich progress bar on a terminal, plain lines otherwise, nothing with --no-progress."""

    def __init__(self, enabled: bool, stream: IO[str]) -> None:
        self.stream = stream
        self.rich = None
        self.enabled = enabled
        self.count = 0
        if enabled and stream.isatty():
            from rich.console import Console
            from rich.progress import Progress as RichProgress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self.rich = RichProgress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                                     console=Console(file=stream), transient=True)
            self.task = self.rich.add_task("scanning", total=None)

    def __enter__(self) -> "Progress":
        if self.rich is not None:
            self.rich.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.rich is not None:
            self.rich.stop()

    def __call__(self, outcome: TableOutcome) -> None:
        if not self.enabled:
            return
        self.count += 1
        line = outcome_line(outcome)
        if self.rich is not None:
            if line:
                self.rich.console.print(line, markup=False, highlight=False)
            last = markup_safe(f"{outcome.catalog}.{outcome.name}")  # the description is rendered as markup
            self.rich.update(self.task, description=f"{self.count} table(s) scanned, last {last}")
            return
        if line:
            print(f"scan: {line}", file=self.stream, flush=True)
        elif self.count % PLAIN_EVERY == 0:
            print(f"scan: {self.count} tables scanned", file=self.stream, flush=True)


@click.command("scan")
@click.option("--catalog", "catalogs", multiple=True, metavar="NAME",
              help="PyIceberg catalog to scan (repeatable; default: every configured catalog).")
@click.option("--namespace", "namespaces", multiple=True, metavar="NS",
              help="Only this namespace and those below it (dotted; repeatable).")
@click.option("--table", "tables", multiple=True, metavar="GLOB", help="Only tables whose NS.TABLE matches.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip tables whose NS.TABLE matches.")
@click.option("--state", metavar="PATH", help="Watermark store (default: state.path, ./.iceberg-lineage/state.db).")
@click.option("--mode", type=click.Choice(["history", "current"]), default="history", show_default=True,
              help="history: one run per snapshot not yet emitted; current: one DatasetEvent per changed table.")
@click.option("--since", metavar="ISO_TIME", help="Ignore snapshots committed before this time.")
@click.option("--executor", type=click.Choice(["threads", "processes", "dask"]), default="threads",
              show_default=True, help="Where per-table work runs.")
@click.option("--workers", type=int, metavar="N", help="Parallel table workers (default: CPUs, at most 8).")
@click.option("--dask-scheduler", metavar="ADDRESS", help="tcp://host:8786 (default: a local cluster).")
@click.option("--depth", type=click.Choice(["summary", "manifest_list", "entries"]), default="entries",
              show_default=True, help="How deep to read each new snapshot.")
@column_options
@click.option("--dry-run", is_flag=True, help="Print the events as JSON Lines on stdout; send and record nothing.")
@click.option("--wait", is_flag=True, help="Wait for a running scan to finish instead of exiting with 2.")
@click.option("--no-progress", is_flag=True, help="No progress bar nor progress lines.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default=None,
              help="Summary format (on stderr): text on a terminal, json otherwise.")
@click.option("--debug", is_flag=True, help="Show tracebacks.")
@profile_option
def scan_command(catalogs, namespaces, tables, exclude, state, mode, since, executor, workers, dask_scheduler,
                 depth, column_stats, include_columns, exclude_columns, dry_run, wait, no_progress, fmt,
                 debug, profile) -> None:
    """Emit every snapshot of every catalog table not yet emitted (tables written by any engine)."""

    def body() -> int:
        settings = load_settings({**column_flags(column_stats, include_columns, exclude_columns), "state.path": state,
                                  "consumer.profile": profile})
        options = ScanOptions(
            catalogs=configured_catalogs(catalogs),
            filters=TableFilter(tuple(namespaces), tuple(tables), tuple(exclude)),
            mode=mode, depth=depth, since_ms=parse_since(since), executor=executor, workers=workers,
            dask_scheduler=dask_scheduler, dry_run=dry_run,
        )
        try:
            summary, events_to = run_scan(options, settings, wait=wait, progress=not no_progress)
        except StateLockedError as exc:
            fail(exc, debug, EXIT_USAGE)
        if (fmt or ("text" if sys.stderr.isatty() else "json")) == "json":
            click.echo(json.dumps({**summary.to_json(), "events": events_to}), err=True)
        else:
            click.echo(summary_text(summary, events_to), err=True)
        return summary.exit_code

    run_guarded(debug, body)


def run_scan(options: ScanOptions, settings: Settings, *, wait: bool, progress: bool,
             observer: Callable[[TableOutcome], None] | None = None) -> tuple[ScanSummary, str]:
    """A scan with its I/O wired: the run lock, the state store, the delivery (or stdout for a dry run); the scan
    sends its own run too (job ``<job namespace>.scan``, :func:`~iceberg_lineage.scan.driver.scan`). ``observer``
    sees every table's outcome too (``make run`` tabulates them)."""
    with Progress(progress, sys.stderr) as shown:

        def on_outcome(outcome: TableOutcome) -> None:
            shown(outcome)
            if observer is not None:
                observer(outcome)

        if options.dry_run:
            with StateStore(settings.state.path, readonly=True) as store:
                summary = scan(options, settings, store, printing_sink(sys.stdout.write), on_outcome=on_outcome,
                               own_run=True)
            return summary, "stdout (dry run: nothing sent, state untouched)"
        from iceberg_lineage.delivery.client import describe_transport, disabled, make_client
        from iceberg_lineage.delivery.delivery import Delivery

        lock = acquire_lock(settings.state.path, wait=wait,
                            on_wait=lambda message: click.echo(f"iceberg-lineage: {message}", err=True))
        try:
            client = make_client()
            delivery = Delivery(client, settings)
            if disabled():
                click.echo("iceberg-lineage: OpenLineage is disabled (OPENLINEAGE_DISABLED): nothing is sent and the "
                           "state does not advance", err=True)
            elif not delivery.synchronous:
                click.echo("iceberg-lineage: warning: the async_http transport confirms nothing; a snapshot is "
                           "recorded as emitted once queued, so a crash can lose queued events", err=True)
            try:
                with StateStore(settings.state.path) as store:
                    summary = scan(options, settings, store, delivery_sink(delivery), on_outcome=on_outcome,
                                   own_run=True)
            finally:
                delivery.close()
                client.close()
            events_to = describe_transport(client)
            if delivery.stats.spooled:
                events_to += f" ({delivery.stats.spooled} spooled to {delivery.spool_path}: run iceberg-lineage replay)"
            return summary, events_to
        finally:
            lock.release()
