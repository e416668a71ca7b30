"""The proxy's process layout: serving processes relay and only queue captures; the lineage process (their parent)
builds and delivers. A stopped lineage process delays no request and, resumed, loses no event; a serving process's
channel is bounded and never waited on."""
from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import queue
import signal
import threading

import pyarrow as pa

from iceberg_lineage.lineage.events import lifecycle_run_id, snapshot_run_id
from iceberg_lineage.lineage.facets import ms_to_datetime
from iceberg_lineage.lineage.profiles import table_run_id
from iceberg_lineage.proxy.capture import ByteBudget, Capture, CaptureQueue, Channel
from iceberg_lineage.proxy.routes import Route
from iceberg_lineage.proxy.tables import LoadResult, TableLoader
from tests.support.lineage_server import LineageServer
from tests.support.olschema import validate_event
from tests.support.proxy import own_properties, start_proxy, wait_until


def test_a_stopped_lineage_process_delays_no_request_and_resumed_loses_no_event(seaweed, tmp_path):
    lineage = LineageServer()
    proxy = start_proxy(seaweed.uri, tmp_path / "proxy", lineage.url, *own_properties(seaweed))
    direct = seaweed.catalog("direct")
    try:
        [serving] = wait_until(lambda: [p for p in proxy.processes() if p != proxy.process.pid])
        catalog = seaweed.catalog("layout", uri=proxy.uri)
        catalog.create_namespace_if_not_exists("layout")
        table = catalog.create_table("layout.t", pa.schema([("id", pa.int64())]))
        lineage.wait_idle()
        before = len(lineage.accepted_events())
        os.kill(proxy.process.pid, signal.SIGSTOP)  # the lineage process, not the one serving
        try:
            def traffic() -> None:
                for n in range(3):
                    table.append(pa.table({"id": [n]}))
                catalog.create_table("layout.gone", pa.schema([("id", pa.int64())]))
                gone.append(direct.load_table("layout.gone"))
                catalog.drop_table("layout.gone")  # never loaded through this serving process: it loads it first

            gone: list = []
            worker = threading.Thread(target=traffic)
            worker.start()
            worker.join(60)
            assert not worker.is_alive()  # every request answered while lineage was stopped
            assert len(gone) == 1
            assert len(lineage.accepted_events()) == before  # and nothing was built or sent meanwhile
        finally:
            os.kill(proxy.process.pid, signal.SIGCONT)
        assert serving in proxy.processes()
        metadata = direct.load_table("layout.t").metadata
        expected = {str(snapshot_run_id(str(metadata.table_uuid), s.snapshot_id, s.timestamp_ms))
                    for s in metadata.snapshots}
        dropped = gone[0].metadata
        drop_run = str(lifecycle_run_id(str(dropped.table_uuid), "DROP", gone[0].metadata_location,
                                        ms_to_datetime(dropped.last_updated_ms)))

        def arrived() -> list[dict]:
            events = lineage.accepted_events()
            completes = {e["run"]["runId"] for e in events if e["eventType"] == "COMPLETE"}
            return events if expected <= completes and drop_run in completes else []

        events = wait_until(arrived)
        assert events
        for event in events:
            validate_event(event)
        commits = [e for e in events if e["job"]["name"] == "layout.t.commit" and e["eventType"] == "COMPLETE"]
        assert sorted(e["run"]["runId"] for e in commits) == sorted(expected)  # each snapshot once
        [drop] = [e for e in events if e["run"]["runId"] == drop_run and e["eventType"] == "COMPLETE"]
        assert drop["job"]["name"] == "layout.gone.catalog"
        assert drop["outputs"][0]["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "DROP"
    finally:
        proxy.stop()
        lineage.stop()
    assert proxy.process.returncode == 0


class NoCatalog(TableLoader):
    def __init__(self) -> None:
        super().__init__("http://127.0.0.1:9", {}, 5.0)
        self.loads: list[tuple[str, ...]] = []

    def _load(self, identifier):
        self.loads.append(tuple(identifier))
        return LoadResult("s3://w/t/metadata/00001.json", {"format-version": 2})


def test_a_full_channel_leaves_a_capture_out_with_a_warning_and_never_waits(caplog):
    channel = multiprocessing.get_context("fork").Queue(1)
    captures = CaptureQueue(Channel(channel, ByteBudget(1 << 20)), NoCatalog(), known_tables=2)
    load = Capture(Route("load", "w", ("db",), "a"), 200, response=b"{}")
    with caplog.at_level(logging.WARNING):
        captures.submit(load)
        captures.submit(Capture(Route("commit", "w", ("db",), "b"), 200))  # nobody reads: the queue holds one
    assert captures.left_out == 1
    assert [r.getMessage().split(";")[0] for r in caplog.records] == [
        "iceberg-lineage: queueing a lineage capture for the lineage process failed (RuntimeError: 1 capture(s) "
        "left out: the lineage process is not reading)"]
    assert captures.knows("w", ("db", "a")) and not captures.knows("w", ("db", "b"))  # b never left
    assert channel.get(timeout=5) == load
    channel.close()


def test_the_tables_a_serving_process_sent_need_no_load_before_their_drop():
    channel = multiprocessing.get_context("fork").Queue(100)
    own = NoCatalog()
    captures = CaptureQueue(Channel(channel, ByteBudget(1 << 20)), own, known_tables=2)
    for table in ("a", "b", "c"):  # a falls out: at most 2 remembered
        captures.submit(Capture(Route("commit", None, ("db",), table), 200))
    asyncio.run(captures.ensure_known(None, ("db", "c")))
    assert own.loads == []
    asyncio.run(captures.ensure_known(None, ("db", "a")))
    assert own.loads == [("db", "a")]
    captures.submit(Capture(Route("drop", None, ("db",), "c"), 204))
    assert not captures.knows(None, ("db", "c"))
    got = [channel.get(timeout=5) for _ in range(5)]
    captures.close(5.0)  # the end mark, then the feeder flushed (a reader in another process sees CLOSED last)
    # the load made before a's drop is sent as a load of a's metadata (no config: no vended credential)
    assert [(c.route.kind, c.route.table) for c in got] == [("commit", "a"), ("commit", "b"), ("commit", "c"),
                                                             ("load", "a"), ("drop", "c")]
    assert got[3].response == b'{"metadata-location": "s3://w/t/metadata/00001.json", "metadata": {"format-version": 2}}'


def test_past_the_byte_budget_a_capture_goes_without_its_bodies_with_one_warning(caplog):
    """``proxy.queue_max_bytes``: the bodies queued and not yet taken by the lineage process are bounded; past it a
    capture goes without them (the lineage process reloads the table), and room comes back as captures are taken."""
    channel = Channel(queue.Queue(), ByteBudget(100))
    captures = CaptureQueue(channel, NoCatalog(), known_tables=10)
    first, second, third = (Capture(Route("commit", "w", ("db",), t), 200, request=b"r" * 30, response=b"a" * 50)
                            for t in ("a", "b", "c"))
    with caplog.at_level(logging.WARNING):
        captures.submit(first)
        captures.submit(second)
        captures.submit(second)
    taken = [channel.queue.get_nowait() for _ in range(3)]
    assert taken[0] == first
    assert taken[1] == taken[2] == Capture(second.route, 200, bodies_left_out=True)
    assert len([r for r in caplog.records if "proxy.queue_max_bytes (100) reached" in r.getMessage()]) == 1
    channel.budget.release(first.size)  # what the collector does as it takes a capture
    captures.submit(third)
    assert channel.queue.get_nowait() == third


def test_the_profile_flag_shapes_the_proxys_events(seaweed, tmp_path):
    """``proxy --profile openmetadata``: every run without a parent names the table's run (OpenMetadata < 1.13)."""
    lineage = LineageServer()
    proxy = start_proxy(seaweed.uri, tmp_path / "proxy", lineage.url, "--profile", "openmetadata",
                        *own_properties(seaweed))
    try:
        catalog = seaweed.catalog("profiled", uri=proxy.uri)
        catalog.create_namespace_if_not_exists("profiled")
        table = catalog.create_table("profiled.t", pa.schema([("id", pa.int64())]))
        table.append(pa.table({"id": [1]}))
        events = wait_until(lambda: [e for e in lineage.accepted_events() if e["job"]["name"] == "profiled.t.commit"
                                     and e["eventType"] == "COMPLETE"])
    finally:
        proxy.stop()
        lineage.stop()
    [complete] = events
    validate_event(complete)
    output = complete["outputs"][0]
    assert complete["run"]["facets"]["parent"]["job"] == {"namespace": "iceberg-lineage", "name": "profiled.t",
                                                          "facets": {}}
    assert complete["run"]["facets"]["parent"]["run"]["runId"] == table_run_id(output["namespace"], output["name"])
