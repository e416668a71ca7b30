"""Rejected means not delivered: a scan whose events the server refuses for good exits 1 and says how many
(issue 12, item 5)."""
from __future__ import annotations

import json

from tests.support.delivery import FAST, http_client
from tests.support.lineage_server import Answer, LineageServer
from tests.support.scan import catalog_env, cli, spec_of, write_table

from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.delivery import Delivery
from iceberg_lineage.scan.driver import ScanOptions, scan
from iceberg_lineage.scan.sinks import delivery_sink
from iceberg_lineage.scan.summary import summary_text
from iceberg_lineage.state.store import StateStore


def refusing(status: int) -> LineageServer:
    return LineageServer(script=lambda _n, _body: Answer(status))


def test_a_scan_whose_events_are_all_rejected_exits_1_with_the_count(sql_catalog, tmp_path):
    write_table(sql_catalog, "db.a", 2)
    write_table(sql_catalog, "db.b", 1)
    with refusing(400) as server:
        done = cli("--format", "json", "--no-progress", "--state", str(tmp_path / "state.db"), cwd=tmp_path,
                   env={**catalog_env(sql_catalog), "OPENLINEAGE_URL": server.url})
        sent = server.events()
    # the scan's own run is refused too (its START at least), outside the summary: it reports the tables' events
    refused = sum(1 for e in sent if e["job"]["name"] != "iceberg-lineage.scan")
    assert sent[0]["job"]["name"] == "iceberg-lineage.scan"
    assert server.accepted == [] and refused >= 2  # at least the first event of each table was sent, and refused
    summary = json.loads(done.stderr.strip().splitlines()[-1])
    assert (done.returncode, summary["exit_code"], summary["rejected_events"]) == (1, 1, refused)
    assert summary["snapshots"]["emitted"] == 3 - refused  # a snapshot whose event was refused is not emitted


def test_the_text_summary_counts_rejected_events(sql_catalog, tmp_path):
    write_table(sql_catalog, "db.a", 1)
    settings = Settings().updated({"spool.path": str(tmp_path / "spool")})
    with refusing(413) as server:
        delivery = Delivery(http_client(server.url, **FAST), settings)
        with StateStore(tmp_path / "state.db") as state:
            summary = scan(ScanOptions(catalogs=(spec_of(sql_catalog),)), settings, state, delivery_sink(delivery))
        delivery.close()
    assert (summary.exit_code, summary.events_rejected, summary.snapshots_emitted) == (1, 1, 0)
    assert ("  rejected:  1 event(s) refused by the server, not delivered (kept in the spool: iceberg-lineage "
            "replay --list)") in summary_text(summary, "http").splitlines()
