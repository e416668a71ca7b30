"""The application tracker and its state, with a test clock and the events it queues: START once, RUNNING per scan,
COMPLETE after the idle timeout listing the reads, OTHER for activity after it (never a second START); a commit's
COMPLETE held for its report, with the application's reads and parent; a late report as OTHER; a restart (a new
owner, the old one dead) completing what was left open; one owner per row across processes."""
from __future__ import annotations

import json
import uuid

import pytest
from openlineage.client.event_v2 import RunEvent

from scan_reporters.sanitize import hash_token

from iceberg_lineage.config import load_settings
from iceberg_lineage.delivery.delivery import DeliveryResult
from iceberg_lineage.lineage import engine_runs as apps
from iceberg_lineage.lineage.events import snapshot_run_event, snapshot_run_id, start_event
from iceberg_lineage.lineage.serde import to_json
from iceberg_lineage.proxy.capture import Capture
from iceberg_lineage.proxy.outbox import Built, SnapshotRef
from iceberg_lineage.proxy.routes import Route
from iceberg_lineage.proxy.tracker import CommitRun
from iceberg_lineage.state.proxy_runs import KEEP_COMMIT_S
from iceberg_lineage.stats import snapshot_stats
from tests.proxy.reports import SPARK, commit_report, lineage_end, metadata, relayed, scan_report
from tests.support.olschema import validate_event

DEAD_OWNER = "{host}:999999999:dead"
JAVA = "Apache Iceberg 1.10.2 (commit 0000)"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class Harness:
    """The lineage process's tracker with a test clock: reports go in as captures through the interpreter, commits
    as the interpreter hands them on; what reaches the outbox is built and settled as delivered."""

    def __init__(self, path, clock: Clock, **settings) -> None:
        self.settings = load_settings(overrides={"proxy.report_wait_s": 2, "proxy.run_idle_timeout_s": 300,
                                                 **settings})
        self.recorded: list = []
        self.interpreter, self.queued = lineage_end(self.settings, path, clock=clock, state=self)
        self.tracker, self.store = self.interpreter.tracker, self.interpreter.tracker.store
        for ident in (("db", "a"), ("db", "b"), ("db", "c")):
            self.interpreter.tables.put("warehouse", ident, relayed(ident))

    def record(self, rows) -> None:  # the proxy's snapshots state
        self.recorded.extend(rows)

    def post(self, ident: tuple[str, ...], report: dict) -> list[dict]:
        """A report posted to ``/metrics``, as the lineage process reads it; then everything sent meanwhile."""
        route = Route("metrics", "warehouse", ident[:-1], ident[-1])
        self.interpreter.interpret(Capture(route, 204, request=json.dumps(report).encode()))
        return self.drain()

    def commit(self, ident: tuple[str, ...], identity: str, snapshot_id: int, summary: dict,
               event: RunEvent) -> list[dict]:
        """A snapshot's run event as the interpreter hands it on; then everything sent."""
        if event.eventType.value == "COMPLETE":
            self.tracker.send([CommitRun("warehouse", ident, SnapshotRef(identity, snapshot_id), summary, event)])
        else:
            self.tracker.send([Built(event)])
        return self.drain()

    def drain(self) -> list[dict]:
        out = []
        for batch in self.queued.items:
            events = batch.events()
            batch.settled([DeliveryResult("delivered")] * len(events))
            out += [json.loads(to_json(e)) for e in events]
        self.queued.items.clear()
        for event in out:
            validate_event(event)
        return out


def snapshot(md: dict, index: int = -1) -> dict:
    return md["snapshots"][index]


def complete_of(harness: Harness, md: dict) -> RunEvent:
    table = harness.interpreter.tables.table_of("warehouse", ("db", "b"))
    sid = snapshot(md)["snapshot-id"]
    return snapshot_run_event(table, snapshot_stats(table, sid, depth="summary"), harness.settings)


def kinds(events: list[dict]) -> list[tuple[str, str]]:
    return [(e["eventType"], e["job"]["name"]) for e in events]


@pytest.fixture
def clock():
    return Clock()


def test_an_application_reads_a_and_c_and_writes_b(tmp_path, clock):
    h = Harness(tmp_path / "state.db", clock)
    md = metadata()
    read_a, read_c = snapshot(md, 0)["snapshot-id"], snapshot(md, 1)["snapshot-id"]
    first = h.post(("db", "a"), scan_report(read_a, metadata=SPARK))
    assert kinds(first) == [("START", "spark.application"), ("RUNNING", "spark.application")]
    clock.now += 1
    assert kinds(h.post(("db", "c"), scan_report(read_c, metadata=SPARK))) == [("RUNNING", "spark.application")]
    # B's commit by the same application (the fixture's summary names another app id: use the report's)
    summary = {**snapshot(md)["summary"], "spark.app.id": SPARK["app-id"], "iceberg-version": JAVA}
    sid, seq = snapshot(md)["snapshot-id"], snapshot(md)["sequence-number"]
    start = start_event(complete_of(h, md))  # the run's START goes straight out, its COMPLETE waits
    assert h.commit(("db", "b"), "uuid-b", sid, summary, start) == [json.loads(to_json(start))]
    assert h.commit(("db", "b"), "uuid-b", sid, summary, complete_of(h, md)) == []
    clock.now += 1
    [complete] = h.post(("db", "b"), commit_report(sid, seq, metadata=SPARK))
    assert complete["eventType"] == "COMPLETE" and complete["job"]["name"] == "db.b.commit"
    assert sorted((i["name"], i["facets"]["version"]["datasetVersion"]) for i in complete["inputs"]) == sorted(
        [("db/a", str(read_a)), ("db/c", str(read_c))])
    assert complete["outputs"][0]["outputFacets"]["icebergCommitReport"]["commitMetrics"]["totalDuration"] == 1234
    assert [(r.identity, r.snapshot_id, r.status) for r in h.recorded] == [("uuid-b", sid, "delivered")]
    # a report arriving again (a retry) is late: OTHER on the same run
    [late] = h.post(("db", "b"), commit_report(sid, seq, metadata=SPARK))
    assert (late["eventType"], late["run"]["runId"]) == ("OTHER", complete["run"]["runId"])
    # idle: COMPLETE listing what it read, no outputs; then activity: OTHER, never a second START
    clock.now += 299
    h.tracker.sweep()
    assert h.drain() == []
    clock.now += 2
    h.tracker.sweep()
    [done] = h.drain()
    assert (done["eventType"], done["outputs"], sorted(i["name"] for i in done["inputs"])) == ("COMPLETE", [],
                                                                                            ["db/a", "db/c"])
    assert done["run"]["runId"] == first[0]["run"]["runId"] == apps.application_run_id("spark", SPARK["app-id"])
    again = h.post(("db", "a"), scan_report(read_a, metadata=SPARK))
    assert kinds(again) == [("OTHER", "spark.application")]
    clock.now += 1000
    h.tracker.sweep()
    assert h.drain() == []


def test_a_commit_without_its_report_goes_out_after_the_wait_and_a_late_report_is_other(tmp_path, clock):
    h = Harness(tmp_path / "state.db", clock, **{"proxy.report_wait_s": 0.5})
    md = metadata()
    sid, seq = snapshot(md)["snapshot-id"], snapshot(md)["sequence-number"]
    event = complete_of(h, md)
    held = h.commit(("db", "b"), "uuid-b", sid, {**snapshot(md)["summary"], "iceberg-version": JAVA}, event)
    assert kinds(held) == [("START", "spark.application")]  # the fixture's own application; the COMPLETE waits
    h.tracker.sweep()
    assert h.drain() == []
    clock.now += 0.5
    h.tracker.sweep()
    [complete] = h.drain()
    sent = json.loads(to_json(event))
    assert complete["run"]["runId"] == sent["run"]["runId"]
    assert complete["outputs"][0]["outputFacets"] == sent["outputs"][0]["outputFacets"]  # the summary's figures
    [late] = h.post(("db", "b"), commit_report(sid, seq))
    assert (late["eventType"], late["run"]["runId"]) == ("OTHER", sent["run"]["runId"])
    assert late["outputs"][0]["outputFacets"]["icebergCommitReport"]["commitMetrics"]["attempts"] == 2


def test_a_report_before_its_commit_completes_it_at_once(tmp_path, clock):
    h = Harness(tmp_path / "state.db", clock)
    md = metadata()
    sid, seq = snapshot(md)["snapshot-id"], snapshot(md)["sequence-number"]
    assert h.post(("db", "b"), commit_report(sid, seq)) == []
    [complete] = h.commit(("db", "b"), "uuid-b", sid, {}, complete_of(h, md))
    assert complete["outputs"][0]["outputFacets"]["icebergCommitReport"]["commitMetrics"]["totalDuration"] == 1234
    clock.now += 10
    h.tracker.sweep()
    assert h.drain() == []


def test_a_restart_completes_what_a_killed_proxy_left_open_and_a_live_owner_keeps_its_own(tmp_path, clock,
                                                                                          monkeypatch):
    import socket

    path = tmp_path / "state.db"
    md = metadata()
    killed = Harness(path, clock)
    killed.store.owner = DEAD_OWNER.format(host=socket.gethostname())
    killed.post(("db", "a"), scan_report(snapshot(md, 0)["snapshot-id"], metadata=SPARK))
    live = Harness(path, clock)
    live.post(("db", "a"), scan_report(snapshot(md, 0)["snapshot-id"],
                                       metadata={**SPARK, "app-id": "local-live"}))
    clock.now += 1
    restarted = Harness(path, clock)
    restarted.tracker.start()
    restarted.tracker.stop()
    [done] = restarted.drain()
    assert (done["eventType"], done["run"]["runId"]) == ("COMPLETE", apps.application_run_id("spark", SPARK["app-id"]))
    # the live process's application is its own while it renews its lease: only it completes it
    for _ in range(16):
        clock.now += 20
        live.store.renew(clock.now)
        restarted.tracker.sweep()
        assert restarted.drain() == []
    live.tracker.sweep()
    assert kinds(live.drain()) == [("COMPLETE", "spark.application")]


def test_shutdown_sends_what_it_holds_and_completes_what_it_owns(tmp_path, clock):
    h = Harness(tmp_path / "state.db", clock)
    md = metadata()
    h.post(("db", "a"), scan_report(snapshot(md, 0)["snapshot-id"], metadata=SPARK))
    h.commit(("db", "b"), "uuid-b", snapshot(md)["snapshot-id"], {"iceberg-version": JAVA}, complete_of(h, md))
    h.tracker.start()
    h.tracker.stop()
    assert sorted(kinds(h.drain())) == [("COMPLETE", "db.b.commit"), ("COMPLETE", "spark.application")]


def test_a_commit_no_report_is_expected_for_goes_out_at_once(tmp_path, clock):
    h = Harness(tmp_path / "state.db", clock)
    md = metadata()
    summary = {k: v for k, v in snapshot(md)["summary"].items() if k != "spark.app.id"}  # DuckDB, plain PyIceberg
    [event] = h.commit(("db", "b"), "uuid-b", snapshot(md)["snapshot-id"], summary, complete_of(h, md))
    assert event["eventType"] == "COMPLETE" and h.drain() == []
    [late] = h.post(("db", "b"), commit_report(snapshot(md)["snapshot-id"], snapshot(md)["sequence-number"]))
    assert (late["eventType"], late["run"]["runId"]) == ("OTHER", event["run"]["runId"])
    assert [(r.identity, r.status) for r in h.recorded] == [("uuid-b", "delivered")]


def test_a_report_whose_commit_never_came_is_one_other_event_of_the_snapshots_run_when_its_wait_expires(tmp_path,
                                                                                                       clock):
    """A proxy restarted between a commit and its report, or another proxy in front of the catalog: the report
    waits for its commit as long as a commit waits for a late report, then is an OTHER event of the snapshot's
    deterministic run (the table loaded by the proxy), which the scanner's COMPLETE joins."""
    h = Harness(tmp_path / "state.db", clock)
    md = metadata()
    last = snapshot(md)
    assert h.post(("db", "b"), commit_report(last["snapshot-id"], last["sequence-number"])) == []
    clock.now += KEEP_COMMIT_S - 1
    h.tracker.sweep()
    assert h.drain() == []
    clock.now += 1
    h.tracker.sweep()
    [other] = h.drain()
    identity = str(uuid.uuid5(uuid.NAMESPACE_URL, "db.b"))  # the table as relayed (tests.proxy.reports)
    assert (other["eventType"], other["run"]["runId"]) == (
        "OTHER", str(snapshot_run_id(identity, last["snapshot-id"], last["timestamp-ms"])))
    assert other["job"]["name"] == complete_of(h, md).job.name
    [output] = other["outputs"]
    assert (output["namespace"], output["name"]) == ("s3://warehouse", "db/b")
    assert output["outputFacets"]["icebergCommitReport"]["commitMetrics"]["totalDuration"] == 1234
    clock.now += KEEP_COMMIT_S
    h.tracker.sweep()
    assert h.drain() == []  # exactly once
    assert h.recorded == []  # an OTHER completes no snapshot


def test_a_scan_reports_filter_literals_and_metadata_never_reach_an_event_or_the_log(tmp_path, clock, caplog):
    """A literal planted in a scan's filter and a value planted in the report's ``metadata``: the filter arrives as
    Java's sanitiser writes it (a token Java wrote stays), ``metadata`` keeps only the allow-listed keys."""
    h = Harness(tmp_path / "state.db", clock)
    report = scan_report(snapshot(metadata(), 0)["snapshot-id"],
                         metadata={**SPARK, "spark.hadoop.fs.s3a.secret.key": "PLANTED-META-SECRET"})
    report["filter"] = {"type": "and", "left": {"type": "eq", "term": "token", "value": "PLANTED-FILTER-SECRET"},
                        "right": {"type": "eq", "term": "id", "value": "(hash-3e5c6e7d)"}}
    with caplog.at_level("DEBUG"):
        events = h.post(("db", "a"), report)
    text = json.dumps(events) + caplog.text
    assert "PLANTED-FILTER-SECRET" not in text and "PLANTED-META-SECRET" not in text
    [running] = [e for e in events if e["eventType"] == "RUNNING"]
    facet = running["inputs"][0]["inputFacets"]["icebergScanReport"]
    assert json.loads(facet["filterDescription"]) == {
        "type": "and", "left": {"type": "eq", "term": "token", "value": hash_token("PLANTED-FILTER-SECRET")},
        "right": {"type": "eq", "term": "id", "value": "(hash-3e5c6e7d)"}}
    assert facet["metadata"] == SPARK
