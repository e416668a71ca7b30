"""Events of every snapshot of every fixture table written by other engines, validated against the schemas."""
from __future__ import annotations

import datetime as dt
import json

import pytest

from tests.support.fixture_tables import FIXTURE_TABLES, fixture_table
from tests.support.olschema import validate_event
from iceberg_lineage.config import Settings
from iceberg_lineage.lineage.events import (
    dataset_event, history_events, lifecycle_event, snapshot_run_event, snapshot_run_id,
)
from iceberg_lineage.lineage.serde import to_json
from iceberg_lineage.stats import snapshot_stats, table_history

SETTINGS = Settings()
CAPTURE = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def _history(name: str):
    table = fixture_table(name)
    return table, table_history(table)


def _output(event) -> dict:
    return json.loads(to_json(event))["outputs"][0]


@pytest.mark.parametrize("name", FIXTURE_TABLES)
def test_every_snapshot_event_is_valid(name):
    table, history = _history(name)
    events = history_events(table, history, SETTINGS)
    assert len(events) == len(table.metadata.snapshots)
    for stats, event in zip(history, events):
        data = json.loads(to_json(event))
        validate_event(data)
        assert data["eventType"] == "COMPLETE"
        assert data["run"]["runId"] == str(snapshot_run_id(table.metadata.identity, stats.snapshot_id, stats.timestamp_ms))
        out = data["outputs"][0]
        assert out["facets"]["version"]["datasetVersion"] == str(stats.snapshot_id)
        assert out["facets"]["icebergTableStatistics"]["snapshotId"] == stats.snapshot_id
        assert out["outputFacets"]["icebergCommitReport"]["snapshotId"] == stats.snapshot_id
        quality = out["facets"]["dataQualityMetrics"]
        assert quality.get("rowCount") == stats.records and quality.get("fileCount") == stats.data_files
        assert data["job"]["facets"]["jobType"]["integration"] == "ICEBERG"
    # commit order: event times never go backwards
    times = [e.eventTime for e in events]
    assert times == sorted(times)
    validate_event(to_json(dataset_event(table, history.snapshots[-1], SETTINGS)))
    validate_event(to_json(lifecycle_event(table, "DROP", SETTINGS)))


def test_same_history_twice_gives_identical_json_apart_from_capture_date():
    def run() -> list[str]:
        table, history = _history("duckdb_java_spark_eq_deletes")
        return [to_json(e) for e in history_events(table, history, SETTINGS)]

    first, second = run(), run()
    strip = lambda s: json.dumps(_without_capture(json.loads(s)), sort_keys=True)  # noqa: E731
    assert [strip(s) for s in first] == [strip(s) for s in second]
    table, history = _history("duckdb_java_spark_eq_deletes")
    fixed = lambda: [to_json(e) for e in history_events(table, history, SETTINGS, capture_time=CAPTURE)]  # noqa: E731
    assert fixed() == fixed()


def _without_capture(event: dict) -> dict:
    for out in event["outputs"]:
        out["facets"]["dataQualityMetrics"].pop("captureDate")
    return event


def test_known_run_ids():
    """Computed once and hard-coded: a change here breaks every consumer that already stored these runs."""
    table = fixture_table("duckdb_java_spark_eq_deletes")
    first = table.metadata.snapshots_in_commit_order()[0]
    assert str(snapshot_run_id(table.metadata.identity, first.snapshot_id, first.timestamp_ms)) == (
        "01998562-6bd6-7115-9577-fb655f80aaee"
    )
    # no table-uuid (BigQuery v1): the identity is a UUIDv5 of the location, stable across opens and machines
    bq = fixture_table("icebergpython_bigquery_v1")
    assert bq.metadata.table_uuid is None
    assert bq.metadata.identity == "29dbfb65-dacf-5849-9e97-3acad1c9f0e6"
    event = snapshot_run_event(bq, snapshot_stats(bq), SETTINGS)
    assert event.run.runId == "019220b8-016a-7cd7-82fe-6accf032d600"
    assert snapshot_run_event(fixture_table("icebergpython_bigquery_v1"), snapshot_stats(bq), SETTINGS).run.runId == (
        event.run.runId
    )


def test_lifecycle_of_fixture_snapshots():
    table, history = _history("duckdb_java_spark_eq_deletes")
    changes = [_output(e)["facets"].get("lifecycleStateChange", {}).get("lifecycleStateChange")
               for e in history_events(table, history, SETTINGS)]
    ops = [s.operation for s in history]
    assert changes[0] == "CREATE"
    assert all(c == "OVERWRITE" for c, op in zip(changes, ops) if op == "delete")
    assert all(c is None for c, op in zip(changes[1:], ops[1:]) if op == "append")
    table, history = _history("duckdb_java_v1_name_mapping")
    events = history_events(table, history, SETTINGS)
    replace = [e for s, e in zip(history, events) if s.operation == "replace"]
    assert replace and all("lifecycleStateChange" not in _output(e)["facets"] for e in replace)


def test_spark_snapshot_run_and_job_facets():
    table, history = _history("duckdb_java_spark_eq_deletes")
    data = json.loads(to_json(history_events(table, history, SETTINGS)[0]))
    assert data["job"]["name"] == "duckdb_java_spark_eq_deletes.spark"  # relative location, resolved
    assert data["job"]["namespace"] == SETTINGS.job.namespace
    assert data["run"]["facets"]["externalQuery"]["externalQueryId"] == "local-1758878991225"
    assert data["run"]["facets"]["externalQuery"]["source"] == "spark"
    assert data["run"]["facets"]["processing_engine"]["version"] == "3.5.1"
    report = data["outputs"][0]["outputFacets"]["icebergCommitReport"]
    assert report["commitMetrics"] == {
        "addedDataFiles": 1, "addedRecords": 4, "addedFilesSizeInBytes": 935, "totalRecords": 4,
        "totalFilesSizeInBytes": 935, "totalDataFiles": 1, "totalDeleteFiles": 0, "totalPositionalDeletes": 0,
        "totalEqualityDeletes": 0,
    }
    assert data["outputs"][0]["outputFacets"]["outputStatistics"] == {
        **{k: v for k, v in data["outputs"][0]["outputFacets"]["outputStatistics"].items() if k.startswith("_")},
        "rowCount": 4, "size": 935, "fileCount": 1,
    }
    # a bare metadata file: location identity, no symlink, job named after the location's last segment
    assert data["outputs"][0]["namespace"] == "file"
    assert "symlinks" not in data["outputs"][0]["facets"]
    assert data["outputs"][0]["facets"]["catalog"]["type"] == "static"


def test_summary_depth_sends_empty_column_metrics_and_no_guesses():
    table = fixture_table("impala_hive_pos_deletes_6snaps")
    stats = snapshot_stats(table, depth="summary")
    facets = _output(snapshot_run_event(table, stats, SETTINGS))["facets"]
    assert facets["dataQualityMetrics"]["columnMetrics"] == {}
    stat = facets["icebergTableStatistics"]
    assert stat["depth"] == "summary" and "columns" not in stat and "manifests" not in stat
    assert set(stat["sources"].values()) == {"summary"}


def test_statistics_facet_carries_deletes_by_kind_and_typed_bounds():
    table = fixture_table("impala_spark_v3_deletion_vectors")
    stat = _output(snapshot_run_event(table, snapshot_stats(table), SETTINGS))["facets"]["icebergTableStatistics"]
    assert stat["deleteFiles"] == {"position": 0, "equality": 0, "dv": 2, "total": 2}
    assert stat["bytes"]["delete"] == 84 and stat["liveRecords"] == 3
    assert stat["sources"]["deleteFiles.dv"] == "entries"
    eq = fixture_table("duckdb_java_spark_eq_deletes")
    stat = _output(snapshot_run_event(eq, snapshot_stats(eq), SETTINGS))["facets"]["icebergTableStatistics"]
    assert stat["columns"]["bir"]["min"] == "2025-01-01"  # a date bound in its JSON form
    quality = _output(snapshot_run_event(eq, snapshot_stats(eq), SETTINGS))["facets"]["dataQualityMetrics"]
    assert "min" not in quality["columnMetrics"]["bir"]  # numbers only in the standard facet
