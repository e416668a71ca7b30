"""The proxy's pure builders: application runIds and their parent facet (proxy and scanner agree), a Java scan
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
from iceberg_lineage.lineage import engine_runs as apps
from iceberg_lineage.lineage.events import lifecycle_run_id, snapshot_run_event, snapshot_run_id
from iceberg_lineage.lineage.facets import ms_to_datetime
from iceberg_lineage.lineage.serde import to_json
from iceberg_lineage.proxy.capture import Capture
from iceberg_lineage.proxy.outbox import Built, Outbox
from iceberg_lineage.proxy.routes import Route
from iceberg_lineage.proxy.interpreter import Interpreter
from iceberg_lineage.proxy.tables import LoadResult, RelayedTables, TableLoader
from iceberg_lineage.proxy.tracker import ApplicationTracker, CommitRun
from iceberg_lineage.state.proxy_runs import ApplicationStore
from iceberg_lineage.stats import snapshot_stats
from tests.proxy.reports import (
    APP_ID, SPARK, Queued, commit_report, interpreter, metadata, relayed, rest_table, scan_report,
)
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
    held = snapshot_run_event(table, snapshot_stats(table, last["snapshot-id"], depth="summary"), Settings())
    sent = doc(held)
    read = apps.TableRead("s3://warehouse/a", "a", 42)
    report = CommitReport.from_json(commit_report(last["snapshot-id"], last["sequence-number"], metadata=SPARK))
    complete = doc(apps.commit_report_event(apps.with_reads(held, [read]), report))
    assert [(i["name"], i["facets"]["version"]["datasetVersion"]) for i in complete["inputs"]] == [("a", "42")]
    facet = complete["outputs"][0]["outputFacets"]["icebergCommitReport"]
    assert facet["commitMetrics"] == {"totalDuration": 1234, "attempts": 2, "addedDataFiles": 4, "addedRecords": 4,
                                      "addedFilesSizeInBytes": 3718, "addedDVs": 1}
    assert (facet["snapshotId"], facet["sequenceNumber"], facet["metadata"]) == (
        last["snapshot-id"], last["sequence-number"], SPARK)
    assert complete["run"]["runId"] == sent["run"]["runId"]
    assert doc(held) == sent  # the held event itself is unchanged
    without = doc(apps.commit_report_event(held, None))
    assert without["outputs"][0]["outputFacets"] == sent["outputs"][0]["outputFacets"]
    late = doc(apps.late_report_event(held, report, WHEN))
    assert (late["eventType"], late["run"]["runId"], late["job"]["name"]) == ("OTHER", sent["run"]["runId"],
                                                                          sent["job"]["name"])
    assert late["outputs"][0]["outputFacets"]["icebergCommitReport"] == facet


def test_a_proxy_lifecycle_run_is_its_start_then_its_complete_each_without_a_snapshot():
    """A DROP relayed by the proxy (as CREATE, REGISTER, ALTER and RENAME): START then COMPLETE of the scanner's
    deterministic lifecycle run, neither reporting a snapshot; only the COMPLETE with
    ``events.start_events: false``."""

    md = metadata()
    for settings, kinds in ((Settings(), ["START", "COMPLETE"]), (Settings().updated({"events.start_events": False}), ["COMPLETE"])):
        interp = interpreter(settings)
        interp.tables.put(None, ("db", "b"), LoadResult("s3://lake/db/b/metadata/v2.metadata.json", md))
        items = interp.build(Capture(Route("drop", None, ("db",), "b"), 204))
        events = [doc(item.event) for item in items]
        assert [e["eventType"] for e in events] == kinds
        complete = events[-1]
        assert complete["outputs"][0]["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "DROP"
        instant = ms_to_datetime(md["last-updated-ms"])
        assert complete["run"]["runId"] == str(lifecycle_run_id(
            md["table-uuid"], "DROP", "s3://lake/db/b/metadata/v2.metadata.json", instant))
        assert items == [Built(item.event, None) for item in items]
        if len(events) == 2:
            start = events[0]
            assert (start["run"], start["job"], start["eventTime"]) == (
                complete["run"], complete["job"], complete["eventTime"])
            assert start["outputs"] == []  # the COMPLETE names the table


def test_every_event_of_a_transaction_goes_out_in_order_and_only_the_snapshots_complete_is_recorded(tmp_path):
    """A transaction whose first table gains a column (ALTER and its checks run) and whose second gains a snapshot:
    interpreter -> tracker -> outbox, one batch in the order sent; settling it records the snapshot's COMPLETE
    alone, with its delivery's status."""

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
    ledger, queued = Ledger(), Queued()
    settings = Settings().updated({"proxy.report_wait_s": 0})  # nothing waits for a commit report here
    interp = interpreter(settings, state=ledger)
    tracker = ApplicationTracker(ApplicationStore(tmp_path / "state.db"), settings, interp.tables,
                                 Outbox(queued, ledger))  # type: ignore[arg-type]
    interp.tables.put("w", ("db", "a"), LoadResult("s3://lake/db/a/metadata/v4.metadata.json", base_a))
    interp.tables.put("w", ("db", "b"), LoadResult("s3://lake/db/b/metadata/v3.metadata.json", base_b))
    request = {"table-changes": [
        {"identifier": {"namespace": ["db"], "name": "a"}, "requirements": [{"type": "assert-current-schema-id",
                                                                            "current-schema-id": 0}],
         "updates": [{"action": "add-schema", "schema": schema}, {"action": "set-current-schema", "schema-id": -1}]},
        {"identifier": {"namespace": ["db"], "name": "b"}, "requirements": [],
         "updates": [{"action": "add-snapshot", "snapshot": added},
                     {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch",
                      "snapshot-id": added["snapshot-id"]}]}]}
    items = interp.build(Capture(Route("transaction", "w"), 204, request=json.dumps(request).encode()))
    assert [type(item) for item in items] == [Built] * 5 + [CommitRun]
    tracker.send(items)
    [batch] = queued.items
    events = [doc(e) for e in batch.events()]
    assert [(e["job"]["name"], e["eventType"]) for e in events] == [
        ("db.a.catalog", "START"), ("db.a.catalog", "COMPLETE"), ("db.a.checks", "START"), ("db.a.checks", "COMPLETE"),
        ("db.b.commit", "START"), ("spark.application", "START"), ("db.b.commit", "COMPLETE")]
    results = [DeliveryResult("delivered" if e["eventType"] == "START" else "spooled") for e in events]
    batch.settled(results)
    assert [(row.snapshot_id, row.status, row.run_id) for row in ledger.rows] == [
        (added["snapshot-id"], "spooled", events[-1]["run"]["runId"])]


def test_a_commit_whose_bodies_were_left_out_is_reported_from_a_reload():
    """Past ``proxy.queue_max_bytes`` a commit reaches the lineage process without its bodies: the table is loaded
    with the proxy's own credentials, and the snapshots the metadata relayed before did not have are reported."""
    full = relayed(("db", "b")).metadata
    base = copy.deepcopy(full)
    added = base["snapshots"].pop()

    class Reload(TableLoader):
        def _load(self, identifier):
            return LoadResult("s3://warehouse/db/b/metadata/v9.metadata.json", full)

    interp = Interpreter(Settings(), RelayedTables(Reload("http://127.0.0.1:9", {}, 5.0), 10,
                                                   public_uri="http://rest.example:8181", io_properties={}),
                         None, None, depth="summary")  # type: ignore[arg-type]
    interp.tables.put("w", ("db", "b"), LoadResult(None, base))
    items = interp.build(Capture(Route("commit", "w", ("db",), "b"), 200, bodies_left_out=True))
    [start, complete] = items
    run_id = str(snapshot_run_id(full["table-uuid"], added["snapshot-id"], added["timestamp-ms"]))
    assert (start.event.eventType.value, start.event.run.runId, start.snapshot) == ("START", run_id, None)
    assert isinstance(complete, CommitRun) and complete.snapshot == (full["table-uuid"], added["snapshot-id"])
    assert complete.event.run.runId == run_id
