"""The scan driver: walk catalogs, hand table tasks to an executor, and deliver and record each table on the
driver thread as soon as its task is done (:mod:`~iceberg_lineage.scan.inflight`, with its per-table time limit).
Delivery as a whole is bounded by ``scan.delivery_deadline_s``: past it, the rest is spooled unsent.

Events are sent in commit order, and a snapshot is recorded as emitted only once its event was delivered or
spooled; a failure stops that table's watermark where it is. RENAMEs and DROPs come last, once every name of the
run was listed. A hook-tagged snapshot counts as already emitted only when the delivery ledger (in the state) knows
it; otherwise the scan sends its owner's events, rebuilt from the tag.

A table is recorded as fully emitted at its metadata location (per mode) only when every snapshot there was delivered
or spooled, and none skipped by ``--since``; a table the listing shows at that same location is then skipped without
being loaded (:mod:`iceberg_lineage.read.listing`). A REST catalog's listing has no location: the table's ETag, when
the catalog sent one at that location, asks the catalog instead, and a 304 skips it (:mod:`iceberg_lineage.read.rest_load`).
A stop, a failure, or another mode leaves it to be loaded again.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.breaker import send_deadline
from iceberg_lineage.errors import ConfigError, IcebergLineageError
from iceberg_lineage.read.catalogs import CatalogSpec
from iceberg_lineage.redact import scrub
from iceberg_lineage.scan.discovery import NamespaceListed, TableFilter, TableListed, discover
from iceberg_lineage.scan.inflight import InFlight
from iceberg_lineage.scan.modes import MODES, Mode
from iceberg_lineage.scan.sinks import ADVANCING, Sink, taken
from iceberg_lineage.scan.summary import DeliveryPhase, Gap, ScanSummary, TableFailure, TableOutcome, TableStatus
from iceberg_lineage.state.store import EmittedSnapshot, StateStore, TrackedTable, Watermark
from iceberg_lineage.stats.depths import DEPTHS
from iceberg_lineage.stats.parallel import check_executor, older_objects_frozen, open_executor

if TYPE_CHECKING:  # loading a table imports them: a rescan that finds nothing changed never does
    from iceberg_lineage.scan.lifecycle import LifecycleChange
    from iceberg_lineage.scan.task import PendingEvent, TableResult, TableTask


#: Tables recorded in the state per transaction at most (and at least once a second, :meth:`StateStore.batch`): a
#: commit per table was a tenth of a small table's scan.
TABLES_PER_WRITE = 64
#: Tables per task on processes and Dask, where each task costs pickling and the executor's bookkeeping (threads
#: take one table per task: nothing is pickled, and a stuck table can be abandoned alone).
TABLES_PER_TASK = 8
#: What a table task imports (most of it lazily, on its first table): a worker process forked from a server that
#: imported them once starts without importing them again (:func:`~iceberg_lineage.stats.parallel.open_executor`).
TASK_MODULES = ("iceberg_lineage.scan.task", "iceberg_lineage.read.source", "iceberg_lineage.read.metadata_json",
                "iceberg_lineage.read.rest_load", "iceberg_lineage.lineage.events", "iceberg_lineage.lineage.checks",
                "iceberg_lineage.lineage.profiles", "iceberg_lineage.stats", "openlineage.client.event_v2",
                "scan_reporters.commit_metrics", "pyiceberg.catalog.sql", "pyiceberg.io.pyarrow")


@dataclass(frozen=True)
class ScanOptions:
    catalogs: tuple[CatalogSpec, ...]
    filters: TableFilter = TableFilter()
    mode: Mode = "history"
    depth: str = "entries"
    since_ms: int | None = None
    executor: str = "threads"
    workers: int | None = None
    dask_scheduler: str | None = None
    dry_run: bool = False
    capture_time: dt.datetime | None = None
    #: accept a destination other than the one the tables' events went to, and send their history there
    new_destination: bool = False

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if self.depth not in DEPTHS:
            raise ConfigError(f"depth must be one of {', '.join(DEPTHS)}, not {self.depth!r}")
        check_executor(self.executor, self.workers, self.dask_scheduler)


def scan(
    options: ScanOptions,
    settings: Settings,
    state: StateStore,
    sink: Sink,
    *,
    on_outcome: Callable[[TableOutcome], None] = lambda o: None,
    on_listed: Callable[[int], None] = lambda total: None,
    own_run: bool = False,
) -> ScanSummary:
    """Scan the catalogs, send new events through ``sink`` and advance ``state`` (unless it is read-only).

    ``own_run``: the scan also sends a run of its own (:mod:`~iceberg_lineage.lineage.scan_run`, job
    ``<job namespace>.scan``) through the same sink: START now (unless ``events.start_events`` is off), then
    COMPLETE when the summary's exit code is 0 or 3 (the work was done), FAIL otherwise (or when the scan stops with
    an exception), carrying the summary. ``iceberg-lineage scan`` sends it; ``scan --dry-run`` and a notebook preview
    (``preview_scan``, through ``iceberg_lineage.scan_catalog(dry_run=True)``) print it with the rest. ``on_listed``
    gets the number of tables once discovery has listed them all (a progress bar's total)."""
    with older_objects_frozen():
        return _scan(options, settings, state, sink, on_outcome, on_listed, own_run)


def _scan(options: ScanOptions, settings: Settings, state: StateStore, sink: Sink,
          on_outcome: Callable[[TableOutcome], None], on_listed: Callable[[int], None], own_run: bool) -> ScanSummary:
    run = _Driver(options, settings, state, sink, on_outcome)
    if not own_run:
        started = time.monotonic()
        _walk(run, options, settings, on_listed)
        return run.summary(time.monotonic() - started)
    # openlineage-python is heavy (~0.5 s to import): only a scan that builds an event imports it, so a rescan that
    # finds nothing changed and sends no run of its own never does
    from iceberg_lineage.lineage.scan_run import scanner_end_event, scanner_run, scanner_start_event
    from iceberg_lineage.lineage.serde import to_json

    ref = scanner_run(settings)
    if settings.events.start_events:
        run.sink([to_json(scanner_start_event(ref, _now()))])
    started = time.monotonic()
    try:
        _walk(run, options, settings, on_listed)
    except Exception as exc:
        run.sink([to_json(scanner_end_event(ref, _now(), error=scrub(f"{type(exc).__name__}: {exc}")))])
        raise
    summary = run.summary(time.monotonic() - started)
    # it carries the exit code as it stands; if it must wait in the spool itself, the scan exits 3 (or worse)
    ended = run.sink([to_json(scanner_end_event(ref, _now(), summary.to_json()))])
    return dataclasses.replace(summary, events_spooled=summary.events_spooled + list(ended).count("spooled"))


def _walk(run: "_Driver", options: ScanOptions, settings: Settings, on_listed: Callable[[int], None]) -> None:
    """Discover, read and deliver every table, then the catalog changes."""
    batch = 1 if options.executor == "threads" else TABLES_PER_TASK
    executor = functools.partial(open_executor, options.executor, options.workers, options.dask_scheduler,
                                 preload=TASK_MODULES)
    with InFlight(executor, settings.scan.table_timeout_s, batch) as pending, run.state.batch(tables=TABLES_PER_WRITE):
        limit = 4 * (options.workers or 8) * batch
        for spec in options.catalogs:
            for item in discover(spec, options.filters):
                if isinstance(item, NamespaceListed):
                    run.namespace_listed(item)
                    continue
                task = run.task_for(item)
                if task is None:
                    continue
                while len(pending) >= limit:
                    run.collect(pending, block=True)
                pending.submit(task)
                run.collect(pending, block=False)
        on_listed(len(run.listed_tables))
        while pending:
            run.collect(pending, block=True)
    run.emit_catalog_changes()


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


class _Driver:
    """The driver's mutable bookkeeping of one scan; everything it touches happens on the driver thread."""

    def __init__(self, options: ScanOptions, settings: Settings, state: StateStore, sink: Sink,
                 on_outcome: Callable[[TableOutcome], None]) -> None:
        self.options = options
        self.settings = settings
        self.state = state
        self._sink = sink
        #: seconds spent in the sink so far, against ``scan.delivery_deadline_s``
        self.delivering_s = 0.0
        self.on_outcome = on_outcome
        self.capture_time = options.capture_time or dt.datetime.now(dt.timezone.utc)
        self.listed_ok: set[tuple[str, tuple[str, ...]]] = set()
        self.listed_tables: set[tuple[str, tuple[str, ...]]] = set()
        #: the state's tables of the namespace listed last: (catalog, namespace, by name)
        self.known: tuple[str, tuple[str, ...], dict[tuple[str, ...], TrackedTable]] = ("", (), {})
        self.seen: set[str] = set()
        self.renamed: dict[str, LifecycleChange] = {}
        self.outcomes: dict[TableStatus, int] = {"unchanged": 0, "updated": 0, "failed": 0}
        self.emitted = 0
        self.by_hooks = 0
        self.resent = 0
        self.rejected = 0
        #: snapshots emitted: every event confirmed, taken by a transport that confirms only at its flush (queued),
        #: or with an event waiting in the spool
        self.delivered = 0
        self.queued = 0
        self.spooled = 0
        #: every event of the scan that waits in the spool, whatever run it belongs to
        self.events_spooled = 0
        self.drops = 0
        self.renames = 0
        self.gaps: list[tuple[str, Gap]] = []
        self.failures: list[TableFailure] = []

    # -- discovery -----------------------------------------------------------------------------------------------
    def namespace_listed(self, item: NamespaceListed) -> None:
        # its tables come next: what the state knows of them, read at once
        self.known = (item.catalog, item.namespace, self.state.live_in(item.catalog, item.namespace))
        if item.error is None:
            self.listed_ok.add((item.catalog, item.namespace))
        else:
            ns = ".".join(item.namespace) or "(catalog)"
            self.failures.append(TableFailure(item.catalog, ns, f"cannot list: {item.error}", kind="catalog"))

    def task_for(self, item: TableListed) -> TableTask | None:
        key = (item.catalog.name, item.identifier)
        if key in self.listed_tables:
            return None
        self.listed_tables.add(key)
        catalog, namespace, tables = self.known
        known = tables.get(item.identifier) if (catalog, namespace) == (item.catalog.name, item.identifier[:-1]) \
            else self.state.find(item.catalog.name, item.identifier)
        if known is not None and item.metadata_location is not None \
                and known.complete_at(self.options.mode) == item.metadata_location:
            self.seen.add(known.identity)  # unchanged since it was fully emitted: nothing to load, nothing to send
            self.finish(TableOutcome(item.catalog.name, item.identifier, "unchanged"))
            return None
        from iceberg_lineage.scan.task import TableTask

        return TableTask(
            catalog=item.catalog,
            identifier=item.identifier,
            settings=self.settings,
            mode=self.options.mode,
            depth=self.options.depth,
            expected_identity=known.identity if known else None,
            watermark=self.state.watermark(known.identity) if known else Watermark(),
            since_ms=self.options.since_ms,
            capture_time=self.capture_time,
            metadata_location=item.metadata_location,
            etag=known.etag_if_complete(self.options.mode) if known else None,
        )

    # -- results -------------------------------------------------------------------------------------------------
    def collect(self, pending: InFlight, *, block: bool) -> None:
        """Deliver and record every table whose task is done (a task past its time limit comes back failed); their
        records are written together, once all of them were sent."""
        with self.state.batch():
            for task, result in pending.ready(block=block):
                self.finish(self.apply(result, task))

    def sink(self, texts: Sequence[str]) -> Sequence[str]:
        """The scan's sink, within what is left of ``scan.delivery_deadline_s``: every call's time counts against
        it, and once it is spent the delivery spools each event without sending it."""
        started = time.monotonic()
        with send_deadline(started + self.settings.scan.delivery_deadline_s - self.delivering_s):
            try:
                statuses = self._sink(texts)
            finally:
                self.delivering_s += time.monotonic() - started
        self.events_spooled += list(statuses).count("spooled")
        return statuses

    def finish(self, outcome: TableOutcome) -> None:
        self.outcomes[outcome.status] += 1
        self.emitted += outcome.emitted
        self.by_hooks += outcome.by_hooks
        self.resent += outcome.resent
        self.rejected += outcome.rejected
        self.delivered += outcome.delivered
        self.spooled += outcome.spooled
        if outcome.gap:
            self.gaps.append((f"{outcome.catalog}.{outcome.name}", outcome.gap))
        if outcome.failure:
            self.failures.append(outcome.failure)
        self.on_outcome(outcome)

    def apply(self, result: TableResult, task: TableTask) -> TableOutcome:
        """Deliver one table's events in commit order and record what was delivered, in one transaction."""
        base = TableOutcome(result.catalog, result.identifier, "failed", failure=result.failure)
        if result.not_modified and result.identity is not None:  # as it was fully emitted (the catalog's 304)
            self.seen.add(result.identity)
            return dataclasses.replace(base, status="unchanged")
        if result.failure is not None or result.identity is None:
            return base
        if result.identity in self.seen:  # the same table registered twice: the first name wins this run
            return dataclasses.replace(base, status="unchanged", failure=None)
        self.seen.add(result.identity)
        previous = self.state.get(result.identity)
        watermark, gap = task.watermark, result.gap
        if result.identity != task.expected_identity:
            # a renamed (or re-created) table: the worker could not know its watermark; filter here (a table never
            # recorded has emitted nothing: its snapshots are only ever written with its row)
            watermark = self.state.watermark(result.identity) if previous is not None else Watermark()
            gap = gap if previous is None else None
        name = self._name(result, task, previous)
        history = self.options.mode == "history"
        items = [i for i in result.items if not history or i.snapshot_id not in watermark.emitted]
        sent, stop = self._send(self._confirmed(result.identity, items) if history else items)
        self._announce(sent)
        recorded = tuple(
            EmittedSnapshot(i.snapshot_id, i.sequence_number, i.timestamp_ms, "hook" if i.by_hook else "scan", i.run_id)
            for i, _ in sent
        ) if history else ()
        current = sent[-1][0].snapshot_id if not history and sent else None
        complete = result.metadata_location if stop is None and (not history or self.options.since_ms is None) \
            else None
        markers = {"history": previous.history_complete_at if previous else None,
                   "current": previous.current_complete_at if previous else None, self.options.mode: complete}
        tracked = TrackedTable(
            result.identity, result.catalog, name, result.location or "", result.metadata_location, current,
            history_complete_at=markers["history"], current_complete_at=markers["current"], etag=result.etag,
        )
        if not self.state.readonly and (recorded or current is not None or previous is None or previous.dropped
                                        or previous.metadata_location != result.metadata_location
                                        or previous.etag != result.etag
                                        or previous.complete_at(self.options.mode) != complete):
            self.state.record(tracked, recorded)
        accepted = [(i, statuses) for i, statuses in sent if "rejected" not in statuses]
        emitted = [statuses for i, statuses in accepted if not i.owned]
        self.queued += sum(1 for statuses in emitted if "queued" in statuses)
        outcome = dataclasses.replace(
            base, status="updated" if sent else "unchanged", failure=None, gap=gap,
            emitted=len(emitted), by_hooks=sum(1 for i, _ in accepted if i.by_hook),
            resent=sum(1 for i, _ in accepted if i.owned and not i.by_hook),
            rejected=sum(statuses.count("rejected") for _, statuses in sent),
            delivered=sum(1 for statuses in emitted if statuses and set(statuses) == {"delivered"}),
            spooled=sum(1 for statuses in emitted if "spooled" in statuses),
        )
        if stop is not None:
            return self._stopped(outcome, stop, f"snapshot {items[len(sent)].snapshot_id}")
        return outcome

    def _announce(self, sent: list[tuple[PendingEvent, list[str]]]) -> None:
        """The schema alerts of the snapshots whose events were sent (not of those the hook delivered: it announced
        them), unless this is a dry run."""
        found = [a for item, _ in sent if item.texts for a in item.alerts]
        if found and not self.options.dry_run:
            from iceberg_lineage.delivery.webhook import announce  # openlineage's HTTP transport: heavy

            announce(found, self.settings)

    def _confirmed(self, identity: str, items: list[PendingEvent]) -> list[PendingEvent]:
        """Tagged snapshots the ledger knows as delivered by now need no event: the task may have been built before
        the hook recorded them, or without the table's identity (its first scan)."""
        if not any(i.owned and i.texts for i in items):
            return items
        delivered = self.state.hook_delivered(identity)
        return [dataclasses.replace(i, texts=()) if i.owned and i.snapshot_id in delivered else i for i in items]

    def _name(self, result: TableResult, task: TableTask, previous: TrackedTable | None) -> tuple[str, ...]:
        """The name to record. A new name for a known table is a RENAME, unless the old name is still listed (one
        table registered under two names): decided at the end of the run, when every name was listed; until then
        the old name stays."""
        if previous and not previous.dropped and previous.catalog == result.catalog \
                and previous.identifier != result.identifier:
            from iceberg_lineage.scan.lifecycle import LifecycleChange

            self.renamed[previous.identity] = LifecycleChange.rename(task.catalog, previous, result.identifier)
            return previous.identifier
        return result.identifier

    def _send(self, items: list[PendingEvent]) -> tuple[list[tuple[PendingEvent, list[str]]], str | None]:
        """Send the items' events in commit order, as one batch. Returns the prefix of items taken, each with the
        statuses of its events (none for a snapshot the hook delivered), and the status that stopped the rest."""
        texts = [text for i in items for text in i.texts]
        statuses = list(self.sink(texts)) if texts else []
        n, stop = taken(statuses, len(texts))
        sent: list[tuple[PendingEvent, list[str]]] = []
        at = 0
        for item in items:
            if at + len(item.texts) > n:
                break
            sent.append((item, statuses[at:at + len(item.texts)]))
            at += len(item.texts)
        return sent, stop

    def _stopped(self, outcome: TableOutcome, status: str, what: str) -> TableOutcome:
        if status == "disabled":  # OpenLineage switched off: nothing sent, nothing recorded, nothing wrong
            return outcome
        reason = f"delivery {status} for {what}; the table's watermark stays before it"
        return dataclasses.replace(outcome, status="failed", failure=TableFailure(
            outcome.catalog, outcome.name, reason, kind="delivery"))

    # -- renames and drops ---------------------------------------------------------------------------------------
    def emit_catalog_changes(self) -> None:
        """RENAMEs, then DROPs: both need every name of the run listed first."""
        for change in self.renamed.values():
            if (change.catalog.name, change.tracked.identifier) not in self.listed_tables:
                self._lifecycle(change)  # else still listed under its old name too: an alias, not a rename
        for spec in self.options.catalogs:
            gone = [t for t in self.state.tables(spec.name, besides=self.seen) if self._gone(spec, t)]
            if gone:
                from iceberg_lineage.scan.lifecycle import LifecycleChange

                for tracked in gone:
                    self._lifecycle(LifecycleChange.drop(spec, tracked))

    def _gone(self, spec: CatalogSpec, tracked: TrackedTable) -> bool:
        """A recorded table, not seen by this run (:meth:`StateStore.tables` leaves those out), that it should have
        seen: its namespace was listed, it is in scope."""
        return ((spec.name, tuple(tracked.identifier[:-1])) in self.listed_ok
                and self.options.filters.wants(spec.name, tracked.identifier)
                and (spec.name, tracked.identifier) not in self.listed_tables)

    def _lifecycle(self, change: LifecycleChange) -> None:
        """Send one RENAME or DROP run; record it once delivered, so a failed one comes again next run."""
        from iceberg_lineage.scan.lifecycle import change_events, record_change

        try:
            texts = change_events(change, self.settings, self.capture_time)
            statuses = list(self.sink(texts))
            status = taken(statuses, len(texts))[1] or statuses[-1]
        except IcebergLineageError as exc:
            status, statuses = f"impossible ({exc.reason})", []
        if status in ADVANCING:
            self.rejected += statuses.count("rejected")
            self.renames += change.kind == "RENAME"
            self.drops += change.kind == "DROP"
            if not self.state.readonly:
                record_change(self.state, change)
        elif status != "disabled":
            self.failures.append(TableFailure(change.catalog.name, ".".join(change.identifier),
                                              f"delivery {status} for the {change.kind} event", kind="delivery"))

    def summary(self, elapsed: float) -> ScanSummary:
        return ScanSummary(
            mode=self.options.mode,
            dry_run=self.options.dry_run,
            tables_scanned=sum(self.outcomes.values()),
            unchanged=self.outcomes["unchanged"],
            updated=self.outcomes["updated"],
            failed=self.outcomes["failed"],
            snapshots_emitted=self.emitted,
            snapshots_by_hooks=self.by_hooks,
            drops=self.drops,
            renames=self.renames,
            gaps=tuple(self.gaps),
            failures=tuple(self.failures),
            elapsed_s=elapsed,
            snapshots_resent=self.resent,
            events_rejected=self.rejected,
            delivery=DeliveryPhase(self.settings.scan.delivery_deadline_s, self.delivering_s),
            snapshots_delivered=None if self.queued else self.delivered,
            snapshots_spooled=self.spooled,
            events_spooled=self.events_spooled,
        )
