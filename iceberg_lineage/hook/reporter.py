"""Lineage straight from PyIceberg: an OpenLineage reporter for ``scan_reporters``' observer hooks.

Three ways to attach (docs/hook.md says which gives one run and which one run per commit): ``observe(catalog)`` in
code; the catalog property ``metrics-reporter-impl: openlineage`` once ``scan_reporters.install()`` ran;
``iceberg-lineage run``, which observes every catalog the program constructs.

Cost on the commit path: ``before_commit`` copies each new snapshot to tag it with its ownership
(:mod:`iceberg_lineage.lineage.tags`: the run that reports it, so the scanner can rebuild that run);
``after_commit``, ``after_scan`` and ``on_table_event`` only capture what PyIceberg already holds in memory and queue
that record with the builder of its events (:mod:`iceberg_lineage.lineage.captures`), which runs on the emitter's
thread. Once a commit's events are delivered or spooled, its snapshots go into the delivery ledger
(:mod:`iceberg_lineage.hook.ledger`); the scanner re-sends tagged snapshots the ledger does not know.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from openlineage.client.event_v2 import RunEvent, RunState

from iceberg_lineage.config import Settings, load_settings
from iceberg_lineage.delivery.delivery import DeliveryResult
from iceberg_lineage.delivery.emitter import EMITTERS, LOG, Settlement, log_once
from iceberg_lineage.delivery.webhook import announce
from iceberg_lineage.hook.context import OpenRun, current_run
from iceberg_lineage.hook.ledger import LEDGER, LEDGER_STATUSES
from iceberg_lineage.hook.process_run import configured_run
from iceberg_lineage.lineage.checks import commit_alert_runs, schema_changed
from iceberg_lineage.lineage.events import snapshot_run_id
from iceberg_lineage.lineage.captures import (
    COMMIT_ENGINE, CatalogChange, Commit, FailedCommit, Scan, TableCapture, catalog_events, commit_events,
    failed_commit_events, own_run_event, scan_events,
)
from iceberg_lineage.lineage.runs import Attachment, Failure, new_run_id, now
from iceberg_lineage.lineage.serde import as_objects
from iceberg_lineage.lineage.tags import Ownership
from iceberg_lineage.read.catalogs import catalog_account
from iceberg_lineage.redact import protect
from iceberg_lineage.state.adopt import adopt_legacy_state

if TYPE_CHECKING:
    from openlineage.client import OpenLineageClient
    from pyiceberg.catalog import Catalog
    from pyiceberg.table import Table
    from pyiceberg.table.metadata import TableMetadata
    from pyiceberg.table.snapshots import Snapshot
    from scan_reporters import CommitOutcome, ScanOutcome, TableEvent
    from scan_reporters.reports import MetricsReport

#: Reporter option (``metrics-reporter.openlineage.job-name``): the job of the process's run
#: (:func:`~iceberg_lineage.hook.process_run.configured_run`) that every commit and scan then belongs to.
JOB_NAME_OPTION = "job-name"


# -- snapshot tagging ------------------------------------------------------------------------------------------------


def tag_updates(updates: Sequence[Any], owners: Mapping[int, Ownership]) -> tuple[Any, ...]:
    """The updates with every added snapshot carrying its ownership tag; other updates as they were."""
    from pyiceberg.table.snapshots import Summary
    from pyiceberg.table.update import AddSnapshotUpdate

    tagged = []
    for update in updates:
        if isinstance(update, AddSnapshotUpdate) and update.snapshot.summary is not None:
            snapshot, summary = update.snapshot, update.snapshot.summary
            properties = {**summary.additional_properties, **owners[snapshot.snapshot_id].properties()}
            copy = snapshot.model_copy(update={"summary": Summary(summary.operation, **properties)})
            update = AddSnapshotUpdate(snapshot=copy)
        tagged.append(update)
    return tuple(tagged)


def _added_snapshots(updates: Sequence[Any]) -> list[Any]:
    from pyiceberg.table.update import AddSnapshotUpdate

    return [u.snapshot for u in updates if isinstance(u, AddSnapshotUpdate)]


def table_identity(metadata: TableMetadata) -> str:
    """The identity the scanner and the state give a table PyIceberg holds (PyIceberg always has a uuid)."""
    return str(metadata.table_uuid)


# -- what the reporter queues ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PendingCapture:
    """A capture record and the pure builder of its events, queued as data; ``events`` runs on the emitter's thread.

    Inside a run the events become RUNNING events of it, carrying their datasets (the run records them as they are
    built, so its final event, queued later, lists them); outside, with ``attached``, they are runs of their own
    with the hook's run facets, under ``job_name`` when one was given (:func:`own_run_event`).
    With a ``ledger`` path, the snapshots of a commit whose events were all delivered or spooled are recorded there.
    """

    build: Callable[[Any, Settings], Sequence[RunEvent]]
    record: object
    settings: Settings
    run: OpenRun | None = None
    job_name: str | None = None
    ledger: str | None = None
    attached: Attachment | None = None

    def events(self) -> list[RunEvent]:
        built = self.build(self.record, self.settings)
        if self.run is not None:  # a commit's events are plain (dicts): the run records objects
            return [self.run.running(e.inputs or (), e.outputs or ()) for e in map(as_objects, built)
                    if e.eventType != RunState.START]
        if self.attached is None:
            return list(built)
        return [own_run_event(e, self.job_name, self.attached) for e in built]

    def settled(self, results: Sequence[DeliveryResult]) -> Settlement | None:
        """Called by the emitter with the outcome of every event: a commit's snapshots enter the ledger only when
        none of its events was lost (a partial batch is re-sent whole by the scanner: a duplicate, never a loss).
        The emitter writes the returned batch once it settled every item it had."""
        commit = self.record
        if self.ledger is None or not isinstance(commit, Commit) or not commit.owners:
            return None
        if not (results and all(r.status in LEDGER_STATUSES for r in results)):
            return None
        return LEDGER.record(self.ledger, table_identity(commit.table.metadata),
                             {sid: owner.run_id for sid, owner in commit.owners.items()})


def schema_alert_events(commit: Commit, settings: Settings) -> list[RunEvent]:
    """A commit's schema alerts, on the emitter's thread: announced (log line, webhook), and their checks runs."""
    alerts, events = commit_alert_runs(commit, settings)
    announce(alerts, settings)
    return events


# -- the reporter ------------------------------------------------------------------------------------------------------


class OpenLineageMetricsReporter:
    """scan_reporters reporter emitting OpenLineage events; entry point ``openlineage``.

    Built with no arguments and configured by ``initialize(properties)`` (catalog properties, plus
    ``metrics-reporter.openlineage.job-name``, which makes the whole process one run of that job), or with keyword
    arguments by :func:`observe` (whose ``job_name`` only renames the runs of single commits and scans). Every
    method is exception-safe: a lineage failure never changes the outcome of the user's operation.
    """

    def __init__(self, *, client: OpenLineageClient | None = None, job_name: str | None = None,
                 settings: Settings | None = None) -> None:
        self.client = client
        self.job_name = job_name
        self.settings = settings or load_settings()
        try:  # before this process writes a ledger or a spool of its own
            adopted = adopt_legacy_state(self.settings)
            if adopted is not None:
                LOG.warning(adopted)
        except Exception as exc:  # noqa: BLE001 - lineage never breaks the user's program
            log_once("adopting the state of ./.iceberg-lineage", exc)
        self._lock = threading.Lock()
        self._owners: dict[int, Ownership] = {}
        self.attached: Attachment = "observe"

    def initialize(self, properties: Mapping[str, str]) -> None:
        self.job_name = properties.get(JOB_NAME_OPTION) or self.job_name
        self.attached = "configuration"

    def _run(self) -> OpenRun | None:
        """The run this operation belongs to: the current one; else, for a reporter configured with a job name, the
        process's run, opened now (its START marks the process's first commit or scan)."""
        found = current_run()
        if found is None and self.attached == "configuration" and self.job_name:
            found = configured_run(self.job_name, self.client, self.settings)
        return found

    def bind_catalog(self, catalog: Catalog) -> None:
        """Called as the catalog is instrumented: a Glue catalog's account (its tables' ARN) is asked of STS now,
        once, rather than on the commit path."""
        catalog_account(catalog)

    def _submit(self, run: OpenRun | None, build: Callable[[Any, Settings], Sequence[RunEvent]],
                record: object) -> None:
        """Queue a capture record with its builder, to the run's emitter inside a run, else to the client's."""
        ledger = self.settings.state.path if self.settings.hook.ledger else None
        if run is not None:
            run.emitter.submit(PendingCapture(build, record, self.settings, run=run, ledger=ledger))
            return
        emitter = EMITTERS.emitter_for(self.client, self.settings)
        emitter.submit(PendingCapture(build, record, self.settings, job_name=self.job_name, ledger=ledger,
                                      attached=self.attached))

    def report(self, report: MetricsReport) -> None:
        """ScanReports and CommitReports arrive through ``after_scan``/``after_commit`` with more context."""

    def before_commit(self, table: Table, updates: tuple[Any, ...]) -> tuple[Any, ...]:
        """Decide who reports each new snapshot (kept across retries: snapshot ids are stable) and tag it so."""
        run = self._run()
        with self._lock:
            added = _added_snapshots(updates)
            for snapshot in added:  # a retry keeps the owner decided first
                if snapshot.snapshot_id not in self._owners:
                    self._owners[snapshot.snapshot_id] = self._owner(table, snapshot, run)
            owners = {s.snapshot_id: self._owners[s.snapshot_id] for s in added}
        if not self.settings.hook.tag_snapshots:
            return updates
        return tag_updates(updates, owners)

    def _owner(self, table: Table, snapshot: Snapshot, run: OpenRun | None) -> Ownership:
        """Inside a run, the run's; outside, the snapshot's own run, exactly as the scanner would build it."""
        if run is not None:
            return Ownership(run.run_id, run.ref.job_namespace, run.ref.job_name, "context")
        run_id = snapshot_run_id(table_identity(table.metadata), snapshot.snapshot_id, snapshot.timestamp_ms)
        job = self.job_name or ".".join((*table.name(), COMMIT_ENGINE))
        return Ownership(str(run_id), self.settings.job.namespace, job, "snapshot")

    def after_commit(self, outcome: CommitOutcome) -> None:
        with self._lock:
            owners = {sid: self._owners.pop(sid) for sid in outcome.added_snapshot_ids if sid in self._owners}
        run = self._run()
        if outcome.error is not None:
            if run is None:  # inside a run, the exception fails the run if the user lets it through
                base = outcome.base_metadata
                failed = FailedCommit(
                    None if base is None else TableCapture(outcome.catalog, outcome.identifier, base, None),
                    outcome.identifier, next((o.run_id for o in owners.values()), None) or new_run_id(),
                    Failure.of(outcome.error), now(),
                )
                self._submit(None, failed_commit_events, failed)
            return
        if outcome.metadata is None:
            return
        commit = Commit(
            TableCapture(outcome.catalog, outcome.identifier, outcome.metadata, outcome.metadata_location),
            outcome.base_metadata, tuple(outcome.added_snapshot_ids), owners, outcome.attempts,
            outcome.duration_ns // 1_000_000,
        )
        self._submit(run, commit_events, commit)
        if schema_changed(commit):  # its own checks run, outside any run context and under its own job name
            emitter = EMITTERS.emitter_for(self.client, self.settings)
            emitter.submit(PendingCapture(schema_alert_events, commit, self.settings))

    def after_scan(self, outcome: ScanOutcome) -> None:
        table = outcome.table
        scan = Scan(TableCapture(table.catalog, tuple(table.name()), table.metadata, table.metadata_location),
                    outcome.snapshot_id, outcome)
        self._submit(self._run(), scan_events, scan)

    def on_table_event(self, event: TableEvent) -> None:
        if event.metadata is None:
            return  # a drop whose table could not be loaded first: nothing names the dataset
        renamed = event.kind == "rename" and event.new_identifier is not None
        change = CatalogChange(
            event.kind,
            TableCapture(event.catalog, tuple(event.new_identifier if renamed else event.identifier),  # type: ignore[arg-type]
                       event.metadata, event.metadata_location),
            event.identifier if renamed else None, now(),
        )
        self._submit(self._run(), catalog_events, change)

    def close(self) -> None:
        """Events already queued are still delivered (the emitter is shared and flushed at exit)."""


# -- attaching ---------------------------------------------------------------------------------------------------------


def observe(catalog: Catalog, client: OpenLineageClient | None = None, job_name: str | None = None) -> Catalog:
    """Instrument ``catalog`` (and tables already loaded from it) to emit OpenLineage events; returns it.

    ``client`` defaults to :func:`iceberg_lineage.delivery.client.make_client`; ``job_name`` replaces the per-table job
    names of commits and scans outside a run. A Glue catalog's AWS account (its tables' ARN) is resolved here, once
    (:meth:`OpenLineageMetricsReporter.bind_catalog`). Reporters named by the catalog's ``metrics-reporter-impl`` keep
    reporting; an ``openlineage`` one among them is replaced by this one, so nothing is emitted twice.
    """
    from scan_reporters.instrument import instrument
    from scan_reporters.reporters.base import METRICS_REPORTER_IMPL, CompositeMetricsReporter, load_reporters

    protect(catalog.properties)  # its secrets never reach our logs
    configured = load_reporters(catalog.properties).reporters if catalog.properties.get(METRICS_REPORTER_IMPL) else ()
    others = [r for r in configured if not isinstance(r, OpenLineageMetricsReporter)]
    reporter = OpenLineageMetricsReporter(client=client, job_name=job_name)
    return instrument(catalog, CompositeMetricsReporter([*others, reporter]))


def observe_all(client: OpenLineageClient | None = None) -> None:
    """Observe every catalog constructed from now on, however it is made (``load_catalog``, ``SqlCatalog(...)``,
    ``GlueCatalog(...)``...): ``iceberg-lineage run``. See :func:`scan_reporters.install`."""
    from scan_reporters.instrument import install

    install(lambda catalog: observe(catalog, client))
