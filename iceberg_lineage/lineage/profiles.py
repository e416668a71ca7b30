"""Consumer profiles (``consumer.profile``): what each lineage consumer accepts, declared once, and the one function
that applies it to an event after it was built (:func:`shape`, called by the delivery path just before sending).

A profile sets the event kinds the consumer accepts (DataZone and Dataplex take RunEvents only: the current state
is then sent as the current snapshot's run, :func:`current_state_event`), the job namespace (Atlan's connection),
the byte limit (trimmed by :mod:`~iceberg_lineage.lineage.budget`), the input -> output links per event and per run,
and the longest fully qualified name. ``generic`` changes nothing. Pure apart from the notes it returns.
"""
from __future__ import annotations

import datetime as dt
import json
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from openlineage.client.facet_v2 import data_quality_metrics_input_dataset
from openlineage.client.uuid import generate_static_uuid

from iceberg_lineage.config import Settings
from iceberg_lineage.lineage import facets as fb
from iceberg_lineage.lineage.budget import trim
from iceberg_lineage.lineage.checks import CHECKS_ENGINE
from iceberg_lineage.lineage.events import dataset_event, snapshot_run_event
from iceberg_lineage.lineage.runs import RunRef, parent_facet
from iceberg_lineage.lineage.serde import from_json, to_json

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
    return PROFILES[settings.consumer_profile]


@dataclass(frozen=True)
class Shaped:
    """The events one built event is sent as (several when it carries more links than one event may), and notes
    saying what was trimmed or left out (the caller logs them)."""

    events: Sequence[Any]
    notes: tuple[str, ...] = ()


def current_state_event(table: LoadedTable, stats: SnapshotStats, settings: Settings, *,
                        capture_time: dt.datetime | None = None) -> Any:
    """The table's current state as the profile accepts it: a DatasetEvent, or under a RunEvent-only profile the
    current snapshot's own run (the very event ``--mode history`` sends for it, same runId)."""
    if profile_of(settings).run_events_only:
        return snapshot_run_event(table, stats, settings, capture_time=capture_time)
    return dataset_event(table, stats, settings, capture_time=capture_time)


def shape(event: Any, settings: Settings) -> Shaped:
    """Apply the profile to one built event: the job namespace, names too long, the link limit (several RUNNING
    events, then the terminal one), and the byte budget of each event sent. The event itself when nothing applies."""
    profile = profile_of(settings)
    max_links = settings.events_max_links or profile.max_links
    max_bytes = min(settings.events_max_bytes, profile.max_bytes) if profile.max_bytes else None
    if not (max_links or max_bytes or profile.connection_namespace or profile.max_name_chars or profile.checks_run
            or profile.requires_parent):
        return Shaped([event])
    original = to_json(event)
    doc = json.loads(original)
    notes: list[str] = []
    if profile.requires_parent:
        add_table_parent(doc)
        if doc.get("eventType") == "START" and not _parented(doc):
            # a START naming no dataset (its terminal event carries them): no table to take a parent from, and
            # OpenMetadata would name a pipeline after the engine's job
            return Shaped([])
    if profile.connection_namespace:
        _rename_job_namespace(doc, settings.job_namespace, str(settings.consumer_connection))
    if profile.max_name_chars:
        notes += _drop_long_names(doc, profile.max_name_chars)
    parts = [doc, *(checks_runs(doc, start=settings.events_start_events) if profile.checks_run else ())]
    if max_links and "run" in doc:
        split = [split_links(part, max_links, profile.max_run_links) for part in parts]
        parts = [p for part, _ in split for p in part]
        notes += [note for _, left_out in split for note in left_out]
    if max_bytes:
        parts = [_fitted(part, max_bytes, notes) for part in parts]
    texts = [json.dumps(part, sort_keys=True) for part in parts]
    if texts == [original]:
        return Shaped([event], tuple(notes))
    return Shaped([from_json(text) for text in texts], tuple(notes))


def _fitted(doc: dict[str, Any], max_bytes: int, notes: list[str]) -> dict[str, Any]:
    trimmed = trim(doc, max_bytes)
    if trimmed.steps:
        notes.append(f"event of run {_run_id(doc)} over {max_bytes} bytes: trimmed ({', '.join(trimmed.steps)}), "
                     f"now {trimmed.size} bytes")
    return trimmed.doc


def _run_id(doc: dict[str, Any]) -> str:
    return str((doc.get("run") or {}).get("runId") or "-")


def _rename_job_namespace(doc: dict[str, Any], ours: str, connection: str) -> None:
    """Our jobs' namespace becomes the connection's: the event's job and the parent and root jobs it names."""
    jobs = [doc.get("job")]
    parent = ((doc.get("run") or {}).get("facets") or {}).get("parent") or {}
    jobs += [parent.get("job"), (parent.get("root") or {}).get("job")]
    for job in jobs:
        if isinstance(job, dict) and job.get("namespace") == ours:
            job["namespace"] = connection


def _drop_long_names(doc: dict[str, Any], limit: int) -> list[str]:
    """Datasets whose fully qualified name is longer than the consumer takes are left out (it would refuse the
    whole event)."""
    notes = []
    for key in ("inputs", "outputs"):
        kept = []
        for dataset in doc.get(key) or ():
            fqn = f"{dataset.get('namespace')}/{dataset.get('name')}"
            if len(fqn) > limit:
                notes.append(f"run {_run_id(doc)}: {key[:-1]} left out: its name is {len(fqn)} characters, "
                             f"over {limit}: {fqn[:80]}...")
            else:
                kept.append(dataset)
        if key in doc:
            doc[key] = kept
    return notes


def table_run_id(namespace: str, name: str) -> str:
    """The runId of a table's run: from the dataset's identity alone, the same from every sender, every time."""
    return str(uuid.uuid5(TABLE_RUN_NAMESPACE, f"{namespace}\x1f{name}"))


def table_name(dataset: dict[str, Any]) -> str:
    """A dataset's table as jobs name it: its first ``TABLE`` symlink (``<ns>.<table>``), else the last segment of
    its name (a table read from its metadata file)."""
    names = [i["name"] for i in (dataset.get("facets") or {}).get("symlinks", {}).get("identifiers") or ()
             if i["type"] == "TABLE"]
    return names[0] if names else str(dataset["name"]).rstrip("/").rsplit("/", 1)[-1]


def add_table_parent(doc: dict[str, Any]) -> None:
    """A run of a table (its first output, else its first input) without a ``parent`` facet gets the table's run:
    job ``<ns>.<table>``, runId :func:`table_run_id`. Every event of the run names its datasets with their symlinks
    (a START too), so all of them get the same parent. Roots (:data:`ROOT_JOB_TYPES`) and runs without a dataset
    stay as they are."""
    run, job = doc.get("run"), doc.get("job") or {}
    job_type = ((job.get("facets") or {}).get("jobType") or {}).get("jobType")
    datasets = [*(doc.get("outputs") or ()), *(doc.get("inputs") or ())]
    if not isinstance(run, dict) or (run.get("facets") or {}).get("parent") or job_type in ROOT_JOB_TYPES \
            or not datasets:
        return
    dataset = datasets[0]
    ref = RunRef(table_run_id(dataset["namespace"], dataset["name"]), job["namespace"], table_name(dataset))
    run["facets"] = {**(run.get("facets") or {}), "parent": json.loads(to_json(parent_facet(ref)))}


def _parented(doc: dict[str, Any]) -> bool:
    """The run has a parent facet, or is a root (:data:`ROOT_JOB_TYPES`) that needs none."""
    job_type = (((doc.get("job") or {}).get("facets") or {}).get("jobType") or {}).get("jobType")
    return bool(((doc.get("run") or {}).get("facets") or {}).get("parent")) or job_type in ROOT_JOB_TYPES


def links(doc: dict[str, Any]) -> int:
    """Input -> output links an event carries: every input with every output."""
    return len(doc.get("inputs") or ()) * len(doc.get("outputs") or ())


def split_links(doc: dict[str, Any], max_links: int, max_run_links: int | None = None,
                ) -> tuple[list[dict[str, Any]], list[str]]:
    """A run event with more links than ``max_links`` as several events of the same run, each with at most that
    many: RUNNING events, the original event type last (first, for a START). Consumers accumulate a run's datasets,
    so nothing is lost; past ``max_run_links`` in all, the rest is left out and a note says which."""
    if links(doc) <= max_links:
        return [doc], []
    inputs, outputs = list(doc["inputs"]), list(doc["outputs"])
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
            names = sorted({d["name"] for ins, outs in left for d in (*ins, *outs)})
            notes.append(f"run {_run_id(doc)}: {links(doc)} input->output links, at most {max_run_links} are "
                         f"sent; {links(doc) - total} left out, between {len(names)} dataset(s): "
                         f"{', '.join(names[:10])}{' ...' if len(names) > 10 else ''}")
        blocks = kept
    event_type = doc.get("eventType")
    parts = []
    for n, (ins, outs) in enumerate(blocks):
        last = n == len(blocks) - 1
        kind = event_type if (last if event_type in TERMINAL else n == 0) else "RUNNING"
        parts.append({**doc, "eventType": kind, "inputs": ins, "outputs": outs})
    return parts, notes



def checks_runs(doc: dict[str, Any], *, start: bool = True) -> list[dict[str, Any]]:
    """A run of ``<ns>.<table>.checks`` for each table version the event reports with its metrics, whose input is
    the table at that version carrying ``inputFacets.dataQualityMetrics``: its START (unless ``start`` is False:
    ``events.start_events``; the input by identity alone), then its COMPLETE, both at the event's time; its runId is
    the same each time the event is sent. Never for a START, nor for a checks run itself."""
    if doc.get("eventType") == "START" or str(doc.get("job", {}).get("name", "")).endswith(f".{CHECKS_ENGINE}"):
        return []
    runs = []
    for dataset in doc.get("outputs") or ():
        facets = dataset.get("facets") or {}
        metrics, version = facets.get("dataQualityMetrics"), facets.get("version")
        if not (metrics and version):
            continue
        table = table_name(dataset)
        schema_url = data_quality_metrics_input_dataset.DataQualityMetricsInputDatasetFacet._get_schema()
        metrics_in = {**{k: v for k, v in metrics.items() if k not in ("captureDate", "_schemaURL")},
                      "_schemaURL": schema_url}
        identity = {k: v for k, v in facets.items() if k in ("symlinks", "version")}
        run_id = generate_static_uuid(_instant(doc["eventTime"]),
                                      f"{dataset['namespace']}{dataset['name']}{version['datasetVersion']}checks".encode())
        job_type = json.loads(to_json(fb.job_type_facet("CHECK")))
        complete = {**{k: v for k, v in doc.items() if k in ("eventTime", "producer", "schemaURL")},
                    "eventType": "COMPLETE", "run": {"runId": str(run_id)},
                    "job": {"namespace": doc["job"]["namespace"], "name": f"{table}.{CHECKS_ENGINE}",
                            "facets": {"jobType": job_type}},
                    "inputs": [{"namespace": dataset["namespace"], "name": dataset["name"], "facets": identity,
                                "inputFacets": {"dataQualityMetrics": metrics_in}}],
                    "outputs": []}
        if start:
            symlinks = {k: v for k, v in identity.items() if k == "symlinks"}
            runs.append({**complete, "eventType": "START",
                         "inputs": [{"namespace": dataset["namespace"], "name": dataset["name"], "facets": symlinks}]})
        runs.append(complete)
    return runs


def _instant(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
