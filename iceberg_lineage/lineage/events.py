"""OpenLineage events of an Iceberg table: one run per snapshot, dataset-only state events, and lifecycle runs.

Events are pure values built with openlineage-python's classes, or (``plain``, as the scanner builds them) as the
very JSON those objects serialise to, by the same builders (:func:`~iceberg_lineage.lineage.serde.make`). Run ids
of snapshots are deterministic (UUIDv7 at the snapshot's timestamp, hashed from table identity and snapshot id), so
emitting the same history twice gives the same runs; :func:`~iceberg_lineage.lineage.serde.to_json` sorts keys, so
the JSON is byte-identical apart from ``captureDate``.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
from typing import TYPE_CHECKING, Callable, Iterable, Literal, Mapping, TypeVar
from uuid import UUID

import attr
from openlineage.client.event_v2 import (
    DatasetEvent,
    InputDataset,
    Job,
    OutputDataset,
    Run,
    RunEvent,
    RunState,
    StaticDataset,
)
from openlineage.client.uuid import generate_static_uuid

from iceberg_lineage.config import Settings
from iceberg_lineage.lineage.facets import COMMIT_REPORT_KEY, STATISTICS_KEY
from iceberg_lineage.lineage import facets as fb
from iceberg_lineage.lineage.budget import trim
from iceberg_lineage.lineage.objects import part
from iceberg_lineage.lineage.serde import Plain, as_objects, from_plain, make, to_json
from iceberg_lineage.read.metadata import Schema
from iceberg_lineage.lineage.naming import dataset_identity, table_parts
from iceberg_lineage.lineage.runs import application_of, application_ref, parent_facet
from iceberg_lineage.lineage.table_facets import TableFacets, present
from iceberg_lineage.lineage.tags import Ownership
from iceberg_lineage.read.source import LoadedTable
from iceberg_lineage.stats import snapshot_stats, table_history
from iceberg_lineage.stats.model import SnapshotStats, TableHistory

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from iceberg_lineage.stats import ManifestCache

#: Job-name suffix of snapshots whose summary names no engine.
DEFAULT_ENGINE = "commit"

TableEventKind = Literal["CREATE", "DROP", "RENAME", "ALTER", "TRUNCATE", "OVERWRITE"]


# -- ids and names ---------------------------------------------------------------------------------------------------

def snapshot_run_id(identity: str, snapshot_id: int, timestamp_ms: int) -> UUID:
    """The run id of a snapshot: the same on every machine, every time."""
    return generate_static_uuid(fb.ms_to_datetime(timestamp_ms), f"{identity}{snapshot_id}".encode())


def lifecycle_run_id(identity: str, kind: str, metadata_location: str | None, instant: dt.datetime) -> UUID:
    """The run id of a DROP or RENAME seen by a scanner: stable for one table, kind and metadata file."""
    return generate_static_uuid(instant, f"{identity}{kind}{metadata_location or ''}".encode())


def job_name(table: LoadedTable, engine: str) -> str:
    """``<ns>.<table>.<engine>``; without a catalog the table is the location's last segment (``<table>.<engine>``)."""
    namespace, name = table_parts(table)
    return ".".join((*namespace, name, engine))


def snapshot_engine(summary: Mapping[str, str]) -> str:
    return summary.get("engine-name") or DEFAULT_ENGINE


_E = TypeVar("_E", RunEvent, DatasetEvent)


def _fit(build: Callable[[], _E], stats: SnapshotStats | None, max_bytes: int) -> _E:
    """Build an event, trimmed to ``events.max_bytes`` (:mod:`~iceberg_lineage.lineage.budget`) when over it.

    Only events with column statistics are measured here: without them an event is far smaller, and serialising
    to measure would double the cost of every hook event (a consumer profile with a lower limit measures every
    event before it is sent). An event in plain form is measured as it is, and only one over the budget becomes
    objects to be trimmed (then plain again)."""
    event = build()
    if stats is None or not stats.columns:
        return event
    if isinstance(event, dict):
        if len(to_json(event).encode()) <= max_bytes:
            return event
        return Plain(json.loads(to_json(trim(from_plain(event), max_bytes).event)))  # type: ignore[return-value]
    return trim(event, max_bytes).event  # type: ignore[return-value]


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


# -- events ----------------------------------------------------------------------------------------------------------

def snapshot_run_event(
    table: LoadedTable,
    stats: SnapshotStats,
    settings: Settings,
    *,
    parent_schema: Schema | None = None,
    engine: str | None = None,
    run_id: UUID | str | None = None,
    event_type: RunState = RunState.COMPLETE,
    duration_ms: int | None = None,
    attempts: int | None = None,
    capture_time: dt.datetime | None = None,
    elapsed_ms: int | None = None,
    shared: TableFacets | None = None,
    plain: bool = False,
) -> RunEvent:
    """The run that produced one snapshot, with the table (at that snapshot) as its output.

    ``parent_schema`` defaults to the parent snapshot's schema from the table metadata; ``engine`` to the
    summary's ``engine-name`` (else ``commit``); ``run_id`` to :func:`snapshot_run_id`. Hooks pass their own
    engine, a fresh run id, and the measured ``duration_ms`` and ``attempts``.

    The event is at the snapshot's time (the commit's start: the snapshot is stamped as its commit begins), plus
    ``duration_ms`` when it was measured: the commit's end, so the run lasts as long as the commit did. Without it
    (a scanner reading history) the run is instant: nothing says how long it took. ``elapsed_ms`` moves the end
    the same way where only the run's time is known, not the commit's own metrics (the proxy measured how long the
    catalog took to answer the commit). ``shared``: the table's facets, shared with its other snapshots' events.
    ``plain``: the event in its JSON form (:func:`~iceberg_lineage.lineage.serde.make`), as ``shared`` has it if given.
    """
    md = table.metadata
    shared = shared or TableFacets(table, settings, plain=plain)
    plain = shared.plain
    before = parent_schema if parent_schema is not None else shared.parent_schema(stats)
    after = shared.snapshot_schema(stats)
    # the parent's schema itself (most commits keep the schema): nothing to compare
    change = fb.schema_change(before, after) if before is not None and before is not after else None
    lifecycle = fb.snapshot_lifecycle(stats, change is not None)
    identity = shared.identity
    summary = stats.summary
    engine_name = engine or snapshot_engine(summary)
    capture = capture_time or _now()

    application = application_of(summary)
    run_facets = present({
        "externalQuery": fb.external_query_facet(summary, plain=plain),
        "processing_engine": fb.processing_engine_facet(summary, plain=plain),
        # the engine application that committed (spark.app.id, flink.job-id): the bridge's application run
        "parent": parent_facet(application_ref(*application, settings.job.namespace), plain=plain)
        if application else None,
    })
    output_facets = present({
        "outputStatistics": fb.output_statistics_facet(stats, plain=plain),
        COMMIT_REPORT_KEY: fb.commit_report_facet(
            stats.snapshot_id, stats.sequence_number, summary, duration_ms=duration_ms, attempts=attempts,
            plain=plain,
        ),
    })

    def build() -> RunEvent:
        facets = shared.of_snapshot(stats, change, capture)
        if lifecycle is not None:
            facets["lifecycleStateChange"] = fb.lifecycle_facet(lifecycle, plain=plain)
        return make(
            RunEvent, plain,
            eventType=event_type,
            eventTime=fb.iso_ms(stats.timestamp_ms + (duration_ms or elapsed_ms or 0)),
            run=make(Run, plain, runId=str(run_id or snapshot_run_id(md.identity, stats.snapshot_id,
                                                                     stats.timestamp_ms)), facets=run_facets),
            job=shared.commit_job(job_name(table, engine_name)),
            outputs=[make(OutputDataset, plain, namespace=identity.namespace, name=identity.name, facets=facets,
                          outputFacets=output_facets)],
            producer=fb.PRODUCER,
        )

    return _fit(build, stats, settings.events.max_bytes)


def start_event(terminal: RunEvent, started_at: dt.datetime | None = None) -> RunEvent:
    """START of a run we start: its run (without ``errorMessage``: nothing failed yet), its job, and its inputs by
    identity (name and symlinks); at ``started_at`` when the run's start is known (a hooked commit), else at its
    terminal event's time (so it is as deterministic as that event).

    No outputs: the terminal event carries them. Marquez makes a dataset version of every output of every run event,
    so a START listing the table made a second, facet-less version per snapshot (it reuses the current version of an
    input instead). In the terminal event's form (objects, or plain)."""
    plain = isinstance(terminal, dict)

    def identity(dataset: InputDataset | OutputDataset) -> InputDataset:
        return make(InputDataset, plain, namespace=part(dataset, "namespace"), name=part(dataset, "name"),
                    facets={k: v for k, v in (part(dataset, "facets") or {}).items() if k == "symlinks"})

    run = part(terminal, "run")
    run_facets = part(run, "facets") or {}
    if not plain or "errorMessage" in run_facets:  # else the terminal's very run: a plain part is never changed
        run = make(Run, plain, runId=part(run, "runId"),
                   facets={k: v for k, v in run_facets.items() if k != "errorMessage"})
    return make(
        RunEvent, plain,
        eventType=RunState.START,
        eventTime=fb.iso_time(started_at) if started_at is not None else part(terminal, "eventTime"),
        run=run,
        job=part(terminal, "job"),
        inputs=[identity(i) for i in part(terminal, "inputs") or ()],
        outputs=[],
        producer=part(terminal, "producer"),
    )


def with_start(terminal: RunEvent, settings: Settings, started_at: dt.datetime | None = None) -> list[RunEvent]:
    """A run we start, as it is sent: its START (:func:`start_event`, unless ``events.start_events`` is off), then
    its terminal event. Both are deterministic where the run is, so a re-sent pair is identical to the first."""
    return _paired(terminal, settings.events.start_events, started_at)


def _paired(terminal: RunEvent, start: bool, started_at: dt.datetime | None = None) -> list[RunEvent]:
    return [start_event(terminal, started_at), terminal] if start else [terminal]


def all_with_start(terminals: Iterable[RunEvent], settings: Settings) -> list[RunEvent]:
    """:func:`with_start` of each run, in order."""
    return [e for terminal in terminals for e in with_start(terminal, settings)]


def owned_run_events(event: RunEvent, owner: Ownership, *, start: bool = True,
                     started_at: dt.datetime | None = None) -> list[RunEvent]:
    """The events of a tagged snapshot, rebuilt from its run event (:func:`snapshot_run_event`) and its tag: the
    hook sends these, and the scanner re-sends them when the ledger does not know them as delivered.

    A snapshot that owns its run gets START (unless ``start`` is False: ``events.start_events``) and COMPLETE of
    that run (the tag's runId and job), in ``event``'s form (objects, or plain: the hook's); a snapshot of a run
    context gets an OTHER event of the context's run carrying the output at that version (the spec allows OTHER after
    the run's terminal event): its parent is that run itself.
    """
    if owner.owner == "snapshot":
        plain = isinstance(event, dict)
        run = make(Run, plain, runId=owner.run_id, facets=part(part(event, "run"), "facets"))
        job = make(Job, plain, namespace=owner.job_namespace, name=owner.job_name,
                   facets=part(part(event, "job"), "facets"))
        complete = Plain({**event, "run": run, "job": job}) if plain else attr.evolve(event, run=run, job=job)
        return _paired(complete, start, started_at)  # type: ignore[arg-type]
    return [RunEvent(
        eventType=RunState.OTHER,
        eventTime=event.eventTime,
        run=Run(runId=owner.run_id),
        job=Job(namespace=owner.job_namespace, name=owner.job_name, facets={"jobType": fb.job_type_facet("JOB")}),
        outputs=event.outputs,
        producer=event.producer,
    )]


def snapshot_runs(
    table: LoadedTable, snapshot_ids: Iterable[int], settings: Settings, *, depth: str,
    owners: Mapping[int, Ownership] | None = None, capture_time: dt.datetime | None = None,
    executor: Executor | None = None, cache: ManifestCache | None = None, elapsed_ms: int | None = None,
    plain: bool = False,
) -> dict[int, list[RunEvent]]:
    """The events each snapshot's run is reported with, as the scanner and the REST bridge send them: START and
    COMPLETE of its run (:func:`with_start`, :func:`snapshot_run_event`) at ``depth``, or for a snapshot in ``owners``
    (tagged by the hook) the rebuild of its owner's events (:func:`owned_run_events`). A run of its own starts at
    the snapshot's time and lasts ``elapsed_ms`` where it was measured (the proxy), else it is instant. ``plain``: the
    events of runs of their own in plain form (:func:`snapshot_run_event`); an owner's rebuild is always objects."""
    history = table_history(table, depth=depth, columns=settings.column_stats,  # type: ignore[arg-type]
                            snapshot_ids=list(snapshot_ids), executor=executor, cache=cache)
    runs: dict[int, list[RunEvent]] = {}
    shared = TableFacets(table, settings, plain=plain)
    for stats in history:
        owner = (owners or {}).get(stats.snapshot_id)
        event = snapshot_run_event(table, stats, settings, capture_time=capture_time,
                                   elapsed_ms=None if owner is not None else elapsed_ms, shared=shared)
        runs[stats.snapshot_id] = (owned_run_events(as_objects(event), owner,
                                                    start=settings.events.start_events)
                                   if owner is not None
                                   # an instant run starts at its COMPLETE's time, already written in it
                                   else with_start(event, settings,
                                                   fb.ms_to_datetime(stats.timestamp_ms) if elapsed_ms else None))
    return runs


def history_events(
    table: LoadedTable, history: TableHistory | Iterable[SnapshotStats], settings: Settings, *,
    capture_time: dt.datetime | None = None,
) -> list[RunEvent]:
    """One COMPLETE run per snapshot, in commit order."""
    capture = capture_time or _now()
    return [snapshot_run_event(table, stats, settings, capture_time=capture) for stats in history]


def dataset_event(
    table: LoadedTable,
    stats: SnapshotStats | None,
    settings: Settings,
    *,
    capture_time: dt.datetime | None = None,
) -> DatasetEvent:
    """The table's current state without a run: table facets plus, when there is a snapshot, its statistics.

    The event time is the snapshot's timestamp (the table's last update without one), so re-emitting an
    unchanged table gives the same event.
    """
    md = table.metadata
    shared = TableFacets(table, settings)
    identity = shared.identity
    capture = capture_time or _now()
    when = fb.ms_to_datetime(stats.timestamp_ms) if stats is not None else fb.ms_to_datetime(md.last_updated_ms or 0)

    def build() -> DatasetEvent:
        if stats is None:
            facets = shared.of_table(md.current_schema)
        else:
            facets = shared.of_snapshot(stats, None, capture)
        return DatasetEvent(
            eventTime=fb.iso_time(when),
            dataset=StaticDataset(namespace=identity.namespace, name=identity.name, facets=facets),
            producer=fb.PRODUCER,
        )

    return _fit(build, stats, settings.events.max_bytes)


def lifecycle_event(
    table: LoadedTable,
    kind: TableEventKind,
    settings: Settings,
    *,
    previous_identifier: tuple[str, ...] | None = None,
    engine: str = "catalog",
    run_id: UUID | str | None = None,
    event_time: dt.datetime | None = None,
) -> RunEvent:
    """A catalog operation on the table (CREATE, DROP, RENAME...) as a COMPLETE run with the table as output.

    For RENAME, ``table`` is the renamed table and ``previous_identifier`` its old catalog identifier. Without
    ``run_id`` the id is deterministic (:func:`lifecycle_run_id` at the metadata's last update), as a scanner
    needs; hooks pass a fresh ``generate_new_uuid()``.
    """
    md = table.metadata
    shared = TableFacets(table, settings)
    identity = shared.identity
    last_update = fb.ms_to_datetime(md.last_updated_ms or 0)
    previous = None
    if previous_identifier is not None:
        old = dataset_identity(dataclasses.replace(table, identifier=tuple(previous_identifier)), settings)
        previous = (old.namespace, old.name)
    facets = shared.of_table(md.current_schema)
    if md.current_snapshot_id is not None:
        facets["version"] = fb.version_facet(md.current_snapshot_id)
    facets["lifecycleStateChange"] = fb.lifecycle_facet(fb.LifecycleStateChange(kind), previous)
    return RunEvent(
        eventType=RunState.COMPLETE,
        eventTime=fb.iso_time(event_time or _now()),
        run=Run(runId=str(run_id or lifecycle_run_id(md.identity, kind, md.metadata_location, last_update))),
        job=Job(
            namespace=settings.job.namespace,
            name=job_name(table, engine),
            facets={"jobType": fb.job_type_facet(kind)},
        ),
        outputs=[OutputDataset(namespace=identity.namespace, name=identity.name, facets=facets)],
        producer=fb.PRODUCER,
    )



def alter_event(
    table: LoadedTable, settings: Settings, *, base_refs: Iterable[str], base_schema_id: int | None,
    engine: str = "catalog", run_id: UUID | str | None = None, event_time: dt.datetime | None = None,
) -> RunEvent:
    """A metadata-only change (schema, spec, properties, refs): ALTER, with the schema diff from ``base_schema_id``
    and the refs in ``icebergTableStatistics``. Without ``run_id`` the id is :func:`lifecycle_run_id`'s.

    The statistics are those of the snapshot a new branch or tag points at (its name is then in ``refs``), else
    of the current snapshot; a table without snapshots gets no statistics facet (it has nothing to count).
    """
    event = lifecycle_event(table, "ALTER", settings, engine=engine, run_id=run_id, event_time=event_time)
    md = table.metadata
    known = set(base_refs)
    new_refs = [ref for name, ref in md.refs.items() if name not in known]
    snapshot_id = new_refs[0].snapshot_id if new_refs else md.current_snapshot_id
    if snapshot_id is None or md.snapshot_by_id(snapshot_id) is None:
        return event
    old_schema = md.schemas.get(base_schema_id) if base_schema_id is not None else None
    change = fb.schema_change(old_schema, md.current_schema) if old_schema is not None else None
    stats = snapshot_stats(table, snapshot_id, depth="summary")
    dataset = event.outputs[0]
    facets = {**dataset.facets, STATISTICS_KEY: fb.statistics_facet(stats, change)}
    return attr.evolve(event, outputs=[attr.evolve(dataset, facets=facets)])
