"""The `make run` story: a demo catalog with plain and hooked tables, scanned; a second run emits only what is new."""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys

from tests.support.olschema import validate_event


def make_run(cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "iceberg_lineage.demo"], cwd=cwd, env=dict(os.environ),
                          capture_output=True, text=True, timeout=180)


HEADINGS = ["table", "snapshots emitted", "current version", "rows", "files", "last operation"]


def printed_table(stderr: str) -> dict[str, dict[str, str]]:
    """The per-table report: the lines after "demo tables written to", up to the first blank line."""
    lines = stderr.split("demo tables written to", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    lines = [line for line in lines if not line.startswith("schema alert: ")]  # the scan's alerts (issue 18)
    assert re.split(r"\s{2,}", lines[0]) == HEADINGS
    return {cells[0]: dict(zip(HEADINGS[1:], cells[1:])) for cells in (re.split(r"\s{2,}", line) for line in lines[1:])}


def next_commands(stderr: str) -> list[str]:
    return [line.strip() for line in stderr.split("try next:\n", 1)[1].splitlines() if line.strip()]


def test_make_run_twice(tmp_path):
    first = make_run(tmp_path)
    assert first.returncode == 0, first.stderr
    assert "0 failed" in first.stderr and "48 emitted, 3 already emitted by hooks" in first.stderr
    assert "events:    file .iceberg-lineage/events.jsonl" in first.stderr
    assert first.stderr.count("schema alert: analytics.daily_revenue: field note (string) added at snapshot ") == 1
    assert (tmp_path / "warehouse" / "catalog.db").exists()
    table = printed_table(first.stderr)
    assert {name: row["snapshots emitted"] for name, row in table.items()} == {
        "demo.orders": "15", "demo.sales.customers": "11", "demo.sales.returns": "9", "analytics.daily_revenue": "13",
        "demo.hooked_orders": "0 (+3 by the hook)"}
    assert {name: (row["rows"], row["files"], row["last operation"]) for name, row in table.items()} == {
        "demo.orders": ("710", "9", "append"), "demo.sales.customers": ("510", "7", "append"),
        "demo.sales.returns": ("310", "5", "append"), "analytics.daily_revenue": ("610", "8", "append"),
        "demo.hooked_orders": ("60", "3", "append")}

    # the two commands work as printed, from where `make run` ran, and agree with the table
    stats_cmd, events_cmd = next_commands(first.stderr)
    assert stats_cmd.endswith("iceberg-lineage stats --catalog default --table demo.orders")
    stats = subprocess.run(shlex.split(stats_cmd), cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert stats.returncode == 0, stats.stderr
    (current,) = json.loads(stats.stdout)["snapshots"]
    orders = table["demo.orders"]
    assert (str(current["snapshot_id"]), str(current["records"]), str(current["data_files"]), current["operation"]) == (
        orders["current version"], orders["rows"], orders["files"], orders["last operation"])
    events = subprocess.run(shlex.split(events_cmd), cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert events.returncode == 0, events.stderr
    printed = [json.loads(line) for line in events.stdout.splitlines()]
    versions = [e["outputs"][0]["facets"]["version"]["datasetVersion"] for e in printed if e["eventType"] != "START"]
    assert len(versions) == 15 and versions[-1] == orders["current version"] and len(printed) == 2 * 15

    second = make_run(tmp_path)
    assert second.returncode == 0, second.stderr
    assert "4 emitted, 1 already emitted by hooks" in second.stderr
    assert {name: row["snapshots emitted"] for name, row in printed_table(second.stderr).items()} == {
        "demo.orders": "1", "demo.sales.customers": "1", "demo.sales.returns": "1", "analytics.daily_revenue": "1",
        "demo.hooked_orders": "0 (+1 by the hook)"}

    events = [json.loads(line) for line in (tmp_path / ".iceberg-lineage" / "events.jsonl").read_text().splitlines()]
    for event in events:
        validate_event(event)
    # one run per snapshot, START and COMPLETE: the hook's commits and the scanner's never overlap
    commits = [(e["outputs"][0]["name"], e["outputs"][0]["facets"]["version"]["datasetVersion"])
               for e in events if e["job"]["facets"]["jobType"]["jobType"] == "COMMIT" and e["eventType"] == "COMPLETE"]
    starts = [e for e in events if e["eventType"] == "START" and e["job"]["name"].endswith(".pyiceberg")]
    assert len(starts) == 1 + 3 + 1  # the hooked table's CREATE run, then its snapshots' runs
    scans = [e["eventType"] for e in events if e["job"]["name"] == "iceberg-lineage.scan"]
    assert scans == ["START", "COMPLETE"] * 2  # each scan's own run
    assert len(commits) == 48 + 3 + 4 + 1 and len(set(commits)) == len(commits)
