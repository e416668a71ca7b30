"""Composite transports (whose swallowed failures must still spool) and the ``replay`` command end to end."""
from __future__ import annotations

from typing import Any

from click.testing import CliRunner
from tests.support.delivery import Answer, free_port, http_client, key, run_event, run_pairs
from openlineage.client import OpenLineageClient
from openlineage.client.serde import Serde

from iceberg_lineage.cli.replay import replay_command
from iceberg_lineage.delivery.delivery import Delivery, DeliveryResult, DeliveryStats
from iceberg_lineage.delivery.replay import ReplayResult, replay
from iceberg_lineage.delivery.spool import Spool
from tests.support.userstate import USER_STATE


def composite_client(urls: dict[str, str], **options: Any) -> OpenLineageClient:
    targets = {name: {"type": "http", "url": url, "retry": {"total": 0}} for name, url in urls.items()}
    return OpenLineageClient(config={"transport": {"type": "composite", "transports": targets, **options}})


def test_fan_out_composite_spools_what_one_target_missed_although_it_continued(serve, settings):
    up, port_b = serve(), free_port()
    urls = {"a": up.url, "b": f"http://127.0.0.1:{port_b}"}
    event = run_event()

    result = Delivery(composite_client(urls, continue_on_failure=True), settings).emit(event)

    assert result.status == "spooled" and result.error == "ConnectionError: NewConnectionError"
    assert [key(b) for b in up.accepted] == [key(Serde.to_json(event))]
    b = serve(port=port_b)
    assert replay(settings.spool.path, composite_client(urls, continue_on_failure=True)) == ReplayResult(1, 0)
    assert [key(x) for x in b.accepted] == [key(Serde.to_json(event))]
    assert len(up.accepted) == 2  # the duplicate repeats the runId and eventType already sent


def test_failover_composite_counts_delivery_to_the_fallback(serve, settings):
    fallback = serve()
    urls = {"primary": f"http://127.0.0.1:{free_port()}", "fallback": fallback.url}
    delivery = Delivery(composite_client(urls, continue_on_failure=True, continue_on_success=False), settings)

    assert delivery.emit(run_event()).status == "delivered"
    assert len(fallback.accepted) == 1 and delivery.stats == DeliveryStats(delivered=1)


def spool_three_runs(settings) -> list:
    events = run_pairs(3)
    delivery = Delivery(http_client(f"http://127.0.0.1:{free_port()}", total=0), settings)
    assert {r.status for r in delivery.emit_many(events)} == {"spooled"}
    delivery.close()
    return events


def test_replay_command_delivers_everything_and_exits_0(serve, settings, monkeypatch):
    events = spool_three_runs(settings)
    server = serve()
    monkeypatch.setenv("OPENLINEAGE_URL", server.url)

    result = CliRunner().invoke(replay_command, ["--spool", settings.spool.path])

    assert result.exit_code == 0, result.output
    assert "replay: 6 delivered, 0 remaining" in result.stderr and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert [key(b) for b in server.accepted] == [key(Serde.to_json(e)) for e in events]
    with Spool(settings.spool.path) as spool:
        assert spool.count() == 0


def test_replay_command_exits_1_while_events_remain(settings, monkeypatch):
    spool_three_runs(settings)
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__TYPE", "http")
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__URL", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__RETRY", '{"total": 0}')
    monkeypatch.setenv("ICEBERG_LINEAGE__SPOOL__PATH", settings.spool.path)

    result = CliRunner().invoke(replay_command, [])  # the spool.path setting

    assert result.exit_code == 1
    assert "replay: 0 delivered, 6 remaining (ConnectionError: NewConnectionError)" in result.stderr


def test_replay_command_usage_errors_exit_2(settings, monkeypatch):
    result = CliRunner().invoke(replay_command, ["--spool", "no/such/dir"])
    assert result.exit_code == 2 and "no spool directory here" in result.stderr

    spool_three_runs(settings)
    monkeypatch.setenv("OPENLINEAGE_DISABLED", "true")
    result = CliRunner().invoke(replay_command, ["--spool", settings.spool.path])
    assert result.exit_code == 2 and "disabled" in result.stderr
    with Spool(settings.spool.path) as spool:
        assert spool.count() == 6


def test_replay_command_into_the_embedded_default_file_transport(settings, tmp_path):
    spool_three_runs(settings)
    with Spool(settings.spool.path) as spool:
        bodies = [r.body for r in spool.read(0, 100)]

    result = CliRunner().invoke(replay_command, ["--spool", settings.spool.path])

    assert result.exit_code == 0, result.output
    assert "replay: 6 delivered, 0 remaining" in result.stderr
    assert (tmp_path / USER_STATE / "events.jsonl").read_text().splitlines() == bodies


def test_fail_fast_composite_spools_with_the_targets_own_error(serve, settings):
    rejecting = serve(script=lambda n, _body: Answer(400))
    urls = {"primary": rejecting.url, "fallback": serve().url}
    delivery = Delivery(composite_client(urls, continue_on_failure=False, continue_on_success=False), settings)

    result = delivery.emit(run_event())

    assert result == DeliveryResult("spooled", "HTTPError: HTTP 400", rejected=True)
    assert len(rejecting.received) == 1


def test_replay_command_with_nothing_spooled_touches_nothing(tmp_path):
    result = CliRunner().invoke(replay_command, [])

    assert result.exit_code == 0
    assert result.stderr == f"iceberg-lineage: replay: nothing spooled in {tmp_path / USER_STATE / 'spool'}\n"
    assert not (tmp_path / USER_STATE).exists()


def test_an_async_transport_is_reported_as_not_synchronous(settings):
    client = OpenLineageClient(config={"transport": {"type": "async_http", "url": f"http://127.0.0.1:{free_port()}"}})
    try:
        assert Delivery(client, settings).synchronous is False
    finally:
        client.close(timeout=1)
