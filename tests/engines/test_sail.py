"""Equality deletes, then an append, written by Sail (Rust, DataFusion) and read back by Iceberg Java: every
snapshot's figures equal what Spark's metadata tables say of it, and Iceberg Java applies Sail's equality deletes
to the same rows Sail does.

Where the two sides differ by definition (see docs/contributing.md, real engines): ``live_records`` is not given
by the package once equality deletes exist (it would need the data read), and Sail's summaries carry no file
sizes, so the package's byte figures come from the manifests (as Java's metadata tables do)."""
from __future__ import annotations

import json

from tests.engines.test_exactness import compare
from tests.support.iceberg_java import run_cli
from tests.support.olschema import validate_event
from tests.support.scan import snapshot_ids


def test_sail_equality_deletes_then_append(sail_equality_deletes):
    table = sail_equality_deletes.live
    ours = list(compare(table).values())
    java = [table.java[s["snapshot_id"]] for s in table.snapshots]
    assert [s["operation"] for s in table.snapshots] == ["append", "append", "delete", "delete", "append"]
    # every column is a key: the first DELETE writes the 10 rows with id % 3 = 0, the second the 5 with a null name
    assert [j["equality_delete_files"] for j in java] == [0, 0, 1, 2, 2]
    assert [j["equality_deletes"] for j in java] == [0, 0, 10, 15, 15]
    assert all(j["position_delete_files"] == 0 and j["dv_files"] == 0 for j in java)
    assert [j["delete_manifests"] for j in java] == [0, 0, 1, 2, 2]
    assert [j["data_files"] for j in java] == [1, 2, 2, 2, 3] and java[-1]["records"] == 35
    # Iceberg Java deletes the same rows Sail does (null equals null in an equality delete)
    assert [j["live_records"] for j in java] == sail_equality_deletes.sail_counts == [20, 30, 20, 15, 20]
    assert [s["live_records"] for s in ours] == [20, 30, None, None, None]
    assert [s["equality_deletes"] for s in ours] == [0, 0, 10, 15, 15]
    assert "spark.app.id" not in table.snapshots[0]["summary"]  # Sail names no engine in its summaries


def test_sail_snapshots_as_events(sail_equality_deletes):
    """``events --all-snapshots`` of Sail's table: one valid run per snapshot; Sail's summaries name no engine, so
    the job is ``<table>.commit`` and no run carries ``externalQuery`` or ``processing_engine``; the equality
    deletes are in the statistics facet."""
    table = sail_equality_deletes.live
    proc = run_cli("events", "--metadata", table.metadata, "--all-snapshots")
    printed = [json.loads(line) for line in proc.stdout.splitlines()]
    for event in printed:
        validate_event(event)
    events = [e for e in printed if e["eventType"] != "START"]  # each run's COMPLETE, after its START
    assert snapshot_ids(events) == [s["snapshot_id"] for s in table.snapshots]
    assert {e["job"]["name"] for e in events} == {"sail_equality_deletes.commit"}
    assert all(not {"externalQuery", "processing_engine"} & set(e["run"]["facets"]) for e in events)
    statistics = [e["outputs"][0]["facets"]["icebergTableStatistics"] for e in events]
    assert [s["deleteFiles"]["equality"] for s in statistics] == [0, 0, 1, 2, 2]
    assert [s["deletedRows"]["equality"] for s in statistics] == [0, 0, 10, 15, 15]
