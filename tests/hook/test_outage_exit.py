"""While the lineage endpoint is down, a hooked script does not wait on it (issue 28): the first failure opens the
breaker, after which no connection is tried, every later event goes to the spool (never dropped), and the exit
flush neither backs off between retries nor loses the event in flight. Connection attempts are counted at a real
local socket; the added exit time is measured by ``benchmarks/hook_outage.py``, not here."""
from __future__ import annotations

import json
import threading
import time

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from tests.support.delivery import http_client, run_event
from tests.support.hook import SCHEMA, rows, valid
from tests.support.hooked_script import hooked_env, run_hooked
from tests.support.lineage_server import free_port
from tests.support.slow_endpoints import ClosingEndpoint, DrippingEndpoint

from iceberg_lineage.config import Settings, load_settings
from iceberg_lineage.delivery.breaker import exit_deadline
from iceberg_lineage.delivery.delivery import Delivery
from iceberg_lineage.delivery.emitter import EMITTERS
from iceberg_lineage.delivery.spool import Spool
from iceberg_lineage.hook import reporter as hook
from iceberg_lineage.lineage.events import snapshot_run_id

COMMITS = 5


def spooled(path) -> list[dict]:
    with Spool(path) as spool:
        return [{"run": row.run_id, "type": row.event_type, "body": row.body} for row in spool.read(0, 10_000)]


def snapshot_runs(catalog, identifier: str = "db.t") -> list[str]:
    """The runIds the scanner (and the hook) give the table's snapshots, computed from the table's metadata."""
    table = catalog.load_table(identifier)
    return [str(snapshot_run_id(str(table.metadata.table_uuid), s.snapshot_id, s.timestamp_ms))
            for s in table.metadata.snapshots]


def assert_all_spooled(waiting: list[dict], runs: list[str]) -> None:
    """The table's creation (a run of its own) and each commit's START and COMPLETE, in order, none missing."""
    assert len(waiting) == 2 + 2 * len(runs) == 2 + 2 * COMMITS
    assert [(w["run"], w["type"]) for w in waiting[2:]] == [(r, kind) for r in runs for kind in ("START", "COMPLETE")]
    assert [w["type"] for w in waiting[:2]] == ["START", "COMPLETE"] and waiting[0]["run"] == waiting[1]["run"]
    valid([json.loads(w["body"]) for w in waiting])


def test_once_the_breaker_opens_no_connection_is_tried_and_the_rest_is_spooled(sql_catalog, tmp_path, monkeypatch):
    monkeypatch.setenv("ICEBERG_LINEAGE__SPOOL__PATH", str(tmp_path / "spool"))
    with ClosingEndpoint() as endpoint:
        client = http_client(endpoint.url)
        hook.observe(sql_catalog, client=client)
        table = sql_catalog.create_table("db.t", SCHEMA)
        for n in range(COMMITS):
            table.append(rows(n))
        assert EMITTERS.flush_all()

    delivery = EMITTERS.emitter_for(client, load_settings()).exporter
    # the first event's one try (a dropped connection is not retried); 11 events later, still that one
    assert endpoint.connections == 1
    assert delivery._client.transport.why_not_sending() == "ConnectionError: ProtocolError"  # the breaker is open
    assert_all_spooled(spooled(tmp_path / "spool"), snapshot_runs(sql_catalog))


def lake(root) -> SqlCatalog:
    return SqlCatalog("lake", uri=f"sqlite:///{root}/lake.db", warehouse=f"file://{root}/warehouse")


@pytest.mark.parametrize("down", ["accept-and-close", "refused"])
def test_a_hooked_script_exits_with_every_event_spooled(tmp_path, down):
    endpoint = ClosingEndpoint() if down == "accept-and-close" else None
    url = endpoint.url if endpoint else f"http://127.0.0.1:{free_port()}"
    try:
        done = run_hooked(tmp_path, COMMITS, hooked_env(tmp_path, url=url))
    finally:
        if endpoint:
            endpoint.stop()

    assert done.returncode == 0, done.stderr
    assert_all_spooled(spooled(tmp_path / "spool"), snapshot_runs(lake(tmp_path)))
    if endpoint:
        assert endpoint.connections == 1
    # one line for the outage, not one per event
    assert done.stderr.count("OpenLineage event not delivered") == 1, done.stderr


def test_the_exit_flush_cuts_a_dripping_request_and_spools_its_event(tmp_path):
    with DrippingEndpoint() as endpoint:
        env = hooked_env(tmp_path, url=endpoint.url, delivery__request_deadline_s="600")
        done = run_hooked(tmp_path, COMMITS, env)

    assert done.returncode == 0, done.stderr
    waiting = spooled(tmp_path / "spool")
    # before: what the worker held when the exit flush gave up was lost (10 of 12 spooled)
    assert_all_spooled(waiting, snapshot_runs(lake(tmp_path)))
    [sent] = [json.loads(body) for body in endpoint.bodies]
    assert (sent["run"]["runId"], sent["eventType"]) == (waiting[0]["run"], waiting[0]["type"])  # cut, then kept


def test_once_the_process_exits_a_retry_no_longer_backs_off(tmp_path):
    # a backoff of 2,000 s, then 4,000 s... between the connect retries to a refused port
    delivery = Delivery(http_client(f"http://127.0.0.1:{free_port()}", backoff_factor=1000),
                        Settings().updated({"spool.path": str(tmp_path / "spool"), "delivery.request_deadline_s": 600}))
    event, results = run_event(), []
    sending = threading.Thread(target=lambda: results.append(delivery.emit(event)), daemon=True)
    exit_deadline(time.monotonic() + 600)  # what the exit flush does
    try:
        sending.start()
        sending.join(120)  # a guard against a hang, not a measurement
    finally:
        exit_deadline(None)

    # before: the send slept through its backoff, holding the exit until the flush gave up and lost the event
    assert not sending.is_alive()
    assert [(r.status, r.error) for r in results] == [("spooled", "ConnectionError: NewConnectionError")]
    assert [w["run"] for w in spooled(tmp_path / "spool")] == [str(event.run.runId)]
