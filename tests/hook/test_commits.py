"""Commits outside a run: one run per snapshot (START, COMPLETE), tagged in metadata.json with its ownership."""
from __future__ import annotations

import pyarrow as pa
import pytest
from tests.support.hook import (
    SCHEMA, commit_report, lifecycle, outputs, rows, table_of, tags_in_metadata, valid, version,
)

from iceberg_lineage.hook import reporter as hook
from iceberg_lineage.lineage.events import snapshot_run_id
from iceberg_lineage.lineage.facets import iso_time, ms_to_datetime


@pytest.fixture
def observed(sql_catalog, sink):
    hook.observe(sql_catalog, client=sink.client)
    return sql_catalog


def snapshot_events(events):
    """The events of commits that added a snapshot (they carry a commit report)."""
    return [e for e in events if any("icebergCommitReport" in (d.get("outputFacets") or {}) for d in outputs(e))]


def test_append_is_one_complete_run_tagged_in_metadata(observed, sink):
    table = observed.create_table("db.t", SCHEMA)
    table.append(rows(1, 2, 3))

    events = valid(sink.events())
    create_start, create, start, append = events  # the CREATE is a run of its own too: START, COMPLETE
    assert create["eventType"] == "COMPLETE" and lifecycle(outputs(create)[0]) == "CREATE"
    assert (create_start["eventType"], create_start["run"]) == ("START", create["run"])
    assert append["eventType"] == "COMPLETE"
    snapshot = table.current_snapshot()
    # the run the scanner would build: deterministic runId; START at the snapshot's time (the commit's start), the
    # COMPLETE at the commit's end: the measured duration later
    run_id = str(snapshot_run_id(str(table.metadata.table_uuid), snapshot.snapshot_id, snapshot.timestamp_ms))
    assert (start["eventType"], start["run"]["runId"], append["run"]["runId"]) == ("START", run_id, run_id)
    assert start["eventTime"] == iso_time(ms_to_datetime(snapshot.timestamp_ms))
    assert start["job"] == append["job"] and outputs(start) == []
    assert append["job"] == {"namespace": "iceberg-lineage", "name": "db.t.pyiceberg",
                             "facets": append["job"]["facets"]}
    out = outputs(append)[0]
    assert version(out) == snapshot.snapshot_id
    assert table_of(out) == "db.t"
    assert tags_in_metadata(table) == {snapshot.snapshot_id: append["run"]["runId"]}
    report = commit_report(out)
    assert report["snapshotId"] == snapshot.snapshot_id and report["operation"] == "append"
    metrics = report["commitMetrics"]
    assert metrics["attempts"] == 1 and metrics["totalDuration"] >= 0
    ended = snapshot.timestamp_ms + metrics["totalDuration"]  # milliseconds
    assert append["eventTime"] == iso_time(ms_to_datetime(ended))
    assert metrics["addedRecords"] == 3 and metrics["totalRecords"] == 3
    assert out["outputFacets"]["outputStatistics"]["rowCount"] == 3
    quality = out["facets"]["dataQualityMetrics"]
    assert quality["rowCount"] == 3 and quality["fileCount"] == 1
    assert [f["name"] for f in out["facets"]["schema"]["fields"]] == ["id", "v"]
    assert out["facets"]["catalog"]["name"] == "test" and out["facets"]["storage"]["storageLayer"] == "iceberg"
    assert out["facets"]["icebergTableStatistics"]["depth"] == "summary"


def test_overwrite_delete_upsert_give_one_run_per_snapshot(observed, sink):
    table = observed.create_table("db.t", SCHEMA)
    table.append(rows(1, 2, 3))
    table.overwrite(rows(9), overwrite_filter="id == 1")  # delete + append: two snapshots
    table.delete("id == 2")
    before = {s.snapshot_id for s in table.metadata.snapshots}

    events = valid(sink.events())
    commits = snapshot_events(events)
    by_snapshot = {version(outputs(e)[0]): e for e in commits}
    assert set(by_snapshot) == before and len(commits) == len(before) == 4
    tags = tags_in_metadata(table)
    assert {sid: e["run"]["runId"] for sid, e in by_snapshot.items()} == tags
    assert len(set(tags.values())) == 4
    assert {e["job"]["name"] for e in commits} == {"db.t.pyiceberg"}
    overwritten = [s.snapshot_id for s in table.metadata.snapshots if s.summary.operation.value == "overwrite"]
    assert overwritten and all(lifecycle(outputs(by_snapshot[sid])[0]) == "OVERWRITE" for sid in overwritten)
    assert sorted(table.scan().to_arrow()["id"].to_pylist()) == [3, 9]


def test_upsert(sql_catalog, sink):
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    hook.observe(sql_catalog, client=sink.client)
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "v", StringType()),
                    identifier_field_ids=[1])
    table = sql_catalog.create_table("db.u", schema)
    table.append(rows(1, 2))
    table.upsert(pa.table({"id": [2, 3], "v": ["changed", "new"]}, schema=SCHEMA))
    versions = [version(outputs(e)[0]) for e in snapshot_events(valid(sink.events()))]
    assert sorted(versions) == sorted(s.snapshot_id for s in table.metadata.snapshots)
    assert len(table.metadata.snapshots) >= 3  # append, then the upsert's update and insert
    assert sorted(table.scan().to_arrow()["v"].to_pylist()) == ["changed", "new", "v1"]
    assert sorted(table.scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]


def test_tagging_can_be_turned_off(sql_catalog, sink, monkeypatch):
    monkeypatch.setenv("ICEBERG_LINEAGE__HOOK__TAG_SNAPSHOTS", "false")
    hook.observe(sql_catalog, client=sink.client)
    table = sql_catalog.create_table("db.t", SCHEMA)
    table.append(rows(1))
    assert tags_in_metadata(table) == {table.current_snapshot().snapshot_id: None}
    (commit,) = snapshot_events(valid(sink.events()))
    assert version(outputs(commit)[0]) == table.current_snapshot().snapshot_id


def test_commit_to_a_branch_names_that_branch_only(observed, sink):
    table = observed.create_table("db.t", SCHEMA)
    for i in range(3):
        table.append(rows(i))
    table.manage_snapshots().create_branch(table.current_snapshot().snapshot_id, "audit").commit()
    table.append(rows(9), branch="audit")

    last = snapshot_events(valid(sink.events()))[-1]
    statistics = outputs(last)[0]["facets"]["icebergTableStatistics"]
    assert statistics["snapshotId"] == table.metadata.refs["audit"].snapshot_id
    assert statistics["refs"] == ["audit"] and statistics["staged"] is False
    assert statistics["records"] == 4


def test_tables_loaded_before_observe_are_covered(sql_catalog, sink):
    loaded_before = sql_catalog.create_table("db.t", SCHEMA)
    assert hook.observe(sql_catalog, client=sink.client) is sql_catalog
    loaded_before.append(rows(1))
    (commit,) = snapshot_events(valid(sink.events()))
    assert version(outputs(commit)[0]) == loaded_before.current_snapshot().snapshot_id
