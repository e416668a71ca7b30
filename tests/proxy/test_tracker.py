"""The application tracker and its state, with a test clock and the events it queues: START once, RUNNING per scan,
COMPLETE after the idle timeout listing the reads, OTHER for activity after it (never a second START); a commit's
COMPLETE held for its report, with the application's reads and parent; a late report as OTHER; a restart (a new
owner, the old one dead) completing what was left open; one owner per row across processes."""
from __future__ import annotations

import json

import pytest
from openlineage.client.event_v2 import RunEvent

from iceberg_lineage.config import load_settings
from iceberg_lineage.lineage import applications as apps
from iceberg_lineage.lineage.events import snapshot_run_event, start_event
from iceberg_lineage.lineage.serde import to_json
from iceberg_lineage.proxy.applications import ApplicationTracker
from iceberg_lineage.state.applications import ApplicationStore
from iceberg_lineage.stats import snapshot_stats
from tests.proxy.reports import SPARK, commit_report, metadata, rest_table, scan_report
from tests.support.olschema import validate_event

DEAD_OWNER = "{host}:999999999:dead"
JAVA = "Apache Iceberg 1.10.2 (commit 0000)"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class Harness:
    def __init__(self, path, clock: Clock, **settings) -> None:
        self.settings = load_settings(overrides={"proxy.report_wait_s": 2, "proxy.run_idle_timeout_s": 300,
                                                 **settings})
        self.queued: list = []
        self.recorded: list = []
        self.store = ApplicationStore(path)
        self.tables = {("db", "a"): rest_table(("db", "a")), ("db", "c"): rest_table(("db", "c")),
                       ("db", "b"): rest_table(("db", "b"))}
        self.tracker = ApplicationTracker(self.store, self.settings, submit=self.queued.append,
                                          lookup=lambda _prefix, ident: self.tables.get(tuple(ident)),
                                          record=self.recorded.extend, clock=clock)

    def post(self, ident: tuple[str, ...], report: dict) -> list[dict]:
        """A report as the emitter builds it, then everything queued meanwhile."""
        outgoing = self.tracker.capture("warehouse", ident, json.dumps(report).encode())
        return self.drain([outgoing])

    def drain(self, items: list | None = None) -> list[dict]:
        items = (items or []) + self.queued
        self.queued.clear()
        out = []
        for item in items:
            events = [item] if isinstance(item, RunEvent) else item.events()
            if hasattr(item, "settled"):
                from iceberg_lineage.delivery.delivery import DeliveryResult

                item.settled([DeliveryResult("delivered")] * len(events))
            out += [json.loads(to_json(e)) for e in events]
        for event in out:
            validate_event(event)
        return out


def snapshot(md: dict, index: int = -1) -> dict:
    return md["snapshots"][index]


def complete_of(harness: Harness, md: dict) -> RunEvent:
    table = harness.tables[("db", "b")]
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
    assert h.tracker.hold("warehouse", ("db", "b"), "uuid-b", sid, summary, start) == [start]
    assert h.tracker.hold("warehouse", ("db", "b"), "uuid-b", sid, summary, complete_of(h, md)) == []
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
    assert h.tracker.hold("warehouse", ("db", "b"), "uuid-b", sid, {**snapshot(md)["summary"], "iceberg-version": JAVA},
                          event) == []
    h.drain()  # the START of the fixture's own application
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
    [complete] = [json.loads(to_json(e)) for e in h.tracker.hold("warehouse", ("db", "b"), "uuid-b", sid, {},
                                                                    complete_of(h, md))]
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
    h.tracker.hold("warehouse", ("db", "b"), "uuid-b", snapshot(md)["snapshot-id"], {"iceberg-version": JAVA},
                   complete_of(h, md))
    h.tracker.start()
    h.tracker.stop()
    assert sorted(kinds(h.drain())) == [("COMPLETE", "db.b.commit"), ("COMPLETE", "spark.application")]


def test_a_commit_no_report_is_expected_for_goes_out_at_once(tmp_path, clock):
    h = Harness(tmp_path / "state.db", clock)
    md = metadata()
    summary = {k: v for k, v in snapshot(md)["summary"].items() if k != "spark.app.id"}  # DuckDB, plain PyIceberg
    [event] = h.tracker.hold("warehouse", ("db", "b"), "uuid-b", snapshot(md)["snapshot-id"], summary,
                             complete_of(h, md))
    assert event.eventType.value == "COMPLETE" and h.drain() == []
    [late] = h.post(("db", "b"), commit_report(snapshot(md)["snapshot-id"], snapshot(md)["sequence-number"]))
    assert (late["eventType"], late["run"]["runId"]) == ("OTHER", event.run.runId)
