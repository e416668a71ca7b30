"""Scans outside a run: their own run with the table as input at the snapshot actually read (OpenLineage#1970)."""
from __future__ import annotations

from tests.support.hook import SCHEMA, inputs, rows, valid, version

from iceberg_lineage.hook import reporter as hook


def _scan_events(events):
    """The scan runs' terminal events, each after its START (same runId, the input by identity alone)."""
    runs = [e for e in events if e["job"]["name"].endswith(".scan")]
    starts, terminal = runs[::2], runs[1::2]
    assert [(s["eventType"], s["run"]["runId"]) for s in starts] == [("START", e["run"]["runId"]) for e in terminal]
    assert all(set(d["facets"]) == {"symlinks"} and not d.get("inputFacets") for s in starts for d in s["inputs"])
    return terminal


def test_time_travel_reports_the_snapshot_read(sql_catalog, sink):
    hook.observe(sql_catalog, client=sink.client)
    table = sql_catalog.create_table("db.t", SCHEMA)
    table.append(rows(1, 2, 3))
    first = table.current_snapshot().snapshot_id
    table.manage_snapshots().create_tag(first, "v1").commit()
    table.append(rows(4))
    current = table.current_snapshot().snapshot_id

    assert table.scan().to_arrow().num_rows == 4
    assert table.scan(snapshot_id=first).to_arrow().num_rows == 3
    assert table.scan().use_ref("v1").to_arrow().num_rows == 3

    latest, by_id, by_tag = _scan_events(valid(sink.events()))
    assert [version(inputs(e)[0]) for e in (latest, by_id, by_tag)] == [current, first, first]
    for event, records in ((latest, 4), (by_id, 3), (by_tag, 3)):
        assert event["eventType"] == "COMPLETE" and event["job"]["name"] == "db.t.scan"
        (dataset,) = inputs(event)
        assert dataset["inputFacets"]["inputStatistics"]["rowCount"] == records
        report = dataset["inputFacets"]["icebergScanReport"]
        assert report["snapshotId"] == version(dataset)
        assert report["projectedFieldNames"] == ["id", "v"] and report["filterDescription"] == ""
        assert dataset["facets"]["dataQualityMetrics"]["rowCount"] == records
    assert not event.get("outputs")


def test_filtered_scan_describes_the_filter(sql_catalog, sink):
    hook.observe(sql_catalog, client=sink.client)
    table = sql_catalog.create_table("db.t", SCHEMA)
    table.append(rows(1, 2, 3))
    assert table.scan(row_filter="id > 2", selected_fields=("id",)).to_arrow().num_rows == 1
    (event,) = _scan_events(valid(sink.events()))
    report = inputs(event)[0]["inputFacets"]["icebergScanReport"]
    assert report["projectedFieldNames"] == ["id"]
    assert "\"id\"" in report["filterDescription"] and "(1-digit-int)" in report["filterDescription"]  # sanitised
    assert report["scanMetrics"]["resultDataFiles"] == 1


def test_job_name_of_observe_names_every_run(sql_catalog, sink):
    hook.observe(sql_catalog, client=sink.client, job_name="nightly")
    table = sql_catalog.create_table("db.t", SCHEMA)
    table.append(rows(1))
    table.scan().to_arrow()
    assert {e["job"]["name"] for e in valid(sink.events())} == {"nightly"}
