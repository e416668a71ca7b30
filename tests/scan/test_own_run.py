"""The scan's own run (issue 19): every ``iceberg-lineage scan`` sends job ``<job namespace>.scan``, START then
COMPLETE, or FAIL when the scan exits 1, carrying the summary it printed; ``iceberg-lineage jobs`` then reports on
the scanner."""
from __future__ import annotations

import json

from click.testing import CliRunner

from iceberg_lineage.cli import main
from iceberg_lineage.config import Settings
from iceberg_lineage.scan.driver import ScanOptions, scan
from iceberg_lineage.state.store import StateStore
from tests.support.olschema import validate_event
from tests.support.scan import Recorder, catalog_env, cli, spec_of, write_table
from tests.support.userstate import USER_STATE

JOB = "iceberg-lineage.scan"


def scanner_events(path) -> list[dict]:
    events = [json.loads(line) for line in path.read_text().splitlines()]
    return [e for e in events if e["job"]["name"] == JOB]


def test_a_scan_sends_its_own_run_with_its_summary_and_jobs_reports_the_scanner(sql_catalog, tmp_path):
    write_table(sql_catalog, "db.a", 2)
    write_table(sql_catalog, "db.b", 1)
    env = catalog_env(sql_catalog)
    log = tmp_path / USER_STATE / "events.jsonl"
    first = cli("--format", "json", "--no-progress", env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    printed = json.loads(first.stderr.strip().splitlines()[-1])
    start, complete = scanner_events(log)
    assert (start["eventType"], complete["eventType"]) == ("START", "COMPLETE")
    assert start["run"]["runId"] == complete["run"]["runId"]
    assert start["job"] == complete["job"] == {
        "namespace": "iceberg-lineage", "name": JOB,
        "facets": {"jobType": {**complete["job"]["facets"]["jobType"], "jobType": "JOB"}}}
    assert start["eventTime"] <= complete["eventTime"]
    assert "icebergLineageScan" not in start["run"]["facets"]
    facet = complete["run"]["facets"]["icebergLineageScan"]
    assert facet["tables"] == printed["tables"] == {"scanned": 2, "unchanged": 0, "updated": 2, "failed": 0}
    # the file transport wrote them all: delivered
    assert facet["snapshots"] == {"emitted": 3, "delivered": 3, "spooled": 0, "alreadyEmittedByHooks": 0,
                                  "resentForHooks": 0}
    assert printed["snapshots"]["emitted"] == 3
    assert (facet["errors"], facet["exitCode"], facet["rejectedEvents"], facet["mode"], facet["dryRun"]) == \
        (0, 0, 0, "history", False)
    assert facet["elapsedS"] == printed["elapsed_s"]
    assert all("parent" not in e["run"]["facets"] for e in (start, complete))  # a root
    others = [json.loads(line) for line in log.read_text().splitlines()]
    assert not any(e["run"]["facets"].get("parent", {}).get("run", {}).get("runId") == start["run"]["runId"]
                   for e in others)  # nobody's parent

    bad = write_table(sql_catalog, "db.bad", 1)
    with open(bad.metadata_location.removeprefix("file://"), "w") as f:
        f.write("{ not json")
    second = cli("--format", "json", "--no-progress", env=env, cwd=tmp_path)
    assert second.returncode == 1
    printed = json.loads(second.stderr.strip().splitlines()[-1])
    events = scanner_events(log)
    assert [e["eventType"] for e in events] == ["START", "COMPLETE", "START", "FAIL"]
    assert events[2]["run"]["runId"] == events[3]["run"]["runId"] != events[0]["run"]["runId"]
    failed = events[3]["run"]["facets"]
    assert (failed["icebergLineageScan"]["errors"], failed["icebergLineageScan"]["exitCode"]) == (1, 1)
    assert failed["icebergLineageScan"]["tables"] == printed["tables"] == {
        "scanned": 3, "unchanged": 2, "updated": 0, "failed": 1}
    [failure] = failed["icebergLineageScan"]["failures"]
    assert (failure["catalog"], failure["table"]) == ("test", "db.bad")
    assert failed["errorMessage"]["message"] == "scan exit code 1: 1 error(s), 0 event(s) rejected"
    for event in events:
        validate_event(event)

    report = CliRunner().invoke(main, ["jobs", "--events", str(log), "--job", JOB, "--format", "json"])
    assert report.exit_code == 0, report.output
    [job] = json.loads(report.stdout)["jobs"]
    assert (job["namespace"], job["name"], job["runs"], job["completed"], job["failed"], job["open"]) == \
        ("iceberg-lineage", JOB, 2, 1, 1, 0)
    assert (job["failure_rate"], job["timed_runs"]) == (0.5, 2)
    assert job["last_failure"]["message"] == "scan exit code 1: 1 error(s), 0 event(s) rejected"


def test_without_start_events_and_in_current_mode_under_a_run_only_profile_only_the_terminal_event(
        sql_catalog, tmp_path):
    write_table(sql_catalog, "db.a", 2)
    settings = Settings().updated({"events.start_events": False, "consumer.profile": "datazone"})
    sink = Recorder()
    with StateStore(tmp_path / "state.db") as state:
        summary = scan(ScanOptions(catalogs=(spec_of(sql_catalog),), mode="current"), settings, state, sink,
                       own_run=True)
    events = sink.parsed
    assert [(e["eventType"], e["job"]["name"]) for e in events] == [("COMPLETE", "db.a.commit"), ("COMPLETE", JOB)]
    facet = events[-1]["run"]["facets"]["icebergLineageScan"]
    assert (facet["mode"], facet["snapshots"]["emitted"], summary.snapshots_emitted) == ("current", 1, 1)
    for event in events:
        validate_event(event)
    with StateStore(tmp_path / "other.db") as state:  # without own_run (a preview): the tables' events only
        scan(ScanOptions(catalogs=(spec_of(sql_catalog),)), Settings(), state, quiet := Recorder())
    assert all(e["job"]["name"] != JOB for e in quiet.parsed)
