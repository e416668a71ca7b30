"""The bridge's pure builders: application runIds and their parent facet (bridge and scanner agree), a Java scan
report as an input dataset, an application's events, a held COMPLETE completed by its commit report, a late report."""
from __future__ import annotations

import datetime as dt
import json
import uuid

from openlineage.client.event_v2 import RunState
from scan_reporters.reports import CommitReport, ScanReport

from iceberg_lineage.config import Settings
from iceberg_lineage.lineage import applications as apps
from iceberg_lineage.lineage.events import snapshot_run_event
from iceberg_lineage.lineage.serde import to_json
from iceberg_lineage.stats import snapshot_stats
from tests.bridge.reports import APP_ID, SPARK, commit_report, metadata, rest_table, scan_report
from tests.support.olschema import validate_event

WHEN = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.timezone.utc)


def doc(event) -> dict:
    data = json.loads(to_json(event))
    validate_event(data)
    return data


def test_the_application_run_id_is_one_uuid_from_a_summary_or_a_report():
    run_id = apps.application_run_id("spark", APP_ID)
    assert uuid.UUID(run_id).version == 5
    assert apps.Application.of({"spark.app.id": APP_ID}).run_id == run_id
    assert apps.Application.of(SPARK).run_id == run_id
    assert apps.Application.of({"flink.job-id": APP_ID}).run_id == apps.application_run_id("flink", APP_ID) != run_id
    assert apps.Application.of({"engine-name": "duckdb"}) is None and apps.Application.of(None) is None


def test_a_spark_snapshot_names_its_application_run_as_parent():
    md = metadata()
    table = rest_table(("db", "b"), md)
    sid = md["snapshots"][-1]["snapshot-id"]
    app_id = md["snapshots"][-1]["summary"]["spark.app.id"]
    event = doc(snapshot_run_event(table, snapshot_stats(table, sid, depth="summary"), Settings()))
    parent = event["run"]["facets"]["parent"]
    assert (parent["run"]["runId"], parent["job"]["namespace"], parent["job"]["name"]) == (
        apps.application_run_id("spark", app_id), "iceberg-lineage", "spark.application")
    assert parent["root"]["run"]["runId"] == parent["run"]["runId"]


def test_a_java_scan_report_is_the_input_at_the_snapshot_read():
    md = metadata()
    sid = md["snapshots"][1]["snapshot-id"]
    report = ScanReport.from_json(scan_report(sid, metadata=SPARK))
    dataset = json.loads(to_json(apps.scan_input(rest_table(), report, Settings())))
    assert dataset["facets"]["version"]["datasetVersion"] == str(sid)
    facet = dataset["inputFacets"]["icebergScanReport"]
    assert facet["snapshotId"] == sid and facet["schemaId"] == 0 and facet["projectedFieldNames"] == ["id", "v"]
    assert json.loads(facet["filterDescription"]) == {"type": "eq", "term": "id", "value": "(hash-3e5c6e7d)"}
    assert facet["scanMetrics"] == {"totalPlanningDuration": 600_000, "resultDataFiles": 5, "resultDeleteFiles": 1,
                                    "totalDataManifests": 5, "scannedDataManifests": 4, "skippedDataManifests": 1,
                                    "totalFileSizeInBytes": 1069, "skippedDataFiles": 3}
    assert facet["metadata"] == SPARK
    stats = dataset["inputFacets"]["inputStatistics"]
    assert (stats.get("rowCount"), stats["size"], stats["fileCount"]) == (None, 1069, 5)
    run = doc(apps.application_event(apps.Application.of(SPARK), RunState.RUNNING, Settings(), when=WHEN,
                                     inputs=[apps.scan_input(rest_table(), report, Settings())]))
    assert run["outputs"] == [] and [i["name"] for i in run["inputs"]] == [dataset["name"]]
    assert run["run"]["facets"]["externalQuery"]["externalQueryId"] == APP_ID
    assert run["run"]["facets"]["processing_engine"]["version"] == "3.5.9"


def test_a_report_without_application_is_a_scan_run_of_its_own():
    sid = metadata()["snapshots"][0]["snapshot-id"]
    event = doc(apps.scan_run(rest_table(), ScanReport.from_json(scan_report(sid)), Settings()))
    assert (event["eventType"], event["job"]["name"]) == ("COMPLETE", "db.a.scan")
    assert "parent" not in event["run"].get("facets", {})


def test_a_held_complete_gets_the_reads_and_the_report_and_a_late_report_is_other():
    md = metadata()
    table = rest_table(("db", "b"), md)
    last = md["snapshots"][-1]
    held = json.loads(to_json(snapshot_run_event(table, snapshot_stats(table, last["snapshot-id"], depth="summary"),
                                                 Settings())))
    read = apps.TableRead("s3://warehouse/a", "a", 42)
    report = CommitReport.from_json(commit_report(last["snapshot-id"], last["sequence-number"], metadata=SPARK))
    complete = doc(apps.commit_report_event(apps.with_reads(held, [read]), report))
    assert [(i["name"], i["facets"]["version"]["datasetVersion"]) for i in complete["inputs"]] == [("a", "42")]
    facet = complete["outputs"][0]["outputFacets"]["icebergCommitReport"]
    assert facet["commitMetrics"] == {"totalDuration": 1234, "attempts": 2, "addedDataFiles": 4, "addedRecords": 4,
                                      "addedFilesSizeInBytes": 3718, "addedDVs": 1}
    assert (facet["snapshotId"], facet["sequenceNumber"], facet["metadata"]) == (
        last["snapshot-id"], last["sequence-number"], SPARK)
    assert complete["run"]["runId"] == held["run"]["runId"]
    without = doc(apps.commit_report_event(held, None))
    assert without["outputs"][0]["outputFacets"] == held["outputs"][0]["outputFacets"]
    late = doc(apps.late_report_event(held, report, WHEN))
    assert (late["eventType"], late["run"]["runId"], late["job"]["name"]) == ("OTHER", held["run"]["runId"],
                                                                          held["job"]["name"])
    assert late["outputs"][0]["outputFacets"]["icebergCommitReport"] == facet
