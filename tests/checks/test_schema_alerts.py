"""Schema-change alerts as they happen: the hook (a metadata-only commit, and a commit with a snapshot) and the
scanner (a snapshot whose schema differs from its parent's) each give one log line, a ``<ns>.<table>.checks`` run
carrying the assertion, and with ``alerts.webhook`` a POST of the alert; the webhook receives every alert across an
outage of the endpoint, each counted once by its stable id."""
from __future__ import annotations

import json
import logging

import pytest
from pyiceberg.types import LongType, StringType

from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.webhook import Webhook
from iceberg_lineage.quality.alerts import alert_id
from iceberg_lineage.scan.driver import ScanOptions, scan
from iceberg_lineage.state.store import StateStore
from tests.support.checks import new_table, rows
from tests.support.hook import Collector
from tests.support.lineage_server import Answer, LineageServer, free_port
from tests.support.olschema import validate_event
from tests.support.scan import Recorder, spec_of


def _alert_settings(tmp_path, url: str, **more) -> Settings:
    return Settings().updated({"spool.path": str(tmp_path / "spool"), "alerts.webhook": url, "alerts.webhook_retries": 0,
                               "alerts.webhook_timeout_s": 0.5, "delivery.breaker_cooldown_s": 0, **more})


def _alerts(n: int):
    from iceberg_lineage.quality.evaluate import schema_assertions
    from iceberg_lineage.quality.rules import make_rule
    from iceberg_lineage.quality.alerts import schema_alerts
    from iceberg_lineage.read.metadata import Field, Schema

    old = Schema(0, (Field(1, "id", "long"),))
    new = Schema(1, (Field(1, "id", "long"), *(Field(10 + i, f"c{i}", "string") for i in range(n))))
    assertions = schema_assertions(make_rule("schema", {}), old, new)
    return schema_alerts(assertions, table="db.t", table_uuid="u-1", schemas=[new], snapshot_id=7, engine="spark",
                         app="app-1")


def test_alert_fields_text_and_stable_id():
    [alert] = _alerts(1)
    assert alert.text == "schema alert: db.t: field c0 (string) added at snapshot 7 by spark app-1"
    assert alert.id == alert_id("u-1", 1, "added", 10) == _alerts(1)[0].id
    body = alert.as_json()
    assert {k: body[k] for k in ("id", "text", "table", "change", "field", "field_id", "type", "severity")} == {
        "id": alert.id, "text": alert.text, "table": "db.t", "change": "added", "field": "c0", "field_id": 10,
        "type": "string", "severity": "warn"}


def test_webhook_receives_every_alert_across_an_outage(tmp_path, caplog):
    port = free_port()  # nothing listens yet: the endpoint is down
    first, second, third, fourth = _alerts(4)
    url = f"http://127.0.0.1:{port}/hooks/T000/B000/secret-token"
    webhook = Webhook(_alert_settings(tmp_path, url))
    assert webhook.send([first, second]) == ["spooled", "spooled"]
    slow = {"n": 0}

    def script(n: int, _body: bytes) -> Answer:  # the endpoint is back; its first answer comes too late
        slow["n"] = n
        return Answer(delay=1.0) if n == 0 else Answer()

    with LineageServer(port=port, script=script) as receiver:
        assert webhook.send([third]) == ["spooled"]  # the first waiting alert timed out: all wait again
        assert webhook.send([fourth]) == ["delivered"]
        receiver.wait_idle()
        bodies = receiver.events()
        paths = [r.path for r in receiver.requests]
    ids = [b["id"] for b in bodies]
    assert set(ids) == {a.id for a in (first, second, third, fourth)}
    assert len(ids) == 5 and ids.count(first.id) == 2  # the late answer: a duplicate, dropped by id
    assert list(dict.fromkeys(ids)) == [first.id, second.id, third.id, fourth.id]  # in order
    assert bodies[-1] == fourth.as_json()
    assert webhook.flush() == 0
    assert paths == ["/hooks/T000/B000/secret-token"] * 5
    spooled = [r.getMessage() for r in caplog.records if "not delivered to the webhook" in r.getMessage()]
    assert len(spooled) == 3 and not any("secret-token" in r.getMessage() for r in caplog.records)


@pytest.fixture
def receiver():
    with LineageServer() as server:
        yield server


def test_hook_alerts_on_a_metadata_only_commit_and_a_snapshot(sql_catalog, tmp_path, monkeypatch, receiver, caplog):
    from iceberg_lineage.hook import observe

    monkeypatch.setenv("ICEBERG_LINEAGE__ALERTS__WEBHOOK", receiver.url)
    monkeypatch.setenv("ICEBERG_LINEAGE__SPOOL__PATH", str(tmp_path / "spool"))
    monkeypatch.setenv("ICEBERG_LINEAGE__STATE__PATH", str(tmp_path / "state.db"))
    collector = Collector()
    catalog = observe(sql_catalog, client=collector.client)
    table = new_table(catalog, "orders")
    table.append(rows(0, 2))
    with table.update_schema() as update:  # metadata-only: alerted at its metadata version
        update.add_column("discount", StringType())
    with table.transaction() as tx:  # the promotion and an append in one commit: alerted at the snapshot
        with tx.update_schema() as update:
            update.update_column("id", LongType())
        tx.append(_promoted_rows(tx.table_metadata))
    caplog.set_level(logging.WARNING, "iceberg_lineage.alerts")
    events = collector.events()
    runs = [e for e in events if e["job"]["name"] == "db.orders.checks"]
    assert [e["eventType"] for e in runs] == ["START", "COMPLETE"] * 2  # each checks run has its START
    checks = runs[1::2]
    for e in runs:
        validate_event(e)
    got = [a for e in checks for a in e["inputs"][0]["inputFacets"]["dataQualityAssertions"]["assertions"]]
    assert [(a["name"], a["actual"], a["severity"]) for a in got] == [
        ("schema.added", "field discount (string) added", "warn"),
        ("schema.promoted", "field id promoted from int to long", "warn")]
    receiver.wait_idle()
    alerts = receiver.events()
    md = table.metadata
    assert [a["id"] for a in alerts] == [alert_id(str(md.table_uuid), 1, "added", 4),
                                         alert_id(str(md.table_uuid), 2, "promoted", 1)]
    assert alerts[0]["text"].startswith("schema alert: db.orders: field discount (string) added at metadata version ")
    assert alerts[0]["text"].endswith(".metadata.json by pyiceberg")
    assert alerts[1]["text"] == (f"schema alert: db.orders: field id promoted from int to long at snapshot "
                                 f"{md.current_snapshot_id} by pyiceberg")
    assert [r.getMessage() for r in caplog.records if r.name == "iceberg_lineage.alerts"] == [a["text"] for a in alerts]
    others = [e for e in events if e["job"]["name"] != "db.orders.checks"]
    assert not any("dataQualityAssertions" in json.dumps(e) for e in others)  # the other events are unchanged
    with LineageServer() as second:  # the scanner sees both changes at the snapshot: the same two ids
        with StateStore(tmp_path / "scan-state.db") as state:
            scan(ScanOptions(catalogs=(spec_of(sql_catalog),)), _alert_settings(tmp_path / "s", second.url), state,
                 Recorder())
        second.wait_idle()
        assert sorted(a["id"] for a in second.events()) == sorted(a["id"] for a in alerts)


def _promoted_rows(metadata):
    import pyarrow as pa

    schema = metadata.schema().as_arrow()
    return pa.Table.from_pylist([{"id": 7, "customer_id": "c", "amount": 1.0, "discount": None}], schema=schema)


def test_scanner_alerts_once_per_changed_snapshot(sql_catalog, tmp_path, receiver, caplog):
    table = new_table(sql_catalog, "orders")
    table.append(rows(0, 2))
    with table.update_schema() as update:
        update.add_column("discount", StringType())
    table.append(_promoted_rows(table.metadata))
    with table.update_schema() as update:
        update.rename_column("customer_id", "customer")
    caplog.set_level(logging.WARNING, "iceberg_lineage.alerts")
    settings = _alert_settings(tmp_path, receiver.url)
    sink = Recorder()
    with StateStore(tmp_path / "state.db") as state:
        scan(ScanOptions(catalogs=(spec_of(sql_catalog),)), settings, state, sink)
        events = sink.parsed
        scan(ScanOptions(catalogs=(spec_of(sql_catalog),)), settings, state, Recorder())  # nothing new: no alert
    runs = [e for e in events if e["job"]["name"] == "db.orders.checks"]
    # two snapshot runs, and the second snapshot's checks run (each START and COMPLETE)
    assert len(events) == 2 * 2 + 2 and [e["eventType"] for e in runs] == ["START", "COMPLETE"]
    assert runs[0]["run"]["runId"] == runs[1]["run"]["runId"] and runs[0]["eventTime"] == runs[1]["eventTime"]
    checks = runs[1:]
    validate_event(runs[0])
    validate_event(checks[0])
    assert checks[0]["inputs"][0]["facets"]["version"]["datasetVersion"] == str(table.metadata.current_snapshot_id)
    receiver.wait_idle()
    [alert] = receiver.events()  # the rename has no snapshot yet: the scanner sees it with the next one
    assert alert["id"] == alert_id(str(table.metadata.table_uuid), 1, "added", 4)
    assert alert["text"] == (f"schema alert: db.orders: field discount (string) added at snapshot "
                             f"{table.metadata.current_snapshot_id}")
    assert [r.getMessage() for r in caplog.records if r.name == "iceberg_lineage.alerts"] == [alert["text"]]


def test_replay_sends_the_alerts_that_wait_for_the_webhook(tmp_path):
    """`iceberg-lineage replay` also empties the alert spool, in order, once the endpoint is back."""
    from click.testing import CliRunner

    from iceberg_lineage.cli import main
    from iceberg_lineage.delivery import webhook as webhook_module

    port = free_port()
    url = f"http://127.0.0.1:{port}/hooks/secret-token"
    alerts = _alerts(2)
    assert Webhook(_alert_settings(tmp_path, url)).send(alerts) == ["spooled", "spooled"]
    env = {"ICEBERG_LINEAGE__SPOOL__PATH": str(tmp_path / "spool"), "ICEBERG_LINEAGE__ALERTS__WEBHOOK": url,
           "OPENLINEAGE__TRANSPORT__TYPE": "console"}
    webhook_module._webhooks.clear()
    down = CliRunner().invoke(main, ["replay"], env=env)
    assert down.exit_code == 1 and "schema alerts: 0 delivered, 2 remaining" in down.output
    assert "secret-token" not in down.output
    webhook_module._webhooks.clear()  # a new process: the breaker of the failed try is forgotten
    with LineageServer(port=port) as receiver:
        up = CliRunner().invoke(main, ["replay"], env=env)
        receiver.wait_idle()
        ids = [b["id"] for b in receiver.events()]
    assert up.exit_code == 0 and "schema alerts: 2 delivered, 0 remaining" in up.output
    assert ids == [a.id for a in alerts]
