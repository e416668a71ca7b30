"""Delivery through openlineage-python's own transports: a real HttpTransport to a local HTTP server, file
transports, the embedded JSON Lines default, and OPENLINEAGE_DISABLED."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.lineage_server import Answer, LineageServer
from openlineage.client.transport.http import HttpTransport

import iceberg_lineage.delivery.client as client_module
from tests.support.fixture_tables import fixture_table
from tests.support.olschema import validate_event
from iceberg_lineage.delivery.client import describe_transport, make_client
from iceberg_lineage.config import Settings
from iceberg_lineage.lineage.events import history_events
from iceberg_lineage.lineage.serde import to_json
from iceberg_lineage.stats import table_history
from tests.support.userstate import USER_STATE


@pytest.fixture
def events():
    table = fixture_table("impala_hive_pos_deletes_6snaps")
    return history_events(table, table_history(table), Settings())


@pytest.fixture(autouse=True)
def _fresh_announcement(monkeypatch):
    monkeypatch.setattr(client_module, "_announced", False)


def _same_apart_from_client_facets(received: dict, sent: dict) -> None:
    """The client may add run and job facets (tags, environment); everything we sent must arrive unchanged."""
    for part in ("run", "job"):
        extra = set(received[part].get("facets", {})) - set(sent[part].get("facets", {}))
        for key in extra:
            del received[part]["facets"][key]
    assert received == sent


@pytest.fixture
def lineage_server():
    with LineageServer(script=lambda _n, _body: Answer(201)) as server:
        yield server


def test_http_transport_delivers_what_was_sent(events, lineage_server, monkeypatch, capsys):
    url = lineage_server.url
    monkeypatch.setenv("OPENLINEAGE_URL", url)
    client = make_client()
    assert isinstance(client.transport, HttpTransport)
    assert describe_transport(client) == f"http {url}"
    sent = [json.loads(to_json(e)) for e in events]
    for event in events:
        client.emit(event)
    client.close()
    assert [r.path for r in lineage_server.requests] == ["/api/v1/lineage"] * len(sent)
    for got, expected in zip(lineage_server.events(), sent):
        validate_event(got)
        _same_apart_from_client_facets(got, expected)
    assert "no OpenLineage transport configured" not in capsys.readouterr().err


def test_default_is_a_json_lines_file_announced_once(events, capsys):
    client = make_client()
    sent = [json.loads(to_json(e)) for e in events]
    for event in events:
        client.emit(event)
    make_client().emit(events[0])  # a second client appends, and says nothing more
    lines = (USER_STATE / "events.jsonl").read_text().splitlines()
    assert len(lines) == len(sent) + 1
    for line, expected in zip(lines, sent):
        got = json.loads(line)
        validate_event(got)
        _same_apart_from_client_facets(got, expected)
    err = capsys.readouterr().err
    assert err.count("no OpenLineage transport configured") == 1
    assert describe_transport(client) == f"file {Path.cwd() / USER_STATE / 'events.jsonl'}"


def test_openlineage_env_config_wins_over_default(events, tmp_path, monkeypatch, capsys):
    target = tmp_path / "ol.jsonl"
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__TYPE", "file")
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__LOG_FILE_PATH", str(target))
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__APPEND", "true")
    client = make_client()
    for event in events:
        client.emit(event)
    assert len(target.read_text().splitlines()) == len(events)
    assert not USER_STATE.exists()
    assert capsys.readouterr().err == ""


def test_openlineage_yml_in_cwd_wins_over_default(events, tmp_path):
    target = tmp_path / "yml.jsonl"
    Path("openlineage.yml").write_text(f"transport:\n  type: file\n  log_file_path: {target}\n  append: true\n")
    make_client().emit(events[0])
    assert len(target.read_text().splitlines()) == 1
    assert not USER_STATE.exists()


def test_disabled_sends_nothing(events, monkeypatch, capsys):
    monkeypatch.setenv("OPENLINEAGE_DISABLED", "true")
    client = make_client()
    client.emit(events[0])
    assert not USER_STATE.exists()
    assert describe_transport(client).startswith("nowhere")
    assert capsys.readouterr().err == ""
