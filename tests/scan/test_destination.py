"""One state whatever the current directory, and the destination each table's events went to (issue 28, finding 2:
a scan started from another folder re-sent the whole history to a local file instead of the configured endpoint).

Scans run as cron would run them (a subprocess, a real HTTP lineage server); each folder is a different working
directory of the same user."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.lineage_server import LineageServer
from tests.support.olschema import validate_event
from tests.support.scan import catalog_env, cli, snapshot_ids, write_table

#: openlineage-python's default endpoint, appended to the configured URL.
ENDPOINT = "api/v1/lineage"


@pytest.fixture
def server():
    with LineageServer() as running:
        yield running


def configured_folder(folder: Path, url: str) -> Path:
    """A working folder with its own ``openlineage.yml`` sending over HTTP to ``url``."""
    folder.mkdir()
    (folder / "openlineage.yml").write_text(f"transport:\n  type: http\n  url: {url}\n")
    return folder / "openlineage.yml"


def summary_of(stderr: str) -> dict:
    return json.loads(stderr.strip().splitlines()[-1])


def scan(cwd: Path, env: dict[str, str], *args: str):
    return cli("--format", "json", "--no-progress", *args, env=env, cwd=cwd)


def commit_ids(events: list[dict]) -> list[int]:
    """The snapshots the received runs are about, in order (the scan's own run names no output)."""
    for event in events:
        validate_event(event)
    return snapshot_ids([e for e in events if e["outputs"]])


def committed(catalog, identifier: str) -> list[int]:
    """The table's snapshots in commit order, from the catalog itself."""
    table = catalog.load_table(identifier)
    return [s.snapshot_id for s in sorted(table.snapshots(), key=lambda s: s.sequence_number)]


def test_a_scan_from_another_folder_sends_nothing_again(sql_catalog, tmp_path, server):
    """The same user, the same openlineage.yml (named by OPENLINEAGE_CONFIG), two folders: one state."""
    write_table(sql_catalog, "db.t", 4)
    config = configured_folder(tmp_path / "a", server.url)
    (tmp_path / "b").mkdir()
    env = {**catalog_env(sql_catalog), "OPENLINEAGE_CONFIG": str(config)}

    first = scan(tmp_path / "a", env)
    assert first.returncode == 0, first.stderr
    assert commit_ids(server.events()) == committed(sql_catalog, "db.t")
    server.clear()

    elsewhere = scan(tmp_path / "b", env)
    assert elsewhere.returncode == 0, elsewhere.stderr
    assert summary_of(elsewhere.stderr)["snapshots"]["emitted"] == 0
    assert [(e["eventType"], e["job"]["name"]) for e in server.events()] == [
        ("START", "iceberg-lineage.scan"), ("COMPLETE", "iceberg-lineage.scan")]  # only the scan's own run
    assert not (tmp_path / "b" / ".iceberg-lineage").exists()


def test_another_destination_stops_the_scan_until_it_is_accepted(sql_catalog, tmp_path, server, user_state):
    """openlineage.yml only in folder a: from folder b the default file transport would take the history."""
    write_table(sql_catalog, "db.t", 3)
    configured_folder(tmp_path / "a", server.url)
    (tmp_path / "b").mkdir()
    env = catalog_env(sql_catalog)
    http = f"http {server.url}/{ENDPOINT}"
    events_file = user_state / "events.jsonl"

    assert scan(tmp_path / "a", env).returncode == 0
    assert commit_ids(server.events()) == committed(sql_catalog, "db.t")
    server.clear()

    moved = scan(tmp_path / "b", env)
    assert moved.returncode == 2, moved.stderr
    (error,) = [line for line in moved.stderr.splitlines() if "error" in line]
    assert error == (
        f"iceberg-lineage: error: destination changed: the events of 1 table(s) went to {http}, this scan would send "
        f"to file {events_file}; check the OpenLineage configuration (openlineage.yml is looked for in "
        "OPENLINEAGE_CONFIG, the current directory, then ~/.openlineage), or pass --new-destination to send their "
        "history there")
    assert server.events() == [] and not events_file.exists()

    disabled = scan(tmp_path / "a", {**env, "OPENLINEAGE_DISABLED": "true"})
    assert disabled.returncode == 2
    assert f"went to {http}, this scan would send to nowhere (OPENLINEAGE_DISABLED)" in disabled.stderr

    accepted = scan(tmp_path / "b", env, "--new-destination")
    assert accepted.returncode == 0, accepted.stderr
    assert f"new destination file {events_file}: the tables' history is sent there" in accepted.stderr
    assert summary_of(accepted.stderr)["events"] == f"file {events_file}"  # the scan says where it wrote
    written = [json.loads(line) for line in events_file.read_text().splitlines()]
    assert commit_ids(written) == committed(sql_catalog, "db.t") and server.events() == []

    back = scan(tmp_path / "a", env)  # the file is the recorded destination now
    assert back.returncode == 2 and f"went to file {events_file}, this scan would send to {http}" in back.stderr
    again = cli("--format", "text", "--no-progress", env=env, cwd=tmp_path / "b")
    assert again.returncode == 0 and "snapshots: 0 emitted" in again.stderr
    assert again.stderr.splitlines()[-1] == f"  events:    file {events_file}"  # the text summary names the file


def test_a_dry_run_records_no_destination(sql_catalog, tmp_path, server, user_state):
    write_table(sql_catalog, "db.t", 2)
    env = {**catalog_env(sql_catalog), "OPENLINEAGE_URL": server.url}
    dry = scan(tmp_path, {**env, "OPENLINEAGE_DISABLED": "true"}, "--dry-run")
    assert dry.returncode == 0 and not user_state.exists()
    real = scan(tmp_path, env)
    assert real.returncode == 0, real.stderr
    assert commit_ids(server.events()) == committed(sql_catalog, "db.t")
