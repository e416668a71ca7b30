"""The spool: its cap, its order under batches and threads, its durability across a crash, and its replay lock."""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from tests.support.delivery import Answer, free_port, http_client, key, run_event, run_pairs
from openlineage.client import OpenLineageClient
from openlineage.client.serde import Serde
from openlineage.client.transport.noop import NoopConfig, NoopTransport

from iceberg_lineage.delivery.delivery import Delivery, DeliveryResult, DeliveryStats
from iceberg_lineage.delivery.replay import ReplayResult, replay
from iceberg_lineage.errors import ConfigError, DeliveryError
from iceberg_lineage.delivery.spool import Spool

#: openlineage's retry reduced to a single attempt: these tests are about the spool, not the retry.
ONCE = {"total": 0}


def down_client() -> OpenLineageClient:
    return http_client(f"http://127.0.0.1:{free_port()}", **ONCE)


def test_a_full_spool_fails_the_event_counts_it_and_says_so(settings, tmp_path, caplog):
    probe = Delivery(down_client(), settings.updated({"spool.path": str(tmp_path / "probe")}))
    probe.emit(run_event())
    size = Spool(probe.spool_path).size_bytes()  # every test event serialises to the same length
    capped = settings.updated({"spool.max_bytes": 2 * size + size // 2})
    delivery = Delivery(down_client(), capped)
    events = [run_event() for _ in range(4)]

    with caplog.at_level(logging.ERROR, logger="iceberg_lineage.delivery.delivery"):
        results = [delivery.emit(e) for e in events]

    assert [r.status for r in results] == ["spooled", "spooled", "failed", "failed"]
    assert results[2].error == (
        f"ConnectionError: NewConnectionError; spool full (spool.max_bytes={2 * size + size // 2})"
    )
    assert delivery.stats == DeliveryStats(spooled=2, failed=2)
    lost = [r.getMessage() for r in caplog.records if "LOST" in r.getMessage()]
    assert [m.split("(run ")[1].split(",")[0] for m in lost] == [events[2].run.runId, events[3].run.runId]
    with Spool(settings.spool.path) as spool:
        assert spool.count() == 2 and spool.size_bytes() == 2 * size


def test_emit_many_spools_the_rest_of_a_batch_untried_behind_the_first_failure(serve, settings):
    server = serve(script=lambda n, _body: Answer(503))
    delivery = Delivery(http_client(server.url, **ONCE), settings)
    events = run_pairs(3)

    results = delivery.emit_many(events)

    assert [r.status for r in results] == ["spooled"] * 6
    assert len(server.received) == 1  # one attempt for the batch, not one per event
    with Spool(settings.spool.path) as spool:
        rows = spool.read(0, 100)
    assert [(r.run_id, r.event_type) for r in rows] == [key(Serde.to_json(e)) for e in events]
    # the untried events were prepared by the client all the same (its tags facet is there)
    assert all("openlineage_client_version" in r.body for r in rows)

    server.script = lambda n, _body: Answer(200)
    assert replay(settings.spool.path, http_client(server.url, **ONCE)) == ReplayResult(6, 0)
    assert [b.decode() for b in server.accepted] == [r.body for r in rows]


def test_threads_spooling_at_once_lose_nothing(settings):
    delivery = Delivery(down_client(), settings)
    batches = [run_pairs(10) for _ in range(4)]
    results: list[DeliveryResult] = []

    def emit_all(events):
        results.extend(delivery.emit(e) for e in events)

    threads = [threading.Thread(target=emit_all, args=(batch,)) for batch in batches]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert len(results) == 80 and {r.status for r in results} == {"spooled"}
    assert delivery.stats == DeliveryStats(spooled=80)
    with Spool(settings.spool.path) as spool:
        rows = spool.read(0, 1000)
    assert sorted((r.run_id, r.event_type) for r in rows) == sorted(key(Serde.to_json(e)) for b in batches for e in b)
    for batch in batches:  # each thread's events keep their order
        keys = [key(Serde.to_json(e)) for e in batch]
        seen = [(r.run_id, r.event_type) for r in rows if (r.run_id, r.event_type) in keys]
        assert seen == keys


CRASHING_WRITER = """
import os, sys
from tests.support.delivery import http_client, run_event
from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.delivery import Delivery
delivery = Delivery(http_client(sys.argv[2], total=0), Settings().updated({"spool.path": sys.argv[1]}))
print(delivery.emit(run_event()).status, flush=True)
os._exit(9)  # no close, no atexit, no flush: as if killed
"""


def test_a_spooled_event_survives_the_process_dying_right_after(settings):
    done = subprocess.run(
        [sys.executable, "-c", CRASHING_WRITER, settings.spool.path, f"http://127.0.0.1:{free_port()}"],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},  # the repository root: tests.support
    )
    assert done.returncode == 9 and done.stdout == "spooled\n"
    with Spool(settings.spool.path) as spool:
        rows = spool.read(0, 10)
    assert len(rows) == 1 and json.loads(rows[0].body)["eventType"] == "START"


def test_one_replay_at_a_time(settings):
    Delivery(down_client(), settings).emit(run_event())
    with Spool(settings.spool.path) as spool, spool.replay_lock():
        with pytest.raises(DeliveryError, match="another replay is running"):
            replay(settings.spool.path, down_client())
    assert replay(settings.spool.path, down_client()).remaining == 1


def test_disabled_delivery_sends_and_spools_nothing(settings):
    noop = OpenLineageClient(transport=NoopTransport(NoopConfig()))
    for client in (None, noop):
        delivery = Delivery(client, settings)
        assert delivery.emit(run_event()) == DeliveryResult("disabled")
        assert delivery.stats == DeliveryStats(disabled=1)
    assert not os.path.exists(settings.spool.path)
    with pytest.raises(ConfigError, match="disabled"):
        replay(settings.spool.path, noop)


def test_nothing_is_created_while_everything_is_delivered(serve, settings):
    server = serve()
    delivery = Delivery(http_client(server.url), settings)
    assert [r.status for r in delivery.emit_many(run_pairs(2))] == ["delivered"] * 4
    assert delivery.synchronous
    delivery.close()
    assert not os.path.exists(settings.spool.path)
    assert replay(settings.spool.path, http_client(server.url)) == ReplayResult(0, 0)


def test_spool_without_sending_stores_what_emit_would_have_sent(serve, settings):
    server = serve()
    delivery = Delivery(http_client(server.url), settings)
    spooled, sent = run_event(), run_event()

    assert delivery.spool(spooled) == DeliveryResult("spooled", "not sent")
    assert delivery.emit(sent).status == "delivered"
    assert [key(b) for b in server.received] == [key(Serde.to_json(sent))]

    assert replay(settings.spool.path, http_client(server.url)) == ReplayResult(1, 0)
    first, second = (json.loads(b) for b in server.accepted)
    assert second["run"]["runId"] == spooled.run.runId
    del first["run"]["runId"], second["run"]["runId"]
    assert first == second  # same client facets, same shape: only the run differs
