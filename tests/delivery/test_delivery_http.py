"""Delivery through openlineage-python's HTTP transport against real local servers that fail in the usual ways."""
from __future__ import annotations

import json
import logging
from collections import Counter

import pytest
from tests.support.delivery import FAST, Answer, free_port, http_client, key, run_event, run_pairs
from openlineage.client.serde import Serde
from openlineage.client.transport.http import HttpConfig, HttpTransport
from openlineage.client import OpenLineageClient

from iceberg_lineage.delivery import http as http_module
from iceberg_lineage.delivery.delivery import Delivery, DeliveryStats
from iceberg_lineage.delivery.pipeline import configured, configured_dict
from iceberg_lineage.delivery.replay import ReplayResult, replay
from iceberg_lineage.delivery.spool import Spool
from iceberg_lineage.delivery.transports import create


def spooled_rows(settings):
    with Spool(settings.spool.path) as spool:
        return spool.read(0, 10_000)


def test_server_failing_then_recovering_loses_nothing_and_duplicates_only_sent_runs(serve, settings):
    # The server processes every request but answers 500 to the first 7: the first event exhausts openlineage's
    # 6 attempts and is spooled; the COMPLETE of its run waits behind it unsent (nothing overtakes); the next run's
    # START gets through on its second attempt (no breaker cool-down here), the rest at once.
    server = serve(script=lambda n, _body: Answer(500 if n < 7 else 200))
    events = run_pairs(5)
    sent = [key(Serde.to_json(e)) for e in events]
    delivery = Delivery(http_client(server.url, **FAST), settings.updated({"delivery.breaker_cooldown_s": 0}))

    results = [delivery.emit(e) for e in events]

    assert [r.status for r in results] == ["spooled", "spooled"] + ["delivered"] * 8
    assert results[0].error == "RetryError: too many 500 error responses"
    assert results[1].error == "not sent: behind a spooled event of its run or dataset"
    assert delivery.stats == DeliveryStats(delivered=8, spooled=2)
    assert len(server.received) == 6 + 2 + 7

    assert replay(settings.spool.path, http_client(server.url, **FAST)) == ReplayResult(2, 0)
    received = Counter(key(b) for b in server.received)
    assert set(received) == set(sent)  # every event arrived ...
    assert Counter(key(b) for b in server.accepted) == Counter(sent)  # ... and was accepted once
    assert received[sent[0]] == 7 and received[sent[1]] == 1 and received[sent[2]] == 2  # duplicates: only sent ones
    run = sent[0][0]
    assert [k for k in map(key, server.accepted) if k[0] == run] == sent[:2]  # START before COMPLETE
    assert spooled_rows(settings) == []


def test_server_down_for_the_whole_run_then_replay_delivers_every_body_in_order(serve, settings, caplog):
    port = free_port()
    events = run_pairs(3)
    originals = [Serde.to_dict(e) for e in events]  # before the client adds its facets
    delivery = Delivery(http_client(f"http://127.0.0.1:{port}", **FAST), settings)

    with caplog.at_level(logging.WARNING, logger="iceberg_lineage.delivery.delivery"):
        results = [delivery.emit(e) for e in events]

    assert {r.status for r in results} == {"spooled"}
    assert {r.error for r in results} == {"ConnectionError: NewConnectionError"}
    assert [r.levelname for r in caplog.records if r.name == "iceberg_lineage.delivery.delivery"] == ["WARNING"]  # once
    rows = spooled_rows(settings)
    assert [(r.run_id, r.event_type) for r in rows] == [key(Serde.to_json(e)) for e in events]

    server = serve(port=port)
    result = replay(settings.spool.path, http_client(server.url, **FAST))

    assert result == ReplayResult(6, 0)
    assert [b.decode() for b in server.accepted] == [r.body for r in rows]  # byte for byte, in order
    for body, original in zip(server.accepted, originals):
        doc = json.loads(body)
        assert doc["run"]["facets"].pop("tags")["tags"][0]["key"] == "openlineage_client_version"
        original["run"]["facets"] = {}
        assert doc == original
    assert spooled_rows(settings) == []
    assert replay(settings.spool.path, http_client(server.url, **FAST)) == ReplayResult(0, 0)


def test_responses_slower_than_the_timeout_are_spooled_within_a_bounded_time(serve, settings):
    server = serve(script=lambda n, _body: Answer(200, delay=2.0))
    # 0.5 s for the attempt; the hardened transport retries no POST after a read timeout (read=0 overrides the
    # read=1 asked for here), so the event is spooled after one attempt.
    client = http_client(server.url, timeout=0.5, read=1, total=1, **FAST)
    delivery = Delivery(client, settings)
    event = run_event()

    result = delivery.emit(event)

    assert result.status == "spooled"
    assert result.error == "ConnectionError: ReadTimeoutError"
    # The client's timeout ended the wait: the server had received the event but not yet answered it.
    assert len(server.requests) == 1 and server.accepted == []
    assert [(r.run_id, r.event_type) for r in spooled_rows(settings)] == [key(Serde.to_json(event))]


def test_connection_refused_with_default_retry(settings):
    client = OpenLineageClient(transport=HttpTransport(HttpConfig(url=f"http://127.0.0.1:{free_port()}")))
    delivery = Delivery(client, settings)

    result = delivery.emit(run_event())

    assert result.status == "spooled"
    assert result.error == "ConnectionError: NewConnectionError"
    assert len(spooled_rows(settings)) == 1


def test_429_is_retried_with_a_bounded_retry_after_then_delivered(serve, settings, monkeypatch):
    # 429 without Retry-After (retried only because 429 joins status_forcelist), then a Retry-After of an hour,
    # bounded to 1 s here (RETRY_AFTER_MAX, 10 s by default), then accepted.
    monkeypatch.setattr(http_module, "RETRY_AFTER_MAX", 1)
    answers = [Answer(429), Answer(429, {"Retry-After": "3600"})]
    server = serve(script=lambda n, _body: answers[n] if n < len(answers) else Answer(200))
    delivery = Delivery(OpenLineageClient(transport=HttpTransport(HttpConfig(url=server.url))), settings)
    slept: list[float] = []
    monkeypatch.setattr(http_module, "pause", slept.append)  # the retry's waits, recorded instead of waited

    result = delivery.emit(run_event())

    assert result.status == "delivered"
    assert max(slept) == 1  # the hour the server asked for, bounded to RETRY_AFTER_MAX
    assert len(server.received) == 3 and len(server.accepted) == 1


def mounted_retry(transport: HttpTransport):
    """The urllib3 Retry our rebuilt copy of ``transport`` mounts (``configured`` wraps it in a tap)."""
    http = configured(transport).transport
    assert isinstance(http, HttpTransport) and http is not transport
    return http.session.get_adapter(http.url).max_retries


def test_retry_is_merged_into_the_users_configuration_which_stays_untouched(settings):
    default = HttpTransport(HttpConfig(url="http://127.0.0.1:1"))
    custom = HttpTransport(HttpConfig.from_dict(
        {"url": "http://127.0.0.1:1", "retry": {"total": 2, "status_forcelist": [418], "retry_after_max": 3}}
    ))
    before = [dict(t.config.retry) for t in (default, custom)]

    retry, custom_retry = mounted_retry(default), mounted_retry(custom)

    assert retry.status_forcelist == [429, 500, 502, 503, 504] and retry.retry_after_max == 10
    assert retry.total == 5 and retry.backoff_factor == 0.3
    assert custom_retry.status_forcelist == [418, 429]
    assert custom_retry.retry_after_max == 3 and custom_retry.total == 2
    assert [t.config.retry for t in (default, custom)] == before  # the client's own transports are not changed
    assert default.config.adapter is None and custom.config.adapter is None


def test_a_plain_http_transport_of_openlineage_yml_is_hardened_through_its_configuration(settings):
    config = {"type": "http", "url": "http://127.0.0.1:1", "retry": {"connect": 3}}
    http = create(configured_dict(config))
    assert isinstance(http, HttpTransport) and "adapter" not in config
    retry = http.session.get_adapter(http.url).max_retries
    assert (retry.read, retry.connect, retry.total, retry.status_forcelist) == (0, 3, 5, [429, 500, 502, 503, 504])


def test_an_event_the_server_rejects_is_kept_while_replay_goes_on(serve, settings):
    port = free_port()
    events = run_pairs(2)
    delivery = Delivery(http_client(f"http://127.0.0.1:{port}", **FAST), settings)
    assert {delivery.emit(e).status for e in events} == {"spooled"}
    poison = key(Serde.to_json(events[1]))
    server = serve(port=port, script=lambda n, body: Answer(400 if key(body) == poison else 200))

    result = replay(settings.spool.path, http_client(server.url, **FAST))

    assert result == ReplayResult(3, 1, "HTTPError: HTTP 400")
    assert [(r.run_id, r.event_type) for r in spooled_rows(settings)] == [poison]
    requests = len(server.received)
    again = delivery.emit(events[1])  # behind the poison in the spool, and the breaker is still open: not sent
    assert (again.status, len(server.received)) == ("spooled", requests)


@pytest.mark.parametrize("status", [500, 503])
def test_replay_stops_at_the_first_event_that_cannot_get_through(serve, settings, status):
    port = free_port()
    events = run_pairs(2)
    delivery = Delivery(http_client(f"http://127.0.0.1:{port}", **FAST), settings)
    for e in events:
        delivery.emit(e)
    server = serve(port=port, script=lambda n, _body: Answer(200 if n == 0 else status))

    result = replay(settings.spool.path, http_client(server.url, total=0))

    assert result == ReplayResult(1, 3, f"RetryError: too many {status} error responses")
    assert len(server.received) == 2  # the third event was not tried behind the second
    assert [(r.run_id, r.event_type) for r in spooled_rows(settings)] == [key(Serde.to_json(e)) for e in events[1:]]


def test_no_secret_reaches_the_spool_our_logs_or_results(settings, caplog):
    url = f"http://alice:pa55word@127.0.0.1:{free_port()}"
    client = OpenLineageClient(transport=HttpTransport(HttpConfig.from_dict({
        "url": url, "endpoint": "api/v1/lineage?token=t0ken", "retry": {"total": 0},
        "auth": {"type": "api_key", "apiKey": "k3y"}, "custom_headers": {"X-Secret": "h3ader"},
    })))
    delivery = Delivery(client, settings)

    with caplog.at_level(logging.DEBUG, logger="iceberg_lineage"):
        results = delivery.emit_many(run_pairs(1))

    ours = " ".join(r.getMessage() for r in caplog.records if r.name.startswith("iceberg_lineage"))
    seen = ours + " ".join(str(r) for r in results) + " ".join(r.body for r in spooled_rows(settings))
    assert ours and [r.status for r in results] == ["spooled", "spooled"]
    for secret in ("alice", "pa55word", "t0ken", "k3y", "h3ader"):
        assert secret not in seen
