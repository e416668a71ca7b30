"""The file transport's own output read back: a scan by the CLI and a hooked PyIceberg session (commits, and a run
that fails) append to the embedded default ``events.jsonl`` in the per-user state folder; ``jobs`` reads it with no
flag."""
from __future__ import annotations

import json
from collections import defaultdict

import pytest
from click.testing import CliRunner

from iceberg_lineage.cli import main
from iceberg_lineage.delivery.client import make_client
from iceberg_lineage.delivery.emitter import EMITTERS
from iceberg_lineage.hook import observe, run
from iceberg_lineage.jobs import RELATIVE_ERROR
from iceberg_lineage.jobs.aggregate import event_ms
from tests.support.hook import rows as hook_rows
from tests.support.olschema import validate_event
from tests.support.scan import catalog_env, write_table
from tests.support.userstate import USER_STATE


def independent_counts(lines: list[str]) -> dict[str, dict[str, int]]:
    """Terminal events per job, once per run, counted the plain way."""
    ends: dict[str, dict[str, str]] = defaultdict(dict)
    for event in map(json.loads, lines):
        if event.get("eventType") in ("COMPLETE", "FAIL", "ABORT"):
            ends[event["job"]["name"]].setdefault(event["run"]["runId"], event["eventType"])
    return {job: {kind: list(runs.values()).count(kind) for kind in ("COMPLETE", "FAIL", "ABORT")}
            for job, runs in ends.items()}


@pytest.fixture(autouse=True)
def _fresh_emitters():
    EMITTERS.shutdown()
    yield
    EMITTERS.shutdown()


def test_scan_and_hooked_runs_read_back(sql_catalog, monkeypatch):
    write_table(sql_catalog, "db.scanned", 3)  # not observed: the scanner reports its 3 snapshots
    for name, value in catalog_env(sql_catalog).items():
        monkeypatch.setenv(name, value)
    scanned = CliRunner().invoke(main, ["scan", "--no-progress", "--format", "json"])
    assert scanned.exit_code == 0, scanned.output

    client = make_client()
    observe(sql_catalog, client=client)
    hooked = sql_catalog.create_table("db.hooked", schema=hook_rows(1).schema)
    hooked.append(hook_rows(1, 2))
    hooked.append(hook_rows(3, 4, 5))
    with pytest.raises(RuntimeError), run("nightly <etl>", client=client):
        hooked.append(hook_rows(6))
        raise RuntimeError("boom <b>")
    assert EMITTERS.flush_all(30)

    lines = (USER_STATE / "events.jsonl").read_text().splitlines()
    for line in lines:
        validate_event(json.loads(line))
    result = CliRunner().invoke(main, ["jobs", "--format", "json", "--max-failure-rate", "0%"])
    assert result.exit_code == 1, result.output  # the failed run is above 0 %
    doc = json.loads(result.stdout)
    assert doc["bad_lines"] == 0 and doc["events"] == len(lines) and doc["duplicates"] == 0
    jobs = {j["name"]: j for j in doc["jobs"]}
    assert {name: {"COMPLETE": j["completed"], "FAIL": j["failed"], "ABORT": j["aborted"]}
            for name, j in jobs.items()} == independent_counts(lines)
    assert set(jobs) == {"db.scanned.commit", "db.hooked.pyiceberg", "nightly <etl>", "iceberg-lineage.scan"}
    scanner = jobs["iceberg-lineage.scan"]  # the scan's own run
    assert (scanner["runs"], scanner["completed"], scanner["failure_rate"], scanner["timed_runs"]) == (1, 1, 0.0, 1)
    assert doc["flagged"] == ["iceberg-lineage/nightly <etl>"]

    # rows and bytes written: the snapshots' own summaries (the run's RUNNING commit and its FAIL count once)
    def added(snapshots):
        return (sum(int(s.summary["added-records"]) for s in snapshots),
                sum(int(s.summary["added-files-size"]) for s in snapshots))

    def written(job):
        return jobs[job]["rows_written"], jobs[job]["bytes_written"]

    snapshots = sql_catalog.load_table("db.hooked").metadata.snapshots
    assert written("db.scanned.commit") == added(sql_catalog.load_table("db.scanned").metadata.snapshots)
    assert written("db.hooked.pyiceberg") == added(snapshots[:2]) and written("db.hooked.pyiceberg")[0] == 5
    assert written("nightly <etl>") == added(snapshots[2:]) and written("nightly <etl>")[0] == 1
    etl = jobs["nightly <etl>"]
    assert etl["last_failure"]["message"] == "RuntimeError: boom <b>" and etl["failure_rate"] == 1.0
    assert etl["outputs"] == [{"namespace": "file", "name": hooked.location().removeprefix("file://")}]

    # durations: the scanner's runs (now with their START) and the hook's commits start and end at the snapshot's time
    assert (jobs["db.scanned.commit"]["timed_runs"], jobs["db.scanned.commit"]["duration_p50_s"]) == (3, 0.0)
    # the hook's runs (its CREATE's too) start when the commit started, so they last as long as it measured
    runs: dict[str, dict[str, str]] = {}
    for event in map(json.loads, lines):
        if event["job"]["name"] == "db.hooked.pyiceberg":
            runs.setdefault(event["run"]["runId"], {})[event["eventType"]] = event["eventTime"]
    longest = max((event_ms(t["COMPLETE"]) - event_ms(t["START"])) / 1000 for t in runs.values())
    hooked_runs = jobs["db.hooked.pyiceberg"]
    assert hooked_runs["timed_runs"] == len(runs) == 3
    assert abs(hooked_runs["duration_p95_s"] - longest) <= RELATIVE_ERROR * longest
    times = {json.loads(line)["eventType"]: json.loads(line)["eventTime"] for line in lines
             if json.loads(line)["job"]["name"] == "nightly <etl>"}
    exact = (event_ms(times["FAIL"]) - event_ms(times["START"])) / 1000
    assert abs(etl["duration_p50_s"] - exact) <= RELATIVE_ERROR * exact
