"""Lineage straight from PyIceberg: an OpenLineage reporter for ``scan_reporters``' observer hooks.

Three ways to attach (see the README, "Hook it into PyIceberg"): ``observe(catalog)`` in code; the catalog
property ``metrics-reporter-impl: openlineage`` once ``scan_reporters.install()`` ran; ``iceberg-lineage run``.

Cost on the commit path: ``before_commit`` copies each new snapshot to add the summary property
``iceberg-lineage.run-id`` (the scanner then knows the snapshot was reported); ``after_commit``, ``after_scan`` and
``on_table_event`` only capture what PyIceberg already holds in memory and queue it. Events are built on the
emitter's thread from that in-memory metadata, with summary-depth statistics (no manifest is ever read).

Outside a run every snapshot is its own COMPLETE run (job ``<ns>.<table>.pyiceberg``, runId = the snapshot's tag),
every scan its own run (job ``<ns>.<table>.scan``), a metadata-only commit an ALTER run, a catalog operation a
CREATE/DROP/RENAME run, and a commit that fails for good a FAIL run. Inside a run they are RUNNING events of it.
"""
from __future__ import annotations

import datetime as dt
import json
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Collection, Mapping, Sequence

import attr
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run as OLRun, RunEvent, RunState

from iceberg_lineage.lineage import events as ev
from iceberg_lineage.config import Settings, load_settings
from iceberg_lineage.lineage.tags import RUN_ID_PROPERTY
from iceberg_lineage.lineage.facets import SCAN_REPORT_KEY, STATISTICS_KEY, ScanMetrics
from iceberg_lineage.lineage.facets import build as fb
from iceberg_lineage.hook.runs import Failure, Run, current_run, emitter_for, new_run_id, now
from iceberg_lineage.read.source import LoadedTable, load_table_object
from iceberg_lineage.stats import snapshot_stats

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.table import Table
    from pyiceberg.table.metadata import TableMetadata
    from scan_reporters import CommitOutcome, ScanOutcome, TableEvent

#: Job-name suffixes of commits and scans outside a run (``<ns>.<table>.<suffix>``).
COMMIT_ENGINE = "pyiceberg"
SCAN_ENGINE = "scan"
#: Reporter option (``metrics-reporter.openlineage.job-name``): the job of commits and scans outside a run.
JOB_NAME_OPTION = "job-name"

_LIFECYCLE = {"create": "CREATE", "register": "CREATE", "drop": "DROP", "rename": "RENAME"}


# -- snapshot tagging ------------------------------------------------------------------------------------------------


def tag_updates(updates: Sequence[Any], run_id_of: Callable[[int], str]) -> tuple[Any, ...]:
    """The updates with every added snapshot carrying ``iceberg-lineage.run-id``; other updates as they were."""
    from pyiceberg.table.snapshots import Summary
    from pyiceberg.table.update import AddSnapshotUpdate

    tagged = []
    for update in updates:
        if isinstance(update, AddSnapshotUpdate) and update.snapshot.summary is not None:
            snapshot, summary = update.snapshot, update.snapshot.summary
            properties = {**summary.additional_properties, RUN_ID_PROPERTY: run_id_of(snapshot.snapshot_id)}
            copy = snapshot.model_copy(update={"summary": Summary(summary.operation, **properties)})
            update = AddSnapshotUpdate(snapshot=copy)
        tagged.append(update)
    return tuple(tagged)


def _added_snapshot_ids(updates: Sequence[Any]) -> list[int]:
    from pyiceberg.table.update import AddSnapshotUpdate

    return [u.snapshot.snapshot_id for u in updates if isinstance(u, AddSnapshotUpdate)]


# -- what the user's thread captures -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TableState:
    """A table as PyIceberg held it at the moment of the operation (metadata objects are never mutated)."""

    catalog: Catalog
    identifier: tuple[str, ...]
    metadata: TableMetadata
    metadata_location: str | None

    def loaded(self, snapshot_ids: Collection[int] | None = None) -> LoadedTable:
        """The walker's view, built from the in-memory metadata without reading any file.

        ``snapshot_ids`` keeps only those snapshots (and no snapshot or metadata log), so the cost of an event does
        not grow with the table's history.
        """
        from pyiceberg.io import load_file_io
        from pyiceberg.table import Table

        metadata = self.metadata
        if snapshot_ids is not None:
            kept = [s for s in metadata.snapshots if s.snapshot_id in snapshot_ids]
            metadata = metadata.model_copy(update={"snapshots": kept, "snapshot_log": [], "metadata_log": []})
        location = self.metadata_location or metadata.location
        io = load_file_io({**self.catalog.properties, **metadata.properties}, location)
        return load_table_object(Table(self.identifier, metadata, location, io, self.catalog), read_file=False)


@dataclass(frozen=True)
class Commit:
    """One logical commit that succeeded, with the run ids its snapshots were tagged with."""

    table: TableState
    base: TableMetadata | None
    snapshot_ids: tuple[int, ...]
    run_ids: Mapping[int, str]
    attempts: int
    duration_ms: int


@dataclass(frozen=True)
class FailedCommit:
    """A commit whose exception reached the user; the table as it was before (``None`` for a create)."""

    table: TableState | None
    identifier: tuple[str, ...]
    run_id: str
    failure: Failure
    when: dt.datetime


@dataclass(frozen=True)
class Scan:
    """A planned scan: the table when it was planned, and the snapshot it actually read."""

    table: TableState
    snapshot_id: int
    outcome: ScanOutcome


@dataclass(frozen=True)
class CatalogChange:
    """create, register, drop or rename; for a rename ``table`` is under its new name."""

    kind: str
    table: TableState
    previous_identifier: tuple[str, ...] | None
    when: dt.datetime


# -- events (pure, given the captures) ---------------------------------------------------------------------------------


def _with_job(event: RunEvent, job_name: str | None) -> RunEvent:
    """The event under another job name (``observe(job_name=...)``), job facets kept."""
    if job_name is None:
        return event
    return attr.evolve(event, job=Job(namespace=event.job.namespace, name=job_name, facets=event.job.facets))


def commit_events(commit: Commit, settings: Settings) -> list[RunEvent]:
    """One COMPLETE run per added snapshot (runId = its tag); a create-transaction adds a CREATE run first, and a
    commit without snapshots is one ALTER run with the schema diff.

    Only the new snapshots and their parents are converted: no branch or tag can contain a brand-new snapshot
    except through the snapshots of the same commit, so their ``refs`` and ``staged`` stay exact.
    """
    md = commit.table.metadata
    parents = {s.parent_snapshot_id for sid in commit.snapshot_ids if (s := md.snapshot_by_id(sid)) is not None}
    keep = {*commit.snapshot_ids, *(p for p in parents if p is not None)}
    table = commit.table.loaded(keep if commit.snapshot_ids else None)
    out: list[RunEvent] = []
    if commit.base is None:
        out.append(ev.lifecycle_event(table, "CREATE", settings, engine=COMMIT_ENGINE, run_id=new_run_id(),
                                      event_time=now()))
    elif not commit.snapshot_ids:
        out.append(alter_event(table, commit.base, settings))
    for snapshot_id in commit.snapshot_ids:
        if table.metadata.snapshot_by_id(snapshot_id) is None:
            continue
        stats = snapshot_stats(table, snapshot_id, depth="summary")
        out.append(ev.snapshot_run_event(
            table, stats, settings, engine=COMMIT_ENGINE, run_id=commit.run_ids.get(snapshot_id) or new_run_id(),
            duration_ms=commit.duration_ms, attempts=commit.attempts,
        ))
    return out


def alter_event(table: LoadedTable, base: TableMetadata, settings: Settings) -> RunEvent:
    """A metadata-only commit: ALTER, with the schema diff and the refs in ``icebergTableStatistics``.

    The statistics are those of the snapshot a new branch or tag points at (its name is then in ``refs``), else
    of the current snapshot; a table without snapshots gets no statistics facet (it has nothing to count).
    """
    event = ev.lifecycle_event(table, "ALTER", settings, engine=COMMIT_ENGINE, run_id=new_run_id(), event_time=now())
    md = table.metadata
    new_refs = [ref for name, ref in md.refs.items() if name not in base.refs]
    snapshot_id = new_refs[0].snapshot_id if new_refs else md.current_snapshot_id
    if snapshot_id is None or md.snapshot_by_id(snapshot_id) is None:
        return event
    old_schema = md.schemas.get(base.current_schema_id)
    change = fb.schema_change(old_schema, md.current_schema) if old_schema is not None else None
    stats = snapshot_stats(table, snapshot_id, depth="summary")
    dataset = event.outputs[0]
    facets = {**dataset.facets, STATISTICS_KEY: fb.statistics_facet(stats, change)}
    return attr.evolve(event, outputs=[attr.evolve(dataset, facets=facets)])


def failed_commit_event(failed: FailedCommit, settings: Settings) -> RunEvent:
    """A commit whose exception reached the user: FAIL, with the table as it was before, and the error."""
    outputs = []
    job_table = None
    if failed.table is not None:
        job_table = failed.table.loaded()
        state = ev.dataset_event(job_table, None, settings).dataset
        outputs.append(OutputDataset(namespace=state.namespace, name=state.name, facets=state.facets))
    name = ev.job_name(job_table, COMMIT_ENGINE) if job_table else ".".join((*failed.identifier, COMMIT_ENGINE))
    return RunEvent(
        eventType=RunState.FAIL,
        eventTime=fb.iso_time(failed.when),
        run=OLRun(runId=failed.run_id, facets={"errorMessage": failed.failure.facet()}),
        job=Job(namespace=settings.job_namespace, name=name, facets={"jobType": fb.job_type_facet("COMMIT")}),
        outputs=outputs,
        producer=fb.PRODUCER,
    )


def _scan_metrics(outcome: ScanOutcome) -> dict[str, int]:
    """The scan report's counters under the facet's camelCase names (those it has); planning time in ms."""
    from scan_reporters.reports import kebab_to_camel

    known = {a.name for a in attr.fields(ScanMetrics)}
    values = {kebab_to_camel(name): value for name, value in outcome.report.scan_metrics.values().items()}
    out = {name: value for name, value in values.items() if name in known}
    if "totalPlanningDuration" in out:
        out["totalPlanningDuration"] //= 1_000_000
    return out


def _scan_input(table: LoadedTable, scan: Scan, settings: Settings) -> InputDataset:
    """The table at the snapshot actually read (time travel included), with what the scan planned."""
    stats = snapshot_stats(table, scan.snapshot_id, depth="summary")
    state = ev.dataset_event(table, stats, settings).dataset
    report = scan.outcome.report
    filter_description = "" if report.filter is True else json.dumps(report.filter, sort_keys=True)
    return InputDataset(
        namespace=state.namespace,
        name=state.name,
        facets=state.facets,
        inputFacets={
            "inputStatistics": fb.input_statistics_facet(
                scan.outcome.result_records, scan.outcome.result_file_size_in_bytes, scan.outcome.result_data_files
            ),
            SCAN_REPORT_KEY: fb.scan_report_facet(
                scan.snapshot_id,
                filter_description=filter_description,
                schema_id=report.schema_id,
                projected_field_names=report.projected_field_names,
                scan_metrics=_scan_metrics(scan.outcome),
                metadata=report.metadata,
            ),
        },
    )


def scan_event(scan: Scan, settings: Settings) -> RunEvent:
    """A scan as its own COMPLETE run of job ``<ns>.<table>.scan``, the table at the snapshot read as input."""
    table = scan.table.loaded()
    return RunEvent(
        eventType=RunState.COMPLETE,
        eventTime=fb.iso_time(now()),
        run=OLRun(runId=new_run_id()),
        job=Job(namespace=settings.job_namespace, name=ev.job_name(table, SCAN_ENGINE),
                facets={"jobType": fb.job_type_facet("QUERY")}),
        inputs=[_scan_input(table, scan, settings)],
        producer=fb.PRODUCER,
    )


def catalog_event(change: CatalogChange, settings: Settings) -> RunEvent:
    return ev.lifecycle_event(
        change.table.loaded(), _LIFECYCLE[change.kind], settings,  # type: ignore[arg-type]
        previous_identifier=change.previous_identifier, engine=COMMIT_ENGINE, run_id=new_run_id(),
        event_time=change.when,
    )


# -- the reporter ------------------------------------------------------------------------------------------------------


class OpenLineageMetricsReporter:
    """scan_reporters reporter emitting OpenLineage events; entry point ``openlineage``.

    Built with no arguments and configured by ``initialize(properties)`` (catalog properties, plus
    ``metrics-reporter.openlineage.job-name``), or with keyword arguments by :func:`observe`. Every method is
    exception-safe: a lineage failure never changes the outcome of the user's operation.
    """

    def __init__(self, *, client: Any = None, job_name: str | None = None, settings: Settings | None = None) -> None:
        self.client = client
        self.job_name = job_name
        self.settings = settings or load_settings()
        self._lock = threading.Lock()
        self._run_ids: dict[int, str] = {}

    def initialize(self, properties: Mapping[str, str]) -> None:
        self.job_name = properties.get(JOB_NAME_OPTION) or self.job_name

    def _submit(self, run: Run | None, build: Callable[[], Sequence[RunEvent]]) -> None:
        """Queue events; inside a run they become RUNNING events of it, carrying their datasets."""
        if run is not None:
            run.emitter.submit(lambda: [run.running(e.inputs or (), e.outputs or ()) for e in build()])
            return
        job_name = self.job_name
        emitter_for(self.client, self.settings).submit(lambda: [_with_job(e, job_name) for e in build()])

    def report(self, report: Any) -> None:
        """ScanReports and CommitReports arrive through ``after_scan``/``after_commit`` with more context."""

    def before_commit(self, table: Table, updates: tuple[Any, ...]) -> tuple[Any, ...]:
        """Give each new snapshot a run id (kept across retries: snapshot ids are stable) and tag it with it."""
        run = current_run()
        with self._lock:
            run_ids = {
                sid: self._run_ids.setdefault(sid, run.run_id if run is not None else new_run_id())
                for sid in _added_snapshot_ids(updates)
            }
        if not self.settings.hook_tag_snapshots:
            return updates
        return tag_updates(updates, run_ids.__getitem__)

    def after_commit(self, outcome: CommitOutcome) -> None:
        with self._lock:
            run_ids = {sid: self._run_ids.pop(sid) for sid in outcome.added_snapshot_ids if sid in self._run_ids}
        run, settings = current_run(), self.settings
        if outcome.error is not None:
            if run is None:  # inside a run, the exception fails the run if the user lets it through
                base = outcome.base_metadata
                failed = FailedCommit(
                    None if base is None else TableState(outcome.catalog, outcome.identifier, base, None),
                    outcome.identifier, next(iter(run_ids.values()), None) or new_run_id(),
                    Failure.of(outcome.error), now(),
                )
                self._submit(None, lambda: [failed_commit_event(failed, settings)])
            return
        if outcome.metadata is None:
            return
        commit = Commit(
            TableState(outcome.catalog, outcome.identifier, outcome.metadata, outcome.metadata_location),
            outcome.base_metadata, tuple(outcome.added_snapshot_ids), run_ids, outcome.attempts,
            outcome.duration_ns // 1_000_000,
        )
        self._submit(run, lambda: commit_events(commit, settings))

    def after_scan(self, outcome: ScanOutcome) -> None:
        table, settings = outcome.table, self.settings
        scan = Scan(TableState(table.catalog, tuple(table.name()), table.metadata, table.metadata_location),
                    outcome.snapshot_id, outcome)
        self._submit(current_run(), lambda: [scan_event(scan, settings)])

    def on_table_event(self, event: TableEvent) -> None:
        if event.metadata is None:
            return  # a drop whose table could not be loaded first: nothing names the dataset
        renamed = event.kind == "rename" and event.new_identifier is not None
        change = CatalogChange(
            event.kind,
            TableState(event.catalog, tuple(event.new_identifier if renamed else event.identifier),  # type: ignore[arg-type]
                       event.metadata, event.metadata_location),
            event.identifier if renamed else None, now(),
        )
        settings = self.settings
        self._submit(current_run(), lambda: [catalog_event(change, settings)])

    def close(self) -> None:
        """Events already queued are still delivered (the emitter is shared and flushed at exit)."""


# -- attaching ---------------------------------------------------------------------------------------------------------


def observe(catalog: Catalog, client: Any = None, job_name: str | None = None) -> Catalog:
    """Instrument ``catalog`` (and tables already loaded from it) to emit OpenLineage events; returns it.

    ``client`` defaults to :func:`iceberg_lineage.delivery.client.make_client`; ``job_name`` replaces the per-table job
    names of commits and scans outside a run. Reporters named by the catalog's ``metrics-reporter-impl`` keep
    reporting; an ``openlineage`` one among them is replaced by this one, so nothing is emitted twice.
    """
    from scan_reporters.instrument import instrument
    from scan_reporters.reporters.base import METRICS_REPORTER_IMPL, CompositeMetricsReporter, load_reporters

    from iceberg_lineage.redact import protect

    protect(catalog.properties)  # its secrets never reach our logs
    configured = load_reporters(catalog.properties).reporters if catalog.properties.get(METRICS_REPORTER_IMPL) else ()
    others = [r for r in configured if not isinstance(r, OpenLineageMetricsReporter)]
    reporter = OpenLineageMetricsReporter(client=client, job_name=job_name)
    return instrument(catalog, CompositeMetricsReporter([*others, reporter]))


def observe_all(client: Any = None) -> None:
    """Observe every catalog ``pyiceberg.catalog.load_catalog`` returns from now on (``iceberg-lineage run``)."""
    import pyiceberg.catalog as catalog_module
    from scan_reporters.instrument import install

    install()
    installed = catalog_module.load_catalog

    def load_catalog(name: str | None = None, **properties: str | None) -> Catalog:
        return observe(installed(name, **properties), client)

    load_catalog.__wrapped__ = installed  # type: ignore[attr-defined]
    catalog_module.load_catalog = load_catalog  # type: ignore[assignment]


def bootstrap(env: Mapping[str, str]) -> None:
    """The child side of ``iceberg-lineage run``: join the parent's run, and observe every catalog loaded once the
    program imports ``pyiceberg.catalog`` (not before: PyIceberg reads its configuration at that import)."""
    from iceberg_lineage.hook.runs import attach_process_run

    if attach_process_run(env) is not None:
        after_import("pyiceberg.catalog", observe_all)


def after_import(module: str, then: Callable[[], None]) -> None:
    """Call ``then`` right after ``module`` is first imported (now, if it already is); its errors are reported on
    stderr and never fail the import."""
    import importlib.abc
    import importlib.util
    import sys

    def call() -> None:
        try:
            then()
        except Exception as exc:  # noqa: BLE001 - the user's program runs regardless
            sys.stderr.write(f"iceberg-lineage: not instrumenting PyIceberg ({type(exc).__name__}: {exc})\n")

    if module in sys.modules:
        call()
        return

    class Watch(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
            if fullname != module:
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(fullname)
            if spec is None or spec.loader is None:
                return spec
            execute = spec.loader.exec_module

            def exec_module(target_module: Any) -> None:
                execute(target_module)
                call()

            spec.loader.exec_module = exec_module  # type: ignore[method-assign]
            return spec

    sys.meta_path.insert(0, Watch())
