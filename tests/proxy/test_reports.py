"""Reports through the proxy without Spark: PyIceberg with scan_reporters' ``rest`` reporter (its scans become scan
runs of their own); and the faults, with short timings: a late commit report becomes an OTHER event; an idle timeout
then more activity gives OTHER events, never a second START; a restart after a SIGKILL completes the open run."""
from __future__ import annotations

import json

import pyarrow as pa

from iceberg_lineage.lineage.engine_runs import application_run_id
from iceberg_lineage.lineage.events import snapshot_run_id
from tests.proxy.conftest import run_of
from tests.proxy.reports import commit_report, scan_report
from tests.support.proxy import post

ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": pa.array(["a", "b", "c"])})


def metrics_url(proxy, table: str) -> str:
    return f"{proxy.uri}/v1/warehouse/namespaces/faults/tables/{table}/metrics"


def java_report(report: dict, seaweed) -> tuple[int, bytes]:
    """A report as Iceberg Java posts it, with the engine's bearer token."""
    import requests

    form = {"grant_type": "client_credentials", "client_id": seaweed.credential.split(":")[0],
            "client_secret": seaweed.credential.split(":")[1]}
    token = requests.post(f"{seaweed.uri}/v1/oauth/tokens", data=form, timeout=10).json()["access_token"]
    return json.dumps(report).encode(), {"Authorization": f"Bearer {token}"}


def faults_table(tapped, proxy, name: str):
    """``faults.<name>`` created through ``proxy``, with one append."""
    catalog = tapped.seaweed.catalog("faults", uri=proxy.uri)
    catalog.create_namespace_if_not_exists("faults")
    table = catalog.create_table(f"faults.{name}", ROWS.schema)
    table.append(ROWS)
    return table


def spark_scan(tapped, table, app_id: str) -> tuple[str, bytes, dict[str, str]]:
    """The application run's id, and a scan report of ``table`` by Spark application ``app_id`` as Java posts it."""
    app = {"engine-name": "spark", "engine-version": "3.5.9", "app-id": app_id}
    body, headers = java_report(scan_report(table.metadata.current_snapshot_id, metadata=app), tapped.seaweed)
    return application_run_id("spark", app_id), body, headers


def test_pyiceberg_scans_reported_through_the_proxy_become_scan_runs(tapped):
    import scan_reporters
    from scan_reporters.reporters.rest import RestMetricsReporter

    proxy = tapped.start()
    catalog = tapped.seaweed.catalog("reporting", uri=proxy.uri)
    catalog.create_namespace_if_not_exists("pyreports")
    table = catalog.create_table("pyreports.t", ROWS.schema)
    table.append(ROWS)
    reporter = RestMetricsReporter()
    scan_reporters.instrument(catalog, reporter)
    try:
        table = catalog.load_table("pyreports.t")
        assert table.scan().to_arrow().num_rows == 3
        assert table.scan(row_filter="id > 1").to_arrow().num_rows == 2
        reporter.flush(30)
    finally:
        scan_reporters.uninstrument(catalog)
    sid = table.metadata.current_snapshot_id
    events = tapped.events(lambda evs: len([e for e in evs if e["job"]["name"] == "pyreports.t.scan"]) == 4)
    runs = [e for e in events if e["job"]["name"] == "pyreports.t.scan"]
    assert [e["eventType"] for e in runs] == ["START", "COMPLETE"] * 2  # each scan its own run (issue 19)
    scans = runs[1::2]
    assert [e["run"]["runId"] for e in runs[::2]] == [e["run"]["runId"] for e in scans]
    assert len({e["run"]["runId"] for e in scans}) == 2
    facets = [e["inputs"][0]["inputFacets"]["icebergScanReport"] for e in scans]
    assert {f["snapshotId"] for f in facets} == {sid}
    assert sorted(f.get("filterDescription", "") for f in facets)[0] == ""  # the unfiltered scan
    assert all("parent" not in e["run"].get("facets", {}) for e in scans)
    assert [json.loads(r)["report-type"] for r in tapped.tap.reports] == ["scan-report", "scan-report"]


def test_a_late_commit_report_is_an_other_event_of_the_snapshot_run(tapped):
    proxy = tapped.start(wait_s=0.3, idle_s=1.0)
    md = faults_table(tapped, proxy, "late").metadata
    snap = md.snapshots[-1]
    run_id = str(snapshot_run_id(str(md.table_uuid), snap.snapshot_id, snap.timestamp_ms))
    completed = tapped.events(lambda evs: any(e["eventType"] == "COMPLETE" for e in run_of(evs, run_id)))
    [complete] = [e for e in run_of(completed, run_id) if e["eventType"] == "COMPLETE"]
    body, headers = java_report(commit_report(snap.snapshot_id, snap.sequence_number), tapped.seaweed)
    assert post(metrics_url(proxy, "late"), body, headers)[0] == 204
    events = run_of(tapped.events(lambda evs: len(run_of(evs, run_id)) == 3), run_id)
    # the START went out at once; the COMPLETE waited for the report, which came too late: OTHER
    assert [e["eventType"] for e in events] == ["START", "COMPLETE", "OTHER"]
    assert events[2]["outputs"][0]["name"] == complete["outputs"][0]["name"]
    assert events[2]["outputs"][0]["outputFacets"]["icebergCommitReport"]["commitMetrics"]["totalDuration"] == 1234


def test_an_idle_application_completes_and_later_activity_is_other_never_a_second_start(tapped):
    proxy = tapped.start(wait_s=0.3, idle_s=1.0)
    run_id, body, headers = spark_scan(tapped, faults_table(tapped, proxy, "idle"), "local-idle-1")
    assert post(metrics_url(proxy, "idle"), body, headers)[0] == 204
    tapped.events(lambda evs: any(e["eventType"] == "COMPLETE" for e in run_of(evs, run_id)))
    assert post(metrics_url(proxy, "idle"), body, headers)[0] == 204
    events = run_of(tapped.events(lambda evs: len(run_of(evs, run_id)) == 4), run_id)
    assert [e["eventType"] for e in events] == ["START", "RUNNING", "COMPLETE", "OTHER"]
    assert [len(e["inputs"]) for e in events] == [0, 1, 1, 1] and all(e["outputs"] == [] for e in events)


def test_a_restart_after_a_kill_completes_the_open_application_run(tapped):
    proxy = tapped.start(wait_s=0.3, idle_s=300)
    run_id, body, headers = spark_scan(tapped, faults_table(tapped, proxy, "restart"), "local-restart-1")
    assert post(metrics_url(proxy, "restart"), body, headers)[0] == 204
    tapped.events(lambda evs: len(run_of(evs, run_id)) == 2)
    proxy.kill()
    tapped.start(wait_s=0.3, idle_s=300)
    events = run_of(tapped.events(lambda evs: len(run_of(evs, run_id)) == 3), run_id)
    assert [e["eventType"] for e in events] == ["START", "RUNNING", "COMPLETE"]
    assert [i["name"] for i in events[-1]["inputs"]] == [i["name"] for i in events[1]["inputs"]]


def test_two_workers_share_one_application_run(tapped):
    proxy = tapped.start("--workers", "2", wait_s=0.3, idle_s=300)
    run_id, body, headers = spark_scan(tapped, faults_table(tapped, proxy, "workers"), "local-workers-1")
    for _ in range(12):  # one connection each: the kernel spreads them over both workers
        assert post(metrics_url(proxy, "workers"), body, headers)[0] == 204
    tapped.events(lambda evs: len(run_of(evs, run_id)) == 13)
    proxy.stop()
    events = run_of(tapped.events(lambda evs: len(run_of(evs, run_id)) == 14), run_id)
    assert sorted(e["eventType"] for e in events) == sorted(["START", "COMPLETE"] + ["RUNNING"] * 12)
