"""An endpoint that drips its answer, one byte a second (issue 31 item 6a): a socket read timeout restarts with each
byte, so only a bound on each request's whole time ends it. Every flow must end, and what did not go out must be in
the spool: ``run --`` (whose command starts without waiting for its START), ``scan`` within
``scan.delivery_deadline_s``, ``events --emit`` within ``delivery.request_deadline_s``, and the alert webhook. The
checks are what ended and what the spool holds (counted, runIds compared), never how long it took; the subprocesses'
own timeout only keeps a regression from hanging the suite."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from openlineage.client.serde import Serde
from tests.support.delivery import http_client, key, run_pairs
from tests.support.fixture_tables import FIXTURES, fixture_relocation
from tests.support.olschema import validate_event
from tests.support.scan import catalog_env, cli, write_table
from tests.support.slow_endpoints import DRIP_BODY, DRIP_HEAD, DrippingEndpoint

from iceberg_lineage.cli import main
from iceberg_lineage.delivery.breaker import send_deadline
from iceberg_lineage.delivery.delivery import Delivery
from iceberg_lineage.delivery.spool import Spool
from iceberg_lineage.delivery.webhook import ALERTS_DIR, Webhook
from iceberg_lineage.quality.alerts import Alert

#: Far longer than any test: what drips would hold a flow this long without a bound on the request's whole time.
HANG_GUARD_S = 180
DV = "impala_spark_v3_deletion_vectors"


@pytest.fixture
def dripping():
    endpoints: list[DrippingEndpoint] = []

    def start(**kwargs) -> DrippingEndpoint:
        endpoints.append(DrippingEndpoint(**kwargs))
        return endpoints[-1]

    yield start
    for endpoint in endpoints:
        endpoint.stop()


def spooled(path: Path | str) -> list[tuple[str, str]]:
    with Spool(path) as spool:
        return [(row.run_id, row.event_type) for row in spool.read(0, 10_000)]


def spooled_bodies(path: Path | str) -> list[dict]:
    with Spool(path) as spool:
        return [json.loads(row.body) for row in spool.read(0, 10_000)]


def dripping_env(endpoint: DrippingEndpoint, spool: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENLINEAGE", "ICEBERG_LINEAGE"))}
    env.update({"OPENLINEAGE__TRANSPORT__TYPE": "http", "OPENLINEAGE__TRANSPORT__URL": endpoint.url,
                "OPENLINEAGE__TRANSPORT__TIMEOUT": "5", "ICEBERG_LINEAGE__SPOOL__PATH": str(spool)})
    env.update({f"ICEBERG_LINEAGE__{name.upper()}": value for name, value in settings.items()})
    return env


@pytest.mark.parametrize("answer", [DRIP_HEAD, DRIP_BODY + b"x" * 1000], ids=["headers", "body"])
def test_a_dripping_answer_is_cut_at_the_request_deadline_and_the_batch_spooled(dripping, settings, answer):
    endpoint = dripping(answer=answer)
    delivery = Delivery(http_client(endpoint.url, timeout=5), settings.updated({"delivery.request_deadline_s": 2}))
    events = run_pairs(2)

    results = delivery.emit_many(events)

    # before: emit_many never returned (each byte restarted the 5 s read timeout)
    assert [r.status for r in results] == ["spooled"] * 4
    assert results[0].error == "DeadlineExceeded: no complete answer within 2.0 s"
    assert spooled(settings.spool.path) == [key(Serde.to_json(e)) for e in events]
    assert endpoint.connections == 1 and [key(b) for b in endpoint.bodies] == [key(Serde.to_json(events[0]))]


def test_a_request_in_flight_is_cut_at_the_callers_send_deadline(dripping, settings):
    import time

    endpoint = dripping()
    delivery = Delivery(http_client(endpoint.url, timeout=5), settings.updated({"delivery.request_deadline_s": 600}))
    [event] = run_pairs(1)[:1]

    with send_deadline(time.monotonic() + 2):
        result = delivery.emit(event)

    assert result.status == "spooled" and result.error.startswith("DeadlineExceeded: no complete answer within")
    assert spooled(settings.spool.path) == [key(Serde.to_json(event))] and len(endpoint.bodies) == 1


def test_run_starts_the_command_while_its_start_drips_and_spools_both_events(dripping, tmp_path):
    marker = tmp_path / "etl-ran"
    endpoint = dripping(while_dripping=marker.exists)
    (tmp_path / "etl.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    spool = tmp_path / "spool"
    env = dripping_env(endpoint, spool, delivery__request_deadline_s="3")

    done = subprocess.run([sys.executable, "-m", "iceberg_lineage.cli", "run", "--", sys.executable, "etl.py"],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=HANG_GUARD_S)

    assert done.returncode == 0, done.stderr
    # before: the command started only once the START was answered, which never happened
    assert marker.read_text() == "ran" and endpoint.seen  # the marker was there while the START still dripped
    events = spooled_bodies(spool)
    for event in events:
        validate_event(event)
    [(run_id, sent)] = [key(b) for b in endpoint.bodies]  # the START reached the endpoint, which never answered
    assert sent == "START"
    assert [(e["run"]["runId"], e["eventType"]) for e in events] == [(run_id, "START"), (run_id, "COMPLETE")]
    assert endpoint.connections == 1  # the COMPLETE waited behind the START in the spool, untried


def test_a_scan_ends_at_its_delivery_deadline_with_every_event_spooled(dripping, sql_catalog, tmp_path):
    write_table(sql_catalog, "db.orders", 2)
    endpoint = dripping()
    spool = tmp_path / "spool"
    env = {**dripping_env(endpoint, spool, scan__delivery_deadline_s="3", delivery__request_deadline_s="600"),
           **catalog_env(sql_catalog), "ICEBERG_LINEAGE__STATE__PATH": str(tmp_path / "state.db")}

    done = cli("--format", "json", "--no-progress", env=env, cwd=tmp_path)

    assert done.returncode in (0, 3), done.stderr  # 3 once "events wait in the spool" has its exit code
    assert json.loads(done.stderr.strip().splitlines()[-1])["delivery"]["deadline_passed"] is True
    printed = subprocess.run([sys.executable, "-m", "iceberg_lineage.cli", "events", "--catalog", "test", "--table",
                              "db.orders", "--all-snapshots"], env=env, cwd=tmp_path, capture_output=True, text=True,
                             timeout=HANG_GUARD_S)
    expected = [key(line) for line in printed.stdout.splitlines()]
    waiting = spooled_bodies(spool)
    own = [(e["run"]["runId"], e["eventType"]) for e in waiting if e["job"]["name"] == "iceberg-lineage.scan"]
    # before: the scan's first event dripped on, past any deadline, and nothing was spooled
    assert len(expected) == 4 and [key(json.dumps(e)) for e in waiting if e["job"]["name"] != "iceberg-lineage.scan"] \
        == expected  # both snapshots' START and COMPLETE, in order
    assert [kind for _, kind in own] == ["START", "COMPLETE"] and own[0][0] == own[1][0]
    assert [key(b) for b in endpoint.bodies] == own[:1]  # the scan's START, cut in flight at the deadline, was kept


def printed_events(*relocate: str) -> list[dict]:
    result = CliRunner().invoke(main, ["events", "--metadata", str(FIXTURES / DV), "--all-snapshots", *relocate])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def test_events_emit_ends_and_spools_what_events_prints(dripping, tmp_path):
    endpoint = dripping()
    spool = tmp_path / "spool"
    relocate = [a for old, new in fixture_relocation(DV).items() for a in ("--relocate", f"{old}={new}")]
    env = dripping_env(endpoint, spool, delivery__request_deadline_s="3")

    done = subprocess.run([sys.executable, "-m", "iceberg_lineage.cli", "events", "--metadata", str(FIXTURES / DV),
                           "--all-snapshots", "--emit", *relocate], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=HANG_GUARD_S)

    assert done.returncode != 0 and "0 of 4 event(s) delivered" in done.stderr, done.stderr
    expected = [(e["run"]["runId"], e["eventType"]) for e in printed_events(*relocate)]
    assert len(expected) == 4 and spooled(spool) == expected
    assert [key(b) for b in endpoint.bodies] == expected[:1]


def test_the_alert_webhook_ends_at_its_timeout_and_keeps_the_alerts(dripping, settings):
    endpoint = dripping()
    webhook = Webhook(settings.updated({"alerts.webhook": endpoint.url, "alerts.webhook_retries": 0,
                                        "alerts.webhook_timeout_s": 2}))
    alerts = [Alert(id=f"a{n}", table="db.t", table_uuid="u", rule="schema.drop", change="drop", severity="error",
                    field_id=n, field=f"c{n}", type="int", old_name=None, old_type=None, schema_id=1,
                    snapshot_id=None, metadata_version=None, engine=None, app=None, text=f"db.t: column c{n} dropped")
              for n in (1, 2)]

    statuses = webhook.send(alerts)

    assert statuses == ["spooled", "spooled"]
    with Spool(Path(settings.spool.path) / ALERTS_DIR) as spool:
        rows = spool.read(0, 10)
    assert [json.loads(r.body)["id"] for r in rows] == ["a1", "a2"]
    assert rows[0].last_error == "DeadlineExceeded: no complete answer within 2.0 s"
    assert [json.loads(b)["id"] for b in endpoint.bodies] == ["a1"]  # the breaker kept the second untried
