"""The `make run` story: a demo catalog with plain and hooked tables, scanned; a second run emits only what is new."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.support.olschema import validate_event


def make_run(cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "iceberg_lineage.demo"], cwd=cwd, env=dict(os.environ),
                          capture_output=True, text=True, timeout=180)


def test_make_run_twice(tmp_path):
    first = make_run(tmp_path)
    assert first.returncode == 0, first.stderr
    assert "0 failed" in first.stderr and "48 emitted, 3 already emitted by hooks" in first.stderr
    assert "events:    file .iceberg-lineage/events.jsonl" in first.stderr
    assert (tmp_path / "warehouse" / "catalog.db").exists()

    second = make_run(tmp_path)
    assert second.returncode == 0, second.stderr
    assert "4 emitted, 1 already emitted by hooks" in second.stderr

    events = [json.loads(line) for line in (tmp_path / ".iceberg-lineage" / "events.jsonl").read_text().splitlines()]
    for event in events:
        validate_event(event)
    # one run per snapshot: the hook's commits (START, COMPLETE) and the scanner's (COMPLETE) never overlap
    commits = [(e["outputs"][0]["name"], e["outputs"][0]["facets"]["version"]["datasetVersion"])
               for e in events if e["job"]["facets"]["jobType"]["jobType"] == "COMMIT" and e["eventType"] == "COMPLETE"]
    starts = [e for e in events if e["eventType"] == "START" and e["job"]["name"].endswith(".pyiceberg")]
    assert len(starts) == 3 + 1
    assert len(commits) == 48 + 3 + 4 + 1 and len(set(commits)) == len(commits)
