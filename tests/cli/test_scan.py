"""The scan command end to end, as cron would run it: a real HTTP lineage server, a state file, a lock."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.lineage_server import LineageServer
from tests.support.olschema import validate_event

from iceberg_lineage.state.store import acquire_lock
from tests.support.scan import SCAN_CLI, catalog_env, cli, lifecycle, snapshot_ids, write_table


class Receiver(LineageServer):
    """OpenLineage HTTP endpoint on 127.0.0.1 that keeps every event it receives."""

    def take(self) -> list[dict]:
        out = self.events()
        self.clear()
        return out


@pytest.fixture
def lineage_server():
    with Receiver() as server:
        yield server


def summary_of(result: subprocess.CompletedProcess) -> dict:
    return json.loads(result.stderr.strip().splitlines()[-1])


def test_cron_story_over_http(sql_catalog, tmp_path, lineage_server, user_state):
    """First run emits everything, a rerun nothing, new commits exactly themselves, a broken table fails alone."""
    a = write_table(sql_catalog, "db.a", 3)
    write_table(sql_catalog, "db.b", 2)
    env = {**catalog_env(sql_catalog), "OPENLINEAGE_URL": lineage_server.url}

    first = cli("--format", "json", "--no-progress", env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    events = lineage_server.take()
    for event in events:
        validate_event(event)
    # START and COMPLETE each, and the scan's own run
    assert len(events) == 2 * 5 + 2 and summary_of(first)["snapshots"]["emitted"] == 5
    assert "http" in summary_of(first)["events"]
    assert (user_state / "state.db").exists()

    rerun = cli("--format", "json", env=env, cwd=tmp_path)
    assert rerun.returncode == 0
    assert [(e["eventType"], e["job"]["name"]) for e in lineage_server.take()] == [
        ("START", "iceberg-lineage.scan"), ("COMPLETE", "iceberg-lineage.scan")]  # nothing but the scan's own run
    assert summary_of(rerun)["tables"] == {"scanned": 2, "unchanged": 2, "updated": 0, "failed": 0}

    a = write_table(sql_catalog, "db.a", 2, start=500).refresh()
    # a new commit whose metadata file is then broken: a table at an unchanged location is skipped unread
    bad = write_table(sql_catalog, "db.b", 1, start=900).refresh()
    Path(bad.metadata_location.removeprefix("file://")).write_text("not metadata")
    third = cli("--format", "json", env=env, cwd=tmp_path)
    assert third.returncode == 1
    newest = sorted(a.snapshots(), key=lambda s: s.sequence_number)[-2:]
    sent = lineage_server.take()
    assert snapshot_ids(sent[1:-1]) == [s.snapshot_id for s in newest]  # between the scan's START and FAIL
    assert [(e["eventType"], e["job"]["name"]) for e in (sent[0], sent[-1])] == [
        ("START", "iceberg-lineage.scan"), ("FAIL", "iceberg-lineage.scan")]
    summary = summary_of(third)
    assert summary["tables"]["failed"] == 1 and summary["failures"][0]["table"] == "db.b"


def test_text_summary_dry_run_and_unknown_catalog(sql_catalog, tmp_path, user_state):
    write_table(sql_catalog, "db.t", 2)
    env = catalog_env(sql_catalog)
    dry = cli("--dry-run", "--format", "text", "--state", str(tmp_path / "s.db"), env=env, cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    # the scan's own run around the table's two runs
    assert [json.loads(line)["eventType"] for line in lines] == ["START", *["START", "COMPLETE"] * 2, "COMPLETE"]
    assert "2 emitted" in dry.stderr and "dry run" in dry.stderr
    assert not (tmp_path / "s.db").exists() and not user_state.exists()

    unknown = cli("--catalog", "nope", env=env, cwd=tmp_path)
    assert unknown.returncode == 2 and "nope" in unknown.stderr


def test_drop_and_rename_through_the_cli(sql_catalog, tmp_path, user_state):
    write_table(sql_catalog, "db.x", 1)
    write_table(sql_catalog, "db.y", 1)
    env = catalog_env(sql_catalog)
    assert cli(env=env, cwd=tmp_path).returncode == 0
    sql_catalog.drop_table("db.x")
    sql_catalog.rename_table("db.y", "db.z")
    result = cli("--format", "json", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (summary_of(result)["drops"], summary_of(result)["renames"]) == (1, 1)
    events = [json.loads(line) for line in (user_state / "events.jsonl").read_text().splitlines()]
    # each table's first snapshot is its CREATE; then one DROP and one RENAME, no snapshot twice
    terminal = [e for e in events if e["eventType"] != "START" and e["outputs"]]  # a START names its output, no
    # facets; the scan's own run has none
    assert sorted(lifecycle(e) for e in terminal) == ["CREATE", "CREATE", "DROP", "RENAME"]


def test_a_second_scan_exits_2_or_waits(sql_catalog, tmp_path, user_state):
    write_table(sql_catalog, "db.t", 1)
    env = catalog_env(sql_catalog)
    state = user_state / "state.db"
    lock = acquire_lock(state, wait=False)
    try:
        busy = cli(env=env, cwd=tmp_path)
        assert busy.returncode == 2 and "another scan is running" in busy.stderr
        waiting = subprocess.Popen([sys.executable, "-c", SCAN_CLI, "--wait", "--format", "json"],
                                   env={**os.environ, **env}, cwd=tmp_path,
                                   stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        line = waiting.stderr.readline()
        assert "waiting" in line and waiting.poll() is None
    finally:
        lock.release()
    _, err = waiting.communicate(timeout=120)
    assert waiting.returncode == 0 and json.loads(err.strip().splitlines()[-1])["snapshots"]["emitted"] == 1
