"""Consumer profiles (``consumer.profile``): what each lineage consumer accepts, declared once, and the steps that
apply it to a built event, each an event object in and event objects out (:mod:`~iceberg_lineage.lineage.shaping`
runs them, for delivery and for every command that prints events).

A profile sets the event kinds the consumer accepts (DataZone and Dataplex take RunEvents only: the current state
is then sent as the current snapshot's run, :func:`current_state_event`), the job namespace (Atlan's connection),
the byte limit (trimmed by :mod:`~iceberg_lineage.lineage.budget`), the input -> output links per event and per run,
and the longest fully qualified name. ``generic`` changes nothing. Pure: no step changes the event it is given (a
changed event is a new object, :func:`attr.evolve`), and what a step leaves out is returned as notes.
"""
from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

import attr
from openlineage.client.event_v2 import Dataset, InputDataset, Job, Run, RunEvent, RunState
from openlineage.client.facet_v2 import data_quality_metrics_input_dataset
from openlineage.client.uuid import generate_static_uuid

from iceberg_lineage.config import Settings
from iceberg_lineage.lineage import facets as fb
from iceberg_lineage.lineage.checks import CHECKS_ENGINE
from iceberg_lineage.lineage.events import dataset_event, snapshot_run_event
from iceberg_lineage.lineage.runs import RunRef, parent_facet
from iceberg_lineage.lineage.objects import Part, part, replaced
from iceberg_lineage.lineage.serde import Event

if TYPE_CHECKING:
    from iceberg_lineage.read.source import LoadedTable
    from iceberg_lineage.stats.model import SnapshotStats

TERMINAL = frozenset({"COMPLETE", "FAIL", "ABORT"})
#: Fixed namespace of the table runs' ids (:func:`table_run_id`; never change it: parents already sent would move).
TABLE_RUN_NAMESPACE = uuid.UUID("0b8e6c2a-41f7-5d3e-9a6b-7c2d1e0f4a93")
#: Jobs that are roots of their own (an engine application, a run context, ``iceberg-lineage run``): never given a
#: table's run as parent.
ROOT_JOB_TYPES = frozenset({"APPLICATION", "JOB"})


@dataclass(frozen=True)
class Profile:
    """What one consumer accepts; ``None`` means no limit of its own."""

    name: str
    #: DatasetEvents are not accepted: the current state goes out as the current snapshot's run.
    run_events_only: bool = False
    #: The largest event, in bytes (the lower of this and ``events.max_bytes`` applies).
    max_bytes: int | None = None
    #: Input -> output links per event (``events.max_links`` overrides it), and per run at most (the rest is left
    #: out, with a note).
    max_links: int | None = None
    max_run_links: int | None = None
    #: The longest fully qualified name (``namespace`` + ``/`` + ``name``) of a dataset; longer ones are left out.
    max_name_chars: int | None = None
    #: The job namespace is Atlan's connection name (``consumer.connection``).
    connection_namespace: bool = False
    #: Each table version an event reports also gets a ``<ns>.<table>.checks`` run reading it, with the input form
    #: of ``dataQualityMetrics`` (the one DataHub turns into a dataset profile).
    checks_run: bool = False
    #: Every run needs a ``parent`` facet (OpenMetadata before 1.13): a table's run without one gets the table's
    #: run as parent (:func:`add_table_parent`).
    requires_parent: bool = False


PROFILES: dict[str, Profile] = {p.name: p for p in (
    Profile("generic"),
    Profile("marquez"),
    Profile("datahub", checks_run=True),
    # OpenMetadata before 1.13 ignores a run without a parent facet
    Profile("openmetadata", requires_parent=True),
    # Amazon DataZone PostLineageEvent: RunEvents only, at most 300,000 bytes each
    Profile("datazone", run_events_only=True, max_bytes=300_000),
    # Google Dataplex ProcessOpenLineageRunEvent: RunEvents only, 5 MB a message, 100 links an event, 1,000 a run,
    # fully qualified names up to 4,000 characters
    Profile("dataplex", run_events_only=True, max_bytes=5_000_000, max_links=100, max_run_links=1_000,
            max_name_chars=4_000),
    Profile("atlan", connection_namespace=True),
)}


def profile_of(settings: Settings) -> Profile:
    return PROFILES[settings.consumer.profile]


def current_state_event(table: LoadedTable, stats: SnapshotStats, settings: Settings, *,
                        capture_time: dt.datetime | None = None) -> Event:
    """The table's current state as the profile accepts it: a DatasetEvent, or under a RunEvent-only profile the
    current snapshot's own run (the very event ``--mode history`` sends for it, same runId)."""
    if profile_of(settings).run_events_only:
        return snapshot_run_event(table, stats, settings, capture_time=capture_time)
    return dataset_event(table, stats, settings, capture_time=capture_time)


def _run_id(event: Event) -> str:
    return str(part(getattr(event, "run", None), "runId") or "-")


def _kind(event: Event) -> str | None:
    kind = getattr(event, "eventType", None)
    return None if kind is None else str(getattr(kind, "value", kind))


def with_job_namespace(event: Event, ours: str, connection: str) -> Event:
    """Our jobs' namespace becomes the connection's: the event's job and the parent and root jobs it names."""
    def renamed(job: Part) -> Part:
        return replaced(job, namespace=connection) if part(job, "namespace") == ours else job

    job = getattr(event, "job", None)
    if job is None:
        return event
    changes: dict[str, object] = {"job": renamed(job)}
    run = getattr(event, "run", None)
    parent = ((run.facets if run is not None else None) or {}).get("parent")
    if parent is not None:
        root = part(parent, "root")
        new_parent = replaced(parent, job=renamed(part(parent, "job")))
        if root is not None:
            new_parent = replaced(new_parent, root=replaced(root, job=renamed(part(root, "job"))))
        changes["run"] = attr.evolve(run, facets={**run.facets, "parent": new_parent})
    return attr.evolve(event, **changes)  # type: ignore[arg-type]


def without_long_names(event: Event, limit: int) -> tuple[Event, list[str]]:
    """Datasets whose fully qualified name is longer than the consumer takes are left out (it would refuse the
    whole event)."""
    if not isinstance(event, RunEvent):
        return event, []
    notes: list[str] = []
    changes: dict[str, list[Dataset]] = {}
    for key in ("inputs", "outputs"):
        kept = []
        for dataset in getattr(event, key) or ():
            fqn = f"{dataset.namespace}/{dataset.name}"
            if len(fqn) > limit:
                notes.append(f"run {_run_id(event)}: {key[:-1]} left out: its name is {len(fqn)} characters, "
                             f"over {limit}: {fqn[:80]}...")
            else:
                kept.append(dataset)
        changes[key] = kept
    return (attr.evolve(event, **changes), notes) if notes else (event, notes)  # type: ignore[arg-type]


def table_run_id(namespace: str, name: str) -> str:
    """The runId of a table's run: from the dataset's identity alone, the same from every sender, every time."""
    return str(uuid.uuid5(TABLE_RUN_NAMESPACE, f"{namespace}\x1f{name}"))


def table_name(dataset: Dataset) -> str:
    """A dataset's table as jobs name it: its first ``TABLE`` symlink (``<ns>.<table>``), else the last segment of
    its name (a table read from its metadata file)."""
    identifiers = part((dataset.facets or {}).get("symlinks"), "identifiers") or ()
    names = [part(i, "name") for i in identifiers if part(i, "type") == "TABLE"]
    return str(names[0]) if names else str(dataset.name).rstrip("/").rsplit("/", 1)[-1]


def with_table_parent(event: Event) -> Event:
    """A run of a table (its first output, else its first input) without a ``parent`` facet gets the table's run:
    job ``<ns>.<table>``, runId :func:`table_run_id`. Every event of the run names its datasets with their symlinks
    (a START too), so all of them get the same parent. Roots (:data:`ROOT_JOB_TYPES`) and runs without a dataset
    stay as they are."""
    if not isinstance(event, RunEvent):
        return event
    facets = event.run.facets or {}
    job_type = part((event.job.facets or {}).get("jobType"), "jobType")
    datasets = [*(event.outputs or ()), *(event.inputs or ())]
    if facets.get("parent") or job_type in ROOT_JOB_TYPES or not datasets:
        return event
    dataset = datasets[0]
    ref = RunRef(table_run_id(dataset.namespace, dataset.name), event.job.namespace, table_name(dataset))
    return attr.evolve(event, run=attr.evolve(event.run, facets={**facets, "parent": parent_facet(ref)}))


def is_orphan_start(event: Event) -> bool:
    """A START that names no dataset (its terminal event carries them) and has no parent: under a profile that
    requires parents it is not sent, since there is no table to take one from and OpenMetadata would file it as a
    pipeline named after the engine's job."""
    if not isinstance(event, RunEvent) or str(event.eventType).rsplit(".", 1)[-1] != "START":
        return False
    job_type = part((event.job.facets or {}).get("jobType"), "jobType")
    return not (event.run.facets or {}).get("parent") and job_type not in ROOT_JOB_TYPES


def links(event: Event) -> int:
    """Input -> output links an event carries: every input with every output."""
    return len(getattr(event, "inputs", None) or ()) * len(getattr(event, "outputs", None) or ())


def split_links(event: RunEvent, max_links: int, max_run_links: int | None = None,
                ) -> tuple[list[RunEvent], list[str]]:
    """A run event with more links than ``max_links`` as several events of the same run, each with at most that
    many: RUNNING events, the original event type last (first, for a START). Consumers accumulate a run's datasets,
    so nothing is lost; past ``max_run_links`` in all, the rest is left out and a note says which."""
    if links(event) <= max_links:
        return [event], []
    inputs, outputs = list(event.inputs or ()), list(event.outputs or ())
    per_input = min(len(inputs), max_links)
    per_output = max(1, max_links // per_input)
    blocks = [(inputs[i:i + per_input], outputs[o:o + per_output])
              for o in range(0, len(outputs), per_output) for i in range(0, len(inputs), per_input)]
    notes: list[str] = []
    if max_run_links is not None:
        total, kept = 0, []
        for block in blocks:
            if total + len(block[0]) * len(block[1]) > max_run_links:
                break
            total += len(block[0]) * len(block[1])
            kept.append(block)
        if len(kept) < len(blocks):
            left = blocks[len(kept):]
            names = sorted({d.name for ins, outs in left for d in (*ins, *outs)})
            notes.append(f"run {_run_id(event)}: {links(event)} input->output links, at most {max_run_links} are "
                         f"sent; {links(event) - total} left out, between {len(names)} dataset(s): "
                         f"{', '.join(names[:10])}{' ...' if len(names) > 10 else ''}")
        blocks = kept
    terminal = _kind(event) in TERMINAL
    parts = []
    for n, (ins, outs) in enumerate(blocks):
        last = n == len(blocks) - 1
        kind = event.eventType if (last if terminal else n == 0) else RunState.RUNNING
        parts.append(attr.evolve(event, eventType=kind, inputs=ins, outputs=outs))
    return parts, notes


def _fields(facet: Part) -> dict[str, Any]:
    """A facet's properties by their JSON names (an object's attributes are named as its JSON keys)."""
    return dict(facet) if isinstance(facet, Mapping) else attr.asdict(facet, recurse=True)  # type: ignore[arg-type]


def checks_runs(event: Event, *, start: bool = True) -> list[RunEvent]:
    """A run of ``<ns>.<table>.checks`` for each table version the event reports with its metrics, whose input is
    the table at that version carrying ``inputFacets.dataQualityMetrics``: its START (unless ``start`` is False:
    ``events.start_events``; the input by identity alone), then its COMPLETE, both at the event's time; its runId is
    the same each time the event is sent. Never for a START, nor for a checks run itself."""
    if not isinstance(event, RunEvent) or _kind(event) == "START" \
            or str(event.job.name).endswith(f".{CHECKS_ENGINE}"):
        return []
    runs = []
    schema_url = data_quality_metrics_input_dataset.DataQualityMetricsInputDatasetFacet._get_schema()
    for dataset in event.outputs or ():
        facets = dataset.facets or {}
        metrics, version = facets.get("dataQualityMetrics"), facets.get("version")
        if not (metrics and version):
            continue
        metrics_in = {**{k: v for k, v in _fields(metrics).items() if k not in ("captureDate", "_schemaURL")},
                      "_schemaURL": schema_url}
        identity = {k: v for k, v in facets.items() if k in ("symlinks", "version")}
        run_id = generate_static_uuid(_instant(event.eventTime), f"{dataset.namespace}{dataset.name}"
                                      f"{part(version, 'datasetVersion')}checks".encode())
        job = Job(namespace=event.job.namespace, name=f"{table_name(dataset)}.{CHECKS_ENGINE}",
                  facets={"jobType": fb.job_type_facet("CHECK")})
        complete = RunEvent(eventType=RunState.COMPLETE, eventTime=event.eventTime, producer=event.producer,
                            run=Run(runId=str(run_id)), job=job, outputs=[],
                            inputs=[InputDataset(namespace=dataset.namespace, name=dataset.name, facets=identity,
                                                 inputFacets={"dataQualityMetrics": metrics_in})])
        if start:
            symlinks = {k: v for k, v in identity.items() if k == "symlinks"}
            runs.append(attr.evolve(complete, eventType=RunState.START, inputs=[
                InputDataset(namespace=dataset.namespace, name=dataset.name, facets=symlinks)]))
        runs.append(complete)
    return runs


def _instant(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
