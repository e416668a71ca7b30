"""What the hook captures from PyIceberg on the user's thread, and the events built from it (pure, given the
captures), on the emitter's thread: summary-depth statistics from the in-memory metadata, no manifest read.

Outside a run every snapshot is its own run, START and COMPLETE at the snapshot's time, exactly as the scanner
rebuilds it from the snapshot's tag (job ``<ns>.<table>.pyiceberg``, the deterministic snapshot runId); every scan
its own run (job ``<ns>.<table>.scan``), a metadata-only commit an ALTER run, a catalog operation a
CREATE/DROP/RENAME run, and a commit that fails for good a FAIL run, each a START then its terminal event
(:func:`~iceberg_lineage.lineage.events.with_start`; inside a run context the hook drops the STARTs). Each builder
gives a list of events, so the hook queues any capture the same way.
"""
from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Collection, Mapping

import attr
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run as OLRun, RunEvent, RunState

from iceberg_lineage.config import Settings
from iceberg_lineage.lineage import events as ev
from iceberg_lineage.lineage import facets as fb
from iceberg_lineage.lineage.serde import Plain
from iceberg_lineage.lineage.runs import Attachment, Failure, hook_run_facets, new_run_id, now
from iceberg_lineage.lineage.tags import Ownership
from iceberg_lineage.read.source import LoadedTable, load_table_object
from iceberg_lineage.stats import snapshot_stats

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.table.metadata import TableMetadata
    from scan_reporters import ScanOutcome

#: Job-name suffixes of commits and scans outside a run (``<ns>.<table>.<suffix>``).
COMMIT_ENGINE = "pyiceberg"
SCAN_ENGINE = "scan"

_LIFECYCLE = {"create": "CREATE", "register": "CREATE", "drop": "DROP", "rename": "RENAME"}


# -- what the user's thread captures -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TableCapture:
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
    """One logical commit that succeeded, with the ownership its snapshots were tagged with."""

    table: TableCapture
    base: TableMetadata | None
    snapshot_ids: tuple[int, ...]
    owners: Mapping[int, Ownership]
    attempts: int
    duration_ms: int


@dataclass(frozen=True)
class FailedCommit:
    """A commit whose exception reached the user; the table as it was before (``None`` for a create)."""

    table: TableCapture | None
    identifier: tuple[str, ...]
    run_id: str
    failure: Failure
    when: dt.datetime


@dataclass(frozen=True)
class Scan:
    """A planned scan: the table when it was planned, and the snapshot it actually read."""

    table: TableCapture
    snapshot_id: int
    outcome: ScanOutcome


@dataclass(frozen=True)
class CatalogChange:
    """create, register, drop or rename; for a rename ``table`` is under its new name."""

    kind: str
    table: TableCapture
    previous_identifier: tuple[str, ...] | None
    when: dt.datetime


# -- events (pure, given the captures) ---------------------------------------------------------------------------------


def own_run_event(event: RunEvent, job_name: str | None, attached: Attachment) -> RunEvent:
    """An event of a run of its own (a snapshot's, a scan's...) as the hook sends it outside a run context: with the
    hook's run facets (:func:`~iceberg_lineage.lineage.runs.hook_run_facets`; an engine the snapshot names itself
    is kept), under another job name when one is given (``observe(job_name=...)``), job facets kept. In ``event``'s
    form (objects, or plain: a commit's)."""
    if isinstance(event, dict):
        run = Plain({**event["run"], "facets": Plain({**_plain_hook_facets(attached), **event["run"]["facets"]})})
        if job_name is None:
            return Plain({**event, "run": run})  # type: ignore[return-value]
        job = Plain({**event["job"], "name": job_name})
        return Plain({**event, "run": run, "job": job})  # type: ignore[return-value]
    run = attr.evolve(event.run, facets={**hook_run_facets(attached), **(event.run.facets or {})})
    if job_name is None:
        return attr.evolve(event, run=run)
    return attr.evolve(event, run=run, job=Job(namespace=event.job.namespace, name=job_name, facets=event.job.facets))


@functools.lru_cache(maxsize=None)
def _plain_hook_facets(attached: Attachment) -> Plain:
    """:func:`~iceberg_lineage.lineage.runs.hook_run_facets` in plain form: the same for every run of the process
    (the engine's version, how the hook came to report), so made once (a :class:`Plain` is never changed)."""
    return Plain(hook_run_facets(attached, plain=True))


def commit_events(commit: Commit, settings: Settings) -> list[RunEvent]:
    """Per added snapshot, the events its tag's owner sends (:func:`~iceberg_lineage.lineage.events.owned_run_events`
    for a snapshot's own run; the bare snapshot event, made a RUNNING event by the hook, inside a run context); a
    create-transaction adds a CREATE run first, and a commit without snapshots is one ALTER run with the schema diff;
    every run of its own gets its START (:func:`~iceberg_lineage.lineage.events.with_start`). A snapshot's events
    are built in plain form (:func:`~iceberg_lineage.lineage.serde.make`): no openlineage-python object is made and
    then serialised on the hook's busiest path; the delivery prepares them as objects
    (:func:`~iceberg_lineage.delivery.preview.outgoing`).

    Only the new snapshots and their parents are converted: no branch or tag can contain a brand-new snapshot
    except through the snapshots of the same commit, so their ``refs`` and ``staged`` stay exact.
    """
    md = commit.table.metadata
    parents = {s.parent_snapshot_id for sid in commit.snapshot_ids if (s := md.snapshot_by_id(sid)) is not None}
    keep = {*commit.snapshot_ids, *(p for p in parents if p is not None)}
    table = commit.table.loaded(keep if commit.snapshot_ids else None)
    out: list[RunEvent] = []
    if commit.base is None:
        out += ev.with_start(ev.lifecycle_event(table, "CREATE", settings, engine=COMMIT_ENGINE, run_id=new_run_id(),
                                             event_time=now()), settings)
    elif not commit.snapshot_ids:
        out += ev.with_start(metadata_commit_event(table, commit.base, settings), settings)
    for snapshot_id in commit.snapshot_ids:
        if table.metadata.snapshot_by_id(snapshot_id) is None:
            continue
        stats = snapshot_stats(table, snapshot_id, depth="summary")
        owner = commit.owners.get(snapshot_id)
        event = ev.snapshot_run_event(
            table, stats, settings, engine=COMMIT_ENGINE, run_id=owner.run_id if owner else new_run_id(),
            duration_ms=commit.duration_ms, attempts=commit.attempts, plain=True,
        )
        began = fb.ms_to_datetime(stats.timestamp_ms)  # the commit's start; its COMPLETE is at its end
        if owner is None:  # untagged (no before_commit saw it): a run of its own
            out += ev.with_start(event, settings, began)
        elif owner.owner == "snapshot":
            out += ev.owned_run_events(event, owner, start=settings.events.start_events, started_at=began)
        else:  # a run context's snapshot: the bare event, made a RUNNING event of the context by the hook
            out.append(event)
    return out


def metadata_commit_event(table: LoadedTable, base: TableMetadata, settings: Settings) -> RunEvent:
    """A metadata-only commit seen by the hook: :func:`~iceberg_lineage.lineage.events.alter_event` against the
    metadata the commit started from, as a fresh run of the hook's job."""
    return ev.alter_event(table, settings, base_refs=base.refs, base_schema_id=base.current_schema_id,
                          engine=COMMIT_ENGINE, run_id=new_run_id(), event_time=now())


def failed_commit_events(failed: FailedCommit, settings: Settings) -> list[RunEvent]:
    """A commit whose exception reached the user: START and FAIL, with the table as it was before, and the error
    (on the FAIL only)."""
    outputs = []
    job_table = None
    if failed.table is not None:
        job_table = failed.table.loaded()
        state = ev.dataset_event(job_table, None, settings).dataset
        outputs.append(OutputDataset(namespace=state.namespace, name=state.name, facets=state.facets))
    name = ev.job_name(job_table, COMMIT_ENGINE) if job_table else ".".join((*failed.identifier, COMMIT_ENGINE))
    return ev.with_start(RunEvent(
        eventType=RunState.FAIL,
        eventTime=fb.iso_time(failed.when),
        run=OLRun(runId=failed.run_id, facets={"errorMessage": failed.failure.facet()}),
        job=Job(namespace=settings.job.namespace, name=name, facets={"jobType": fb.job_type_facet("COMMIT")}),
        outputs=outputs,
        producer=fb.PRODUCER,
    ), settings)


def _scan_input(table: LoadedTable, scan: Scan, settings: Settings) -> InputDataset:
    """The table at the snapshot actually read (time travel included), with what the scan planned."""
    stats = snapshot_stats(table, scan.snapshot_id, depth="summary")
    state = ev.dataset_event(table, stats, settings).dataset
    outcome = scan.outcome
    return InputDataset(
        namespace=state.namespace,
        name=state.name,
        facets=state.facets,
        inputFacets=fb.scan_report_input_facets(outcome.report, row_count=outcome.result_records,
                                                size=outcome.result_file_size_in_bytes,
                                                file_count=outcome.result_data_files),
    )


def scan_events(scan: Scan, settings: Settings) -> list[RunEvent]:
    """A scan as its own run of job ``<ns>.<table>.scan``, START and COMPLETE, the table at the snapshot read as
    input."""
    table = scan.table.loaded()
    return ev.with_start(scan_run_event(table, _scan_input(table, scan, settings), settings), settings)


def scan_run_event(table: LoadedTable, dataset: InputDataset, settings: Settings) -> RunEvent:
    """A scan outside any run (the hook's, or a scan report without an application id at the REST bridge): its own
    COMPLETE run of job ``<ns>.<table>.scan`` with the table read as input."""
    return RunEvent(
        eventType=RunState.COMPLETE,
        eventTime=fb.iso_time(now()),
        run=OLRun(runId=new_run_id()),
        job=Job(namespace=settings.job.namespace, name=ev.job_name(table, SCAN_ENGINE),
                facets={"jobType": fb.job_type_facet("QUERY")}),
        inputs=[dataset],
        producer=fb.PRODUCER,
    )


def catalog_events(change: CatalogChange, settings: Settings) -> list[RunEvent]:
    """A catalog operation as its own CREATE, DROP or RENAME run, START and COMPLETE."""
    return ev.with_start(ev.lifecycle_event(
        change.table.loaded(), _LIFECYCLE[change.kind], settings,  # type: ignore[arg-type]
        previous_identifier=change.previous_identifier, engine=COMMIT_ENGINE, run_id=new_run_id(),
        event_time=change.when,
    ), settings)
