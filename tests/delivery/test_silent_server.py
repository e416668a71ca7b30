"""A silent or very slow lineage server: each event is POSTed once at most (no retry after a read timeout), the
breaker spools the rest without trying, nothing overtakes what waits in the spool, and a replay delivers it all."""
from __future__ import annotations

import datetime as dt
from collections import Counter

from openlineage.client.event_v2 import Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.serde import Serde
from openlineage.client.transport.http import HttpConfig, HttpTransport
from tests.support.delivery import FAST, Answer, LineageServer, free_port, http_client, key, run_pairs

from iceberg_lineage.delivery.breaker import send_deadline
from iceberg_lineage.delivery.delivery import Delivery, DeliveryStats
from iceberg_lineage.delivery.pipeline import configured
from iceberg_lineage.delivery.replay import ReplayResult, replay
from iceberg_lineage.delivery.spool import Spool

#: A server that takes the request and never answers within any test's timeout.
SILENT = Answer(200, delay=3600)


def spooled_keys(settings) -> list[tuple[str, str]]:
    with Spool(settings.spool.path) as spool:
        return [(r.run_id, r.event_type) for r in spool.read(0, 10_000)]


def test_a_silent_server_gets_one_request_for_three_batches_and_replay_delivers_each_once(serve, settings):
    silent = serve(script=lambda n, _body: SILENT)
    delivery = Delivery(http_client(silent.url, timeout=0.3, **FAST), settings)
    batches = [run_pairs(1) for _ in range(3)]
    sent = [key(Serde.to_json(e)) for batch in batches for e in batch]

    results = [r for batch in batches for r in delivery.emit_many(batch)]

    # before: 6 POSTs per batch (openlineage's 5 read retries), 18 in all, 0 of 6 delivered
    assert len(silent.received) == 1  # the first event once; the breaker spooled the rest unsent
    assert [r.status for r in results] == ["spooled"] * 6
    assert {r.error for r in results[::2]} == {"ConnectionError: ReadTimeoutError"}  # what opened the breaker
    assert spooled_keys(settings) == sent

    good = serve()
    assert replay(settings.spool.path, http_client(good.url, **FAST)) == ReplayResult(6, 0)
    assert [key(b) for b in good.accepted] == sent  # in order, each exactly once


def test_a_200_after_the_timeout_is_not_posted_again(serve, settings):
    slow = serve(script=lambda n, _body: Answer(200, delay=1.0))
    delivery = Delivery(http_client(slow.url, timeout=0.2, **FAST),
                        settings.updated({"delivery.breaker_cooldown_s": 0}))
    events = [e for _ in range(3) for e in run_pairs(1)[:1]]  # three runs' STARTs: none waits behind another

    results = [delivery.emit(e) for e in events]

    assert slow.wait_idle()
    assert [r.status for r in results] == ["spooled"] * 3
    # before: each event POSTed and accepted 6 times; now once (the server has it; a replay may repeat it once)
    assert Counter(key(b) for b in slow.accepted) == Counter(key(Serde.to_json(e)) for e in events)
    assert len(slow.received) == 3


def test_read_retries_are_off_and_connect_retries_stay(settings):
    transport = HttpTransport(HttpConfig.from_dict({"url": "http://127.0.0.1:1", "retry": {"connect": 3}}))
    http = configured(transport).transport
    retry = http.session.get_adapter(http.url).max_retries
    assert (retry.read, retry.connect, retry.total) == (0, 3, 5)
    assert transport.config.retry["read"] == 5  # the client's own transport keeps its configuration


def test_the_breaker_reopens_after_its_cool_down_with_one_probe(settings):
    port = free_port()
    delivery = Delivery(http_client(f"http://127.0.0.1:{port}", total=0), settings)
    first, second = delivery.emit_many(run_pairs(1)), delivery.emit_many(run_pairs(1))
    assert [r.status for r in first + second] == ["spooled"] * 4
    assert delivery.stats == DeliveryStats(spooled=4)

    closed = Delivery(http_client(f"http://127.0.0.1:{port}", total=0),
                      settings.updated({"delivery.breaker_cooldown_s": 0}))
    with LineageServer(port) as server:
        [probe, *_] = closed.emit_many(run_pairs(1))
    assert probe.status == "delivered" and len(server.accepted) == 2


def output_event(run_id: str, state: RunState, dataset: str) -> RunEvent:
    return RunEvent(
        eventType=state, eventTime=dt.datetime(2026, 11, 29, tzinfo=dt.timezone.utc).isoformat(),
        run=Run(runId=run_id), job=Job(namespace="tests", name=f"job-{run_id[:4]}"),
        producer="https://github.com/example/iceberg-lineage/tests",
        outputs=[OutputDataset(namespace="file", name=dataset)],
    )


def test_a_fresh_event_of_a_spooled_dataset_waits_behind_it_and_replay_keeps_the_order(serve, settings):
    port = free_port()
    older = output_event("00000000-0000-4000-8000-000000000001", RunState.COMPLETE, "/lake/orders")
    Delivery(http_client(f"http://127.0.0.1:{port}", total=0), settings).emit(older)  # the server was down
    newer = output_event("00000000-0000-4000-8000-000000000002", RunState.COMPLETE, "/lake/orders")
    other = output_event("00000000-0000-4000-8000-000000000003", RunState.COMPLETE, "/lake/items")
    server = serve(port=port)
    delivery = Delivery(http_client(server.url, **FAST), settings)

    results = [delivery.emit(newer), delivery.emit(other)]

    # before: the newer event of /lake/orders was delivered ahead of the older one still in the spool
    assert [r.status for r in results] == ["spooled", "delivered"]
    assert [key(b) for b in server.accepted] == [key(Serde.to_json(other))]
    assert replay(settings.spool.path, http_client(server.url, **FAST)) == ReplayResult(2, 0)
    orders = [key(b) for b in server.accepted if b"/lake/orders" in b]
    assert orders == [key(Serde.to_json(older)), key(Serde.to_json(newer))]


def test_past_the_send_deadline_events_are_spooled_unsent(serve, settings):
    server = serve()
    delivery = Delivery(http_client(server.url, **FAST), settings)
    with send_deadline(0.0):
        results = delivery.emit_many(run_pairs(1))
    assert [(r.status, r.error) for r in results] == [("spooled", "not sent: delivery deadline passed"),
                                                      ("spooled", "not sent")]
    assert server.received == []
