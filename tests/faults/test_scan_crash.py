"""A scan SIGKILLed mid-run and run again: the union of what the server received covers every snapshot, and a
snapshot delivered twice carries the same runId both times."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import defaultdict

from tests.support.faults import (
    SCAN_CLI,
    failing_server,
    configure_catalogs,
    scan_cli,
    snapshot_of,
    summary_of,
    write_tables,
)

from iceberg_lineage.state.store import StateStore

TABLES, COMMITS = 40, 5  # 200 snapshots
SCANNER = "iceberg-lineage.scan"  # the scan's own run


def tables_events(events: list[dict]) -> list[dict]:
    return [e for e in events if e["job"]["name"] != SCANNER]


def test_killed_scan_loses_nothing_and_repeats_only_run_ids(sql_catalog, tmp_path):
    tables = write_tables(sql_catalog, TABLES, COMMITS)
    snapshots = {s.snapshot_id for t in tables for s in t.refresh().snapshots()}
    assert len(snapshots) == TABLES * COMMITS
    server = failing_server(delay_s=0.02)
    state_path = tmp_path / "state" / "state.db"
    env = {**configure_catalogs(tmp_path / "home", {"test": {"type": "sql", **sql_catalog.properties}}),
           "OPENLINEAGE_URL": server.url}
    try:
        scan = subprocess.Popen([sys.executable, "-c", SCAN_CLI, "--no-progress", "--state", str(state_path)],
                                env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        while len(server.accepted) < 40 and scan.poll() is None:
            time.sleep(0.01)
        scan.send_signal(signal.SIGKILL)
        assert scan.wait(30) == -signal.SIGKILL, scan.stderr.read()
        scan.stderr.close()
        assert server.wait_idle()
        killed = server.accepted_events()
        first = len(tables_events(killed))
        assert 40 <= first + 1 < 2 * len(snapshots)  # each snapshot's run: START and COMPLETE
        assert [e["eventType"] for e in killed if e["job"]["name"] == SCANNER] == ["START"]  # killed: no terminal
        with StateStore(state_path) as state:  # the killed run left a state that opens, with what it recorded
            recorded = sum(len(state.emitted(t.identity)) for t in state.tables("test"))
        assert 2 * recorded <= first

        again = scan_cli("--state", str(state_path), env=env)
        assert again.returncode == 0, again.stderr
        assert summary_of(again)["snapshots"]["emitted"] == len(snapshots) - recorded
    finally:
        server.stop()
    run_ids: dict[int, set[str]] = defaultdict(set)
    received = server.accepted_events()
    assert [e["eventType"] for e in received if e["job"]["name"] == SCANNER] == ["START", "START", "COMPLETE"]
    for event in tables_events(received):
        if event["eventType"] != "START":  # a START names the output without its version
            run_ids[snapshot_of(event)].add(event["run"]["runId"])
    assert set(run_ids) == snapshots
    assert {len(ids) for ids in run_ids.values()} == {1}
    # duplicates: sent but not yet recorded (two events per snapshot)
    assert len(tables_events(received)) - 2 * len(snapshots) == first - 2 * recorded
