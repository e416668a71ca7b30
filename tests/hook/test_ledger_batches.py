"""The hook writes its ledger on the emitter's thread in one transaction per batch of settled commits, not one per
commit, and before a flush returns (issue 32)."""
from __future__ import annotations

import sqlite3

from tests.support.delivery import FAST, http_client
from tests.support.hook import SCHEMA, rows
from tests.support.lineage_server import Answer, LineageServer

from iceberg_lineage.delivery.emitter import EMITTERS
from iceberg_lineage.hook import reporter as hook


def test_commits_settled_together_share_one_ledger_transaction(sql_catalog, tmp_path, monkeypatch):
    state_path = tmp_path / "state.db"
    monkeypatch.setenv("ICEBERG_LINEAGE__STATE__PATH", str(state_path))
    commits = 6
    # the first event waits on the server, so the other commits are queued behind it and settled in one go
    with LineageServer(script=lambda n, body: Answer(delay=1.0 if n == 0 else 0.0)) as server:
        hook.observe(sql_catalog, client=http_client(server.url, timeout=10.0, **FAST))
        table = sql_catalog.create_table("db.t", SCHEMA)
        for i in range(commits):
            table.append(rows(i))
        assert EMITTERS.flush_all(60)
        with sqlite3.connect(state_path) as db:  # written before the flush returned
            ledger = db.execute("SELECT snapshot_id, run_id, recorded_at FROM ledger").fetchall()
        delivered = {e["run"]["runId"] for e in server.accepted_events() if e["job"]["name"].endswith(".pyiceberg")}

    snapshots = {s.snapshot_id for s in table.refresh().metadata.snapshots}
    assert {sid for sid, _, _ in ledger} == snapshots and len(ledger) == commits
    assert {run_id for _, run_id, _ in ledger} <= delivered
    # one transaction stamps its rows alike: fewer stamps than commits (one per commit before batching)
    assert len({recorded_at for _, _, recorded_at in ledger}) < commits
