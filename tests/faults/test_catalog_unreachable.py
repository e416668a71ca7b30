"""A catalog that cannot be reached for a while (SQLite locked by another connection, a Glue endpoint down): a
clear error, exit code 1, and a state file that still opens with the watermarks it had."""
from __future__ import annotations

import socket
import sqlite3

from tests.support.faults import (
    configure_catalogs,
    read_jsonl,
    scan_cli,
    small_rows,
    summary_of,
)

from iceberg_lineage.state.store import StateStore


def test_locked_sqlite_catalog(sql_catalog, tmp_path):
    a = sql_catalog.create_table("db.a", schema=small_rows(0).schema)
    b = sql_catalog.create_table("db.b", schema=small_rows(0).schema)
    for table, commits in ((a, 2), (b, 1)):
        for i in range(commits):
            table.append(small_rows(10 * i))
    events_file = tmp_path / "events.jsonl"
    state_path = tmp_path / "state" / "state.db"
    env = {**configure_catalogs(tmp_path / "home", {"test": {"type": "sql", **sql_catalog.properties}}),
           "OPENLINEAGE__TRANSPORT__TYPE": "file", "OPENLINEAGE__TRANSPORT__LOG_FILE_PATH": str(events_file),
           "OPENLINEAGE__TRANSPORT__APPEND": "true"}
    first = scan_cli("--state", str(state_path), env=env)
    assert first.returncode == 0, first.stderr
    assert summary_of(first)["snapshots"]["emitted"] == 3
    a.append(small_rows(100))

    holder = sqlite3.connect(tmp_path / "catalog.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        locked = scan_cli("--state", str(state_path), env=env)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert locked.returncode == 1, locked.stderr
    summary = summary_of(locked)
    assert summary["tables"]["scanned"] == 0 and summary["drops"] == 0
    assert [f["catalog"] for f in summary["failures"]] == ["test"]
    assert "database is locked" in summary["failures"][0]["reason"]
    assert "Traceback" not in locked.stderr
    events = read_jsonl(events_file)
    scans = [e["eventType"] for e in events if e["job"]["name"] == "iceberg-lineage.scan"]
    assert len(events) - len(scans) == 2 * 3  # three runs, START and COMPLETE
    assert scans == ["START", "COMPLETE", "START", "FAIL"]  # each scan's own run: the locked one failed
    with StateStore(state_path) as state:
        emitted = {t.identifier: len(state.emitted(t.identity)) for t in state.tables("test")}
    assert emitted == {("db", "a"): 2, ("db", "b"): 1}

    after = scan_cli("--state", str(state_path), env=env)
    assert after.returncode == 0, after.stderr
    assert summary_of(after)["snapshots"]["emitted"] == 1 and summary_of(after)["drops"] == 0
    events = [e for e in read_jsonl(events_file) if e["job"]["name"] != "iceberg-lineage.scan"]
    assert len(events) == 2 * 4  # four runs, START and COMPLETE (and three scans' own runs)
    assert events[-1]["outputs"][0]["facets"]["version"]["datasetVersion"] == str(a.refresh().metadata.current_snapshot_id)


def test_glue_endpoint_down(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    glue: dict[str, object] = {"type": "glue", "glue.endpoint": f"http://127.0.0.1:{port}", "glue.region": "us-east-1",
            "glue.access-key-id": "testing", "glue.secret-access-key": "testing",
            "glue.max-retries": 1}  # an int, as PyIceberg hands it to botocore; the default retries take 85 s
    env = configure_catalogs(tmp_path / "home", {"lake": glue})
    state_path = tmp_path / "state" / "state.db"
    with StateStore(state_path) as state:  # a state file from earlier runs
        pass
    before = state_path.read_bytes()
    done = scan_cli("--state", str(state_path), env=env)
    assert done.returncode == 1, done.stderr
    failure, = summary_of(done)["failures"]
    assert failure["catalog"] == "lake" and "Could not connect to the endpoint URL" in failure["reason"]
    assert "Traceback" not in done.stderr
    with StateStore(state_path) as state:
        assert list(state.tables("lake")) == []
    assert len(before) > 0
