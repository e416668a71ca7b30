"""What the lineage endpoint answers, through openlineage-python's HTTP transport with our session (issue 31 items 5
and 6): a redirect that would resend the POST as a GET is not followed (the event is spooled, one line names the
status and the target's scheme and host), 307/308 are followed with the body, and no answer is read past 64 KiB."""
from __future__ import annotations

import dataclasses
import json
import logging

import pytest
from openlineage.client.serde import Serde
from tests.support.delivery import Answer, http_client, key, run_event

from iceberg_lineage.delivery.delivery import Delivery
from iceberg_lineage.delivery.http import MAX_ANSWER_BYTES, LineageSession
from iceberg_lineage.delivery.spool import Spool
from iceberg_lineage.delivery.webhook import Webhook
from iceberg_lineage.quality.alerts import Alert


@pytest.mark.parametrize("status", [301, 302, 303])
def test_a_method_changing_redirect_is_not_followed_and_the_event_is_spooled(serve, settings, status, caplog):
    target = serve()
    elsewhere = f"{target.url}/moved/here?token=s3cret"
    server = serve(script=lambda n, _body: Answer(status, {"Location": elsewhere}))
    delivery = Delivery(http_client(server.url), settings)
    event = run_event()

    with caplog.at_level(logging.WARNING, logger="iceberg_lineage"):
        result = delivery.emit(event)

    host = target.url.split("//")[1]
    assert (result.status, result.error) == ("spooled", f"RedirectRefused: HTTP {status} redirect to "
                                                        f"http://{host} not followed")
    assert target.gets == [] and target.received == [] and len(server.received) == 1  # no GET, nothing lost
    with Spool(settings.spool.path) as spool:
        [row] = spool.read()
    assert key(row.body) == key(Serde.to_json(event))
    logged = [r.getMessage() for r in caplog.records if r.name.startswith("iceberg_lineage")]
    assert len(logged) == 1 and f"HTTP {status} redirect to http://{host}" in logged[0]
    assert "s3cret" not in logged[0] and "/moved" not in logged[0]


@pytest.mark.parametrize("status", [307, 308])
def test_a_redirect_that_keeps_the_method_is_followed_with_the_body(serve, settings, status):
    target = serve()
    server = serve(script=lambda n, _body: Answer(status, {"Location": f"{target.url}/api/v1/lineage"}))
    event = run_event()

    result = Delivery(http_client(server.url), settings).emit(event)

    assert result.status == "delivered"
    assert [key(b) for b in target.accepted] == [key(Serde.to_json(event))]


def test_no_more_than_64_kib_of_an_answer_is_read(serve):
    big = serve(script=lambda n, _body: Answer(200, body=b"x" * (8 * 1024 * 1024)))
    with LineageSession() as session:
        answer = session.post(big.url, data=b"{}", timeout=10)
    assert len(answer.content) == MAX_ANSWER_BYTES == 65_536


def test_an_endless_answer_does_not_stop_delivery(serve, settings):
    endless = serve(script=lambda n, _body: Answer(200, body=b"y" * 65_536, endless=True))
    events = [run_event(), run_event()]

    results = Delivery(http_client(endless.url), settings).emit_many(events)

    assert [r.status for r in results] == ["delivered", "delivered"]
    assert [key(b) for b in endless.accepted] == [key(Serde.to_json(e)) for e in events]


def test_the_alert_webhook_refuses_a_302_and_keeps_the_alert(serve, settings):
    target = serve()
    hook = serve(script=lambda n, _body: Answer(302, {"Location": f"{target.url}/elsewhere"}))
    alert = Alert(id="a1", table="db.t", table_uuid="u", rule="schema.drop", change="drop", severity="error",
                  field_id=3, field="c", type="int", old_name=None, old_type=None, schema_id=1, snapshot_id=None,
                  metadata_version=None, engine=None, app=None, text="db.t: column c dropped")
    webhook = Webhook(settings.updated({"alerts.webhook": hook.url, "alerts.webhook_retries": 0}))

    assert webhook.send([alert]) == ["spooled"]
    assert target.gets == [] and len(hook.received) == 1
    with Spool(webhook.spool_path) as spool:
        [row] = spool.read()
    assert json.loads(row.body)["id"] == "a1" and row.last_error.startswith("RedirectRefused: HTTP 302")
