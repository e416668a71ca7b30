"""The checks run: job ``<ns>.<table>.checks``, the table (at the snapshot checked) as its input, carrying
``inputFacets.dataQualityAssertions`` (1-1-0) and ``inputFacets.dataQualityMetrics``.

The run is COMPLETE even when assertions fail: a failing assertion is data, not a failed job. The same run carries a
schema-change alert of the hook or the scanner (:func:`schema_alert_run`). Pure builders.
"""
from __future__ import annotations

import datetime as dt
from typing import Sequence

from openlineage.client.event_v2 import InputDataset, Job, Run, RunEvent, RunState
from openlineage.client.facet_v2 import data_quality_assertions_dataset as dqa
from openlineage.client.uuid import generate_new_uuid, generate_static_uuid

from iceberg_lineage.config import Settings
from iceberg_lineage.lineage import facets as fb
from iceberg_lineage.lineage.events import all_with_start, job_name
from iceberg_lineage.lineage.naming import dataset_identity
from iceberg_lineage.lineage.rules import dotted_name, rules_for
from iceberg_lineage.lineage.captures import COMMIT_ENGINE, Commit
from iceberg_lineage.quality.alerts import Alert, schema_alerts
from iceberg_lineage.quality.assertions import Assertion
from iceberg_lineage.quality.evaluate import schema_assertions
from iceberg_lineage.read.metadata import Schema
from iceberg_lineage.read.source import LoadedTable
from iceberg_lineage.stats import snapshot_stats
from iceberg_lineage.stats.model import SnapshotStats

#: Job-name suffix of checks runs: ``<ns>.<table>.checks``.
CHECKS_ENGINE = "checks"
ASSERTIONS_KEY = "dataQualityAssertions"


def checks_job_name(table: LoadedTable) -> str:
    return job_name(table, CHECKS_ENGINE)


def assertions_facet(assertions: Sequence[Assertion]) -> dqa.DataQualityAssertionsDatasetFacet:
    return dqa.DataQualityAssertionsDatasetFacet(
        assertions=[dqa.Assertion(**a.as_json()) for a in assertions], producer=fb.PRODUCER)


def checks_run_event(
    table: LoadedTable,
    stats: SnapshotStats | None,
    assertions: Sequence[Assertion],
    settings: Settings,
    *,
    run_id: str | None = None,
    event_time: dt.datetime | None = None,
) -> RunEvent:
    """One COMPLETE run of ``<ns>.<table>.checks`` whose input is the table at ``stats``' snapshot (``None``: a
    table without snapshots, then without version or metrics)."""
    identity = dataset_identity(table, settings)
    facets = {"symlinks": fb.symlinks_facet(identity.symlinks)}
    input_facets: dict = {ASSERTIONS_KEY: assertions_facet(assertions)}
    if stats is not None:
        facets["version"] = fb.version_facet(stats.snapshot_id)
        input_facets["dataQualityMetrics"] = fb.data_quality_input_facet(stats)
    return RunEvent(
        eventType=RunState.COMPLETE,
        eventTime=fb.iso_time(event_time or dt.datetime.now(dt.timezone.utc)),
        run=Run(runId=run_id or str(generate_new_uuid())),
        job=Job(namespace=settings.job.namespace, name=checks_job_name(table),
                facets={"jobType": fb.job_type_facet("CHECK")}),
        inputs=[InputDataset(namespace=identity.namespace, name=identity.name,
                             facets={k: v for k, v in facets.items() if v is not None}, inputFacets=input_facets)],
        producer=fb.PRODUCER,
    )


def schema_alert_run(
    table: LoadedTable,
    old: Schema | None,
    new: Schema,
    settings: Settings,
    *,
    snapshot_id: int | None = None,
    engine: str | None = None,
) -> tuple[tuple[Alert, ...], RunEvent | None]:
    """The table's ``schema`` rule on a schema change seen at ``snapshot_id`` (``None``: a metadata-only commit,
    named by its metadata file): its alerts and the checks run carrying their assertions (none when nothing the rule
    reports changed). The run id is deterministic, so a redelivered or re-observed alert repeats one run."""
    rule = rules_for(table, settings).get("schema")
    if rule is None or old is None:
        return (), None
    md = table.metadata
    assertions = [a for a in schema_assertions(rule, old, new, md.format_version) if not a.success]
    if not assertions:
        return (), None
    snapshot = md.snapshot_by_id(snapshot_id) if snapshot_id is not None else None
    summary = snapshot.summary if snapshot is not None else {}
    query = fb.external_query_facet(summary)
    version = None if snapshot is not None else (md.metadata_location or "").rsplit("/", 1)[-1] or None
    versions = [s for sid, s in sorted(md.schemas.items()) if old.schema_id < sid <= new.schema_id] or [new]
    alerts = schema_alerts(assertions, table=dotted_name(table), table_uuid=md.identity, schemas=versions,
                           snapshot_id=snapshot_id, metadata_version=version,
                           engine=summary.get("engine-name") or engine, app=query.externalQueryId if query else None)
    when_ms = snapshot.timestamp_ms if snapshot is not None else (md.last_updated_ms or 0)
    when = fb.ms_to_datetime(when_ms)
    stats = snapshot_stats(table, snapshot_id, depth="summary") if snapshot_id is not None else None
    run_id = generate_static_uuid(when, "".join(a.id for a in alerts).encode())
    return alerts, checks_run_event(table, stats, assertions, settings, run_id=str(run_id), event_time=when)


def snapshot_alert_run(
    table: LoadedTable, snapshot_id: int, settings: Settings, *, previous: Schema | None = None,
    engine: str | None = None,
) -> tuple[tuple[Alert, ...], RunEvent | None]:
    """:func:`schema_alert_run` for a snapshot whose schema differs from ``previous`` (default: its parent
    snapshot's); nothing, cheaply, when the schema ids are equal or unknown."""
    md = table.metadata
    snapshot = md.snapshot_by_id(snapshot_id)
    if snapshot is None or snapshot.schema_id is None:
        return (), None
    if previous is None:
        parent = md.snapshot_by_id(snapshot.parent_id) if snapshot.parent_id is not None else None
        previous = md.schemas.get(parent.schema_id) if parent is not None and parent.schema_id is not None else None
    new = md.schemas.get(snapshot.schema_id)
    if previous is None or new is None or previous.schema_id == new.schema_id:
        return (), None
    return schema_alert_run(table, previous, new, settings, snapshot_id=snapshot_id, engine=engine)


def table_alert_runs(
    table: LoadedTable, before: Schema | None, snapshot_ids: Sequence[int], settings: Settings, *,
    engine: str | None = None,
) -> tuple[tuple[Alert, ...], list[RunEvent]]:
    """The schema alerts of one commit, against the schema the table had before it (``before``): a metadata-only
    commit by its metadata file, each new snapshot by its id, and the events of their checks runs (each START, then
    COMPLETE: :func:`~iceberg_lineage.lineage.events.with_start`). The hook and the REST bridge both ask this."""
    md = table.metadata
    found: list[tuple[tuple[Alert, ...], RunEvent | None]] = []
    if not snapshot_ids:
        found.append(schema_alert_run(table, before, md.current_schema, settings, engine=engine))
    for snapshot_id in snapshot_ids:
        found.append(snapshot_alert_run(table, snapshot_id, settings, previous=before, engine=engine))
        snapshot = md.snapshot_by_id(snapshot_id)
        before = md.schema_for(snapshot) if snapshot is not None else before
    return (tuple(a for alerts, _ in found for a in alerts),
            all_with_start((e for _, e in found if e is not None), settings))


def commit_alert_runs(commit: Commit, settings: Settings) -> tuple[tuple[Alert, ...], list[RunEvent]]:
    """:func:`table_alert_runs` of a commit the hook saw (a create has nothing to compare with)."""
    if commit.base is None:
        return (), []
    table = commit.table.loaded()
    before = table.metadata.schemas.get(commit.base.current_schema_id)
    return table_alert_runs(table, before, commit.snapshot_ids, settings, engine=COMMIT_ENGINE)


def schema_changed(commit: Commit) -> bool:
    """Whether a commit may change the schema (cheap, on the user's thread): its current schema or one of its
    snapshots' is not the one the table had before."""
    base, md = commit.base, commit.table.metadata
    if base is None:
        return False
    ids = {md.current_schema_id, *(s.schema_id for sid in commit.snapshot_ids
                                   if (s := md.snapshot_by_id(sid)) is not None and s.schema_id is not None)}
    return ids != {base.current_schema_id}
