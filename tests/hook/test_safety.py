"""A lineage failure never changes the user's operation; failed commits are FAIL runs; threads; a full queue."""
from __future__ import annotations

import atexit
import collections
import dataclasses
import logging
import threading

import pytest
from tests.support.hook import SCHEMA, Collector, commit_report, outputs, rows, table_of, tags_in_metadata, valid, version
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import Job, Run, RunEvent, RunState
from openlineage.client.transport.http import HttpConfig, HttpTransport
from pyiceberg.exceptions import CommitFailedException

from iceberg_lineage.hook import reporter as hook
from iceberg_lineage.lineage import captures
from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.delivery import Delivery
from iceberg_lineage.delivery.replay import replay
from iceberg_lineage.delivery.emitter import EMITTERS, Emitter, Emitters
from iceberg_lineage.delivery.spool import Spool
from tests.support.userstate import USER_STATE


def test_commit_that_fails_for_good_is_a_fail_run_and_the_error_is_untouched(sql_catalog, sink):
    hook.observe(sql_catalog, client=sink.client)
    sql_catalog.create_table("db.t", SCHEMA, properties={"commit.retry.num-retries": "0"})
    winner, loser = sql_catalog.load_table("db.t"), sql_catalog.load_table("db.t")
    winner.append(rows(1))
    with pytest.raises(CommitFailedException) as raised:
        loser.append(rows(2))

    assert "pyiceberg" in str(raised.traceback[-1].path)  # raised where PyIceberg raised it
    fail = valid(sink.events())[-1]
    assert fail["eventType"] == "FAIL" and fail["job"]["name"] == "db.t.pyiceberg"
    error = fail["run"]["facets"]["errorMessage"]
    assert error["message"] == f"CommitFailedException: {raised.value}"
    assert [table_of(d) for d in outputs(fail)] == ["db.t"]
    loser.refresh()
    assert [s.snapshot_id for s in loser.metadata.snapshots] == [winner.current_snapshot().snapshot_id]


def test_eight_threads_give_one_event_per_commit_and_count_retries(sql_catalog, sink):
    hook.observe(sql_catalog, client=sink.client)
    props = {"commit.retry.num-retries": "20", "commit.retry.min-wait-ms": "5", "commit.retry.max-wait-ms": "50"}
    names = ["db.shared"] + [f"db.own{i}" for i in range(4)]
    for name in names:
        sql_catalog.create_table(name, SCHEMA, properties=props)
    handles = [sql_catalog.load_table("db.shared") for _ in range(4)] + [sql_catalog.load_table(n) for n in names[1:]]
    start, errors = threading.Barrier(8), []

    def work(table):
        try:
            start.wait()
            for i in range(3):
                table.append(rows(i))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in handles]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []

    commits = [e for e in valid(sink.events()) if e.get("outputs") and "icebergCommitReport" in
               (outputs(e)[0].get("outputFacets") or {})]
    seen = collections.Counter((table_of(outputs(e)[0]), version(outputs(e)[0])) for e in commits)
    tables = {n: sql_catalog.load_table(n) for n in names}
    expected = {(n, s.snapshot_id) for n, t in tables.items() for s in t.metadata.snapshots}
    assert set(seen) == expected and set(seen.values()) == {1} and len(expected) == 24
    shared = [commit_report(outputs(e)[0])["commitMetrics"]["attempts"] for e in commits
              if table_of(outputs(e)[0]) == "db.shared"]
    assert len(shared) == 12 and sum(shared) > 12  # four stale handles: three of the first appends conflicted
    for name, table in tables.items():
        by_version = {version(outputs(e)[0]): e["run"]["runId"] for e in commits if table_of(outputs(e)[0]) == name}
        assert tags_in_metadata(table) == by_version


def test_a_failing_lineage_step_is_logged_once_and_the_commit_stands(sql_catalog, sink, caplog, monkeypatch):
    hook.observe(sql_catalog, client=sink.client)
    table = sql_catalog.create_table("db.t", SCHEMA)

    def broken(*_args, **_kwargs):
        raise RuntimeError("facet builder exploded")

    monkeypatch.setattr(hook, "commit_events", broken)
    with caplog.at_level(logging.WARNING, logger="iceberg_lineage.hook"):
        table.append(rows(1))
        table.append(rows(2))
        sink.events()
    assert table.scan().to_arrow().num_rows == 2
    warnings = [r for r in caplog.records if "facet builder exploded" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].exc_info is not None


def test_an_unreachable_server_spools_and_replay_delivers(sql_catalog, tmp_path):
    dead = Collector()
    dead.stop()  # nothing listens on its port any more
    client = OpenLineageClient(transport=HttpTransport(HttpConfig(url=dead.url, retry={"total": 0})))
    hook.observe(sql_catalog, client=client)
    table = sql_catalog.create_table("db.t", SCHEMA)
    table.append(rows(1))
    dead.events()

    spool_path = tmp_path / USER_STATE / "spool"
    with Spool(spool_path) as spool:
        assert spool.count() == 4  # the CREATE's START and COMPLETE, then the snapshot's
    live = Collector()
    try:
        result = replay(spool_path, live.client)
        assert (result.delivered, result.remaining) == (4, 0)
        assert [e["job"]["name"] for e in valid(live.bodies)] == ["db.t.pyiceberg"] * 4
    finally:
        live.stop()


def _event(n: int) -> RunEvent:
    return RunEvent(eventType=RunState.COMPLETE, eventTime="2026-01-01T00:00:00.000Z",
                    run=Run(runId=f"01a22800-0000-7000-8000-{n:012d}"), job=Job(namespace="ns", name=f"job{n}"),
                    producer="https://example.com/test")


def test_a_full_queue_spills_to_the_spool_without_blocking(tmp_path):
    gate = threading.Event()
    server = Collector(gate=gate)
    try:
        settings = Settings().updated({"spool.path": str(tmp_path / "spool")})
        emitter = Emitter(Delivery(server.client, settings), max_queue=1)
        for n in range(6):
            emitter.submit(_event(n))  # one in flight, one queued, four spilled
        with Spool(settings.spool.path) as spool:
            spilled = spool.count()
        gate.set()
        assert emitter.flush(30)
        delivered = len(server.bodies)
        assert spilled >= 3 and delivered + spilled == 6
        assert replay(settings.spool.path, server.client).delivered == spilled
        assert sorted(b["job"]["name"] for b in server.bodies) == [f"job{n}" for n in range(6)]
    finally:
        gate.set()
        server.stop()


def test_exit_flush_spools_what_a_stuck_transport_did_not_take(tmp_path):
    gate = threading.Event()
    server = Collector(gate=gate)
    try:
        settings = Settings().updated({"spool.path": str(tmp_path / "spool")})
        emitter = EMITTERS.emitter_for(server.client, settings)
        for n in range(4):
            emitter.submit(_event(n))
        assert EMITTERS.flush_all(timeout=1) is False
        with Spool(settings.spool.path) as spool:
            assert spool.count() == 3  # the first event is in flight; the other three are kept for replay
        gate.set()
        assert emitter.flush(30) and len(server.bodies) == 1
    finally:
        gate.set()
        server.stop()


def test_the_queue_holds_capture_records_and_their_builders_not_closures(sql_catalog, sink, monkeypatch):
    queued = []
    monkeypatch.setattr(Emitter, "submit", lambda self, item: queued.append(item))
    hook.observe(sql_catalog, client=sink.client)
    table = sql_catalog.create_table("db.t", SCHEMA)
    table.append(rows(1))
    table.scan().to_arrow()

    assert [(item.build, type(item.record)) for item in queued] == [
        (captures.catalog_events, captures.CatalogChange),
        (captures.commit_events, captures.Commit),
        (captures.scan_events, captures.Scan),
    ]
    assert all(dataclasses.is_dataclass(item) and dataclasses.is_dataclass(item.record) for item in queued)
    assert isinstance(queued[1].record.table, captures.TableCapture)


def test_the_exit_flush_is_registered_by_the_first_emitter_not_by_the_import(sink, tmp_path, monkeypatch):
    registered = []
    monkeypatch.setattr(atexit, "register", registered.append)
    emitters = Emitters()
    assert registered == []
    settings = Settings().updated({"spool.path": str(tmp_path / "spool")})
    first = emitters.emitter_for(sink.client, settings)
    assert emitters.emitter_for(sink.client, settings) is first
    assert emitters.emitter_for(OpenLineageClient(transport=sink.client.transport), settings) is not first
    assert registered == [emitters.flush_at_exit]
    emitters.shutdown()

