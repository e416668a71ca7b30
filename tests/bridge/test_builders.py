"""The bridge's pure builders: application runIds and their parent facet (bridge and scanner agree), a Java scan
report as an input dataset, an application's events, a held COMPLETE completed by its commit report, a late report."""
from __future__ import annotations

import copy
import datetime as dt
import json
import uuid

from openlineage.client.event_v2 import RunState
from scan_reporters.reports import CommitReport, ScanReport

from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.delivery import DeliveryResult
from iceberg_lineage.lineage import applications as apps
from iceberg_lineage.lineage.events import lifecycle_run_id, snapshot_run_event
from iceberg_lineage.lineage.facets import ms_to_datetime
from iceberg_lineage.proxy.capture import Capture
from iceberg_lineage.proxy.report import Exchange, Reporter
from iceberg_lineage.proxy.routes import Route
from iceberg_lineage.proxy.tables import Known
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
    start, event = (doc(e) for e in apps.scan_run(rest_table(), ScanReport.from_json(scan_report(sid)), Settings()))
    assert (start["eventType"], event["eventType"], event["job"]["name"]) == ("START", "COMPLETE", "db.a.scan")
    assert start["run"]["runId"] == event["run"]["runId"] and not start["inputs"][0].get("inputFacets")
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


def test_a_bridge_lifecycle_run_is_its_start_then_its_complete_each_recorded_without_a_snapshot():
    """A DROP relayed by the bridge (``Reporter._lifecycle``, as CREATE, REGISTER, ALTER and RENAME): START then
    COMPLETE of the scanner's deterministic lifecycle run, each in ``Exchange.built`` with no snapshot; only the
    COMPLETE with ``events.start_events: false``."""

    md = metadata()
    for settings, kinds in ((Settings(), ["START", "COMPLETE"]), (Settings(events_start_events=False), ["COMPLETE"])):
        reporter = Reporter(None, settings, upstream="http://127.0.0.1:9", public_uri="http://rest.example:8181",  # type: ignore[arg-type]
                            depth="summary", io_properties={}, state=None)
        reporter.cache.put(reporter.key(None, ("db", "b")), Known("s3://lake/db/b/metadata/v2.metadata.json", md))
        exchange = Exchange(reporter, Capture(Route("drop", None, ("db",), "b"), 204))
        events = [doc(e) for e in reporter.events_of(exchange)]
        assert [e["eventType"] for e in events] == kinds
        complete = events[-1]
        assert complete["outputs"][0]["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "DROP"
        instant = ms_to_datetime(md["last-updated-ms"])
        assert complete["run"]["runId"] == str(lifecycle_run_id(
            md["table-uuid"], "DROP", "s3://lake/db/b/metadata/v2.metadata.json", instant))
        assert exchange.built == [(None, md["table-uuid"], complete["run"]["runId"])] * len(kinds)
        if len(events) == 2:
            start = events[0]
            assert (start["run"], start["job"], start["eventTime"]) == (
                complete["run"], complete["job"], complete["eventTime"])
            assert start["outputs"] == []  # the COMPLETE names the table


def test_every_event_of_a_transaction_is_recorded_in_built_in_order():
    """``Exchange.settled`` pairs ``built`` with the delivery results by position: a transaction whose first table
    gains a column (ALTER and its checks run) and whose second gains a snapshot records one entry per event, in the
    order sent, so the snapshot's COMPLETE is the one recorded as delivered."""

    class Ledger:
        rows: list = []

        def record(self, rows):
            self.rows.extend(rows)

    base_a, full = metadata(), metadata()
    base_a["table-uuid"] = str(uuid.uuid5(uuid.NAMESPACE_URL, "db.a"))
    base_b = copy.deepcopy(full)
    added = base_b["snapshots"].pop()
    base_b["current-snapshot-id"] = base_b["snapshots"][-1]["snapshot-id"]
    base_b["refs"] = {"main": {"snapshot-id": base_b["current-snapshot-id"], "type": "branch"}}
    schema = copy.deepcopy(base_a["schemas"][-1])
    schema["schema-id"] = 1
    schema["fields"].append({"id": 4, "name": "note", "required": False, "type": "string"})
    ledger = Ledger()
    reporter = Reporter(None, Settings(), upstream="http://127.0.0.1:9", public_uri="http://rest.example:8181",  # type: ignore[arg-type]
                        depth="summary", io_properties={}, state=ledger)  # type: ignore[arg-type]
    reporter.cache.put(reporter.key("w", ("db", "a")), Known("s3://lake/db/a/metadata/v4.metadata.json", base_a))
    reporter.cache.put(reporter.key("w", ("db", "b")), Known("s3://lake/db/b/metadata/v3.metadata.json", base_b))
    request = {"table-changes": [
        {"identifier": {"namespace": ["db"], "name": "a"}, "requirements": [{"type": "assert-current-schema-id",
                                                                            "current-schema-id": 0}],
         "updates": [{"action": "add-schema", "schema": schema}, {"action": "set-current-schema", "schema-id": -1}]},
        {"identifier": {"namespace": ["db"], "name": "b"}, "requirements": [],
         "updates": [{"action": "add-snapshot", "snapshot": added},
                     {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch",
                      "snapshot-id": added["snapshot-id"]}]}]}
    exchange = Exchange(reporter, Capture(Route("transaction", "w"), 204, request=json.dumps(request).encode()))
    events = [doc(e) for e in exchange.events()]
    assert [(e["job"]["name"], e["eventType"]) for e in events] == [
        ("db.a.catalog", "START"), ("db.a.catalog", "COMPLETE"), ("db.a.checks", "START"), ("db.a.checks", "COMPLETE"),
        ("db.b.commit", "START"), ("db.b.commit", "COMPLETE")]
    assert [run_id for _, _, run_id in exchange.built] == [e["run"]["runId"] for e in events]
    results = [DeliveryResult("delivered" if e["eventType"] == "START" else "spooled") for e in events]
    exchange.settled(results)
    assert [(row.snapshot_id, row.status) for row in ledger.rows] == [(added["snapshot-id"], "spooled")]
