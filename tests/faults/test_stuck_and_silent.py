"""A scan against a lineage server that never answers, and a table whose task never ends: the scan keeps to its
delivery deadline and its per-table time limit, spools what it could not send, and exits."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from tests.support.delivery import FAST, Answer, LineageServer, http_client, key
from tests.support.faults import SCAN_CLI, configure_catalogs, small_rows, write_tables
from tests.support.scan import spec_of

from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.delivery import Delivery
from iceberg_lineage.delivery.replay import ReplayResult, replay
from iceberg_lineage.delivery.spool import Spool
from iceberg_lineage.scan.driver import ScanOptions, scan
from iceberg_lineage.scan.sinks import delivery_sink
from iceberg_lineage.state.store import StateStore

REPO = Path(__file__).resolve().parents[2]


def test_a_silent_server_costs_the_scan_its_deadline_then_replay_delivers_every_event_once(
        sql_catalog, state_path, tmp_path):
    write_tables(sql_catalog, 3, 2)  # 3 tables, 2 snapshots each: 6 events
    # no breaker cool-down: each table's batch tries the server once, until the 0.5 s deadline is spent
    settings = Settings().updated({"spool.path": str(tmp_path / "spool"), "scan.delivery_deadline_s": 0.5,
                                   "delivery.breaker_cooldown_s": 0})
    with LineageServer(script=lambda n, _body: Answer(200, delay=3600)) as silent:
        delivery = Delivery(http_client(silent.url, timeout=0.3, **FAST), settings)
        with StateStore(state_path) as state:
            summary = scan(ScanOptions(catalogs=(spec_of(sql_catalog),), workers=1), settings, state,
                           delivery_sink(delivery))
        posted = len(silent.received)

    # before: 6 events x 6 attempts of the 0.3 s timeout (~11 s here, 471 s for 12 with the defaults); now 2 POSTs
    assert posted == 2  # tables 1 and 2 tried once each; table 3 came after the deadline
    assert summary.delivery.deadline_passed and summary.to_json()["delivery"]["deadline_s"] == 0.5
    # six runs, START and COMPLETE each
    assert summary.exit_code == 3 and summary.snapshots_emitted == 6 and delivery.stats.spooled == 12
    with Spool(settings.spool.path) as spool:
        spooled = [(r.run_id, r.event_type) for r in spool.read(0, 100)]
    assert len(set(spooled)) == 12

    with LineageServer() as good:
        assert replay(settings.spool.path, http_client(good.url, **FAST)) == ReplayResult(12, 0)
        assert Counter(key(b) for b in good.accepted) == Counter({k: 1 for k in spooled})


def test_a_stuck_table_is_reported_and_the_scan_delivers_the_others_and_exits(sql_catalog, state_path, tmp_path):
    write_tables(sql_catalog, 2, 2)
    sql_catalog.create_table("db.stuck", schema=small_rows(0).schema).append(small_rows(0))
    catalog = {"py-catalog-impl": "tests.faults.stuck_catalog.StuckCatalog", **sql_catalog.properties}
    with LineageServer() as server:
        env = {**os.environ, **configure_catalogs(tmp_path / "home", {"test": catalog}),
               "PYTHONPATH": str(REPO), "OPENLINEAGE_URL": server.url,
               "ICEBERG_LINEAGE__SCAN__TABLE_TIMEOUT_S": "1", "ICEBERG_LINEAGE__SPOOL__PATH": str(tmp_path / "spool")}
        # before: no time limit, the scan waited for the stuck load_table (an hour here, forever in the field)
        done = subprocess.run([sys.executable, "-c", SCAN_CLI, "--format", "json", "--no-progress",
                               "--state", str(state_path)], env=env, capture_output=True, text=True, timeout=120)
        accepted = server.accepted_events()

    assert done.returncode == 1, done.stderr
    summary = json.loads(done.stderr.strip().splitlines()[-1])
    assert summary["tables"] == {"scanned": 3, "unchanged": 0, "updated": 2, "failed": 1}
    [failure] = summary["failures"]
    assert (failure["table"], failure["kind"]) == ("db.stuck", "timeout")
    assert failure["reason"] == ("no result after 1 s (scan.table_timeout_s): the table's task was abandoned, "
                                 "nothing of it is recorded")
    scanner = [e["eventType"] for e in accepted if e["job"]["name"] == "iceberg-lineage.scan"]
    accepted = [e for e in accepted if e["job"]["name"] != "iceberg-lineage.scan"]
    assert scanner == ["START", "FAIL"]  # the scan's own run: it exits 1
    assert len(accepted) == 2 * 4 and {e["job"]["name"].split(".")[1] for e in accepted} == {"t0000", "t0001"}
    assert "Traceback" not in done.stderr
