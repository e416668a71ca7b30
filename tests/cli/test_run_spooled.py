"""``iceberg-lineage run --`` passes the command's exit code through, whatever became of the events (issue 28);
when the command exits 0 and events wait in the spool, one line on stderr says so, and ``replay`` delivers them.
A real subprocess, a real local HTTP server (or its port while it is stopped)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.lineage_server import LineageServer, free_port
from tests.support.olschema import validate_event

WAITS = "iceberg-lineage: run: the command succeeded, and 2 event(s) wait in the spool at "


def iceberg_lineage(*args: str, url: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENLINEAGE", "ICEBERG_LINEAGE", "PYICEBERG"))}
    env.update(OPENLINEAGE__TRANSPORT__TYPE="http", OPENLINEAGE__TRANSPORT__URL=url,
               OPENLINEAGE__TRANSPORT__RETRY='{"total": 0}')
    return subprocess.run([sys.executable, "-m", "iceberg_lineage.cli", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("code", [0, 5])
def test_the_child_code_passes_through_and_a_success_says_what_waits(tmp_path, user_state, code):
    port = free_port()
    url = f"http://127.0.0.1:{port}"

    done = iceberg_lineage("run", "--job-name", "nightly", "--", sys.executable, "-c",
                           f"import sys; print('hello'); sys.exit({code})", url=url, cwd=tmp_path)

    assert done.returncode == code, done.stderr
    assert done.stdout == "hello\n"
    said = [line for line in done.stderr.splitlines() if line.startswith("iceberg-lineage: run: ")]
    # the child failed: its exit code says it all; it succeeded: one line, as the exit code stays 0
    assert said == ([] if code else [WAITS + f"{user_state / 'spool'} (send them with `iceberg-lineage replay`)"])
    with LineageServer(port) as server:
        replayed = iceberg_lineage("replay", url=url, cwd=tmp_path)
        received = server.events()
    assert replayed.returncode == 0, replayed.stderr
    assert [(e["eventType"], e["job"]["name"]) for e in received] == [
        ("START", "nightly"), ("COMPLETE" if code == 0 else "FAIL", "nightly")]
    for event in received:
        validate_event(event)


def test_nothing_waits_nothing_said(tmp_path):
    with LineageServer() as server:
        done = iceberg_lineage("run", "--job-name", "nightly", "--", sys.executable, "-c", "pass", url=server.url,
                               cwd=tmp_path)
        received = server.accepted_events()
    assert done.returncode == 0, done.stderr
    assert "iceberg-lineage: run:" not in done.stderr
    assert [e["eventType"] for e in received] == ["START", "COMPLETE"]
