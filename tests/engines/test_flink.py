"""Flink 1.20 writing through the bridge (issue 30): two batch jobs, each writing a partitioned v2 table
(``appends``) and an upsert table (``upserts``: equality deletes); the second job's upserts are read from
``appends``. Every snapshot becomes one per-snapshot run with the scanner's runId whose parent is the Flink job's
application run; the datasets are named as Spark's through the same bridge."""
from __future__ import annotations

from iceberg_lineage.lineage.runs import application_run_id
from tests.support.flink import NAMESPACE
from tests.support.live_bridge import check_named_runs


def test_flink_commits(flink_tables):
    appends, upserts = flink_tables.tables["appends"], flink_tables.tables["upserts"]
    jobs = flink_tables.answers
    assert len(jobs) == 2 and all(len(job) == 32 for job in jobs)
    for table in (appends, upserts):
        summaries = [s["summary"] for s in table.snapshots]
        assert [s["flink.job-id"] for s in summaries] == jobs  # one commit per job and table
        assert {s["engine-name"] for s in summaries} == {"flink"}
    assert [s["operation"] for s in appends.snapshots] == ["append", "append"]
    assert [appends.java[s["snapshot_id"]]["live_records"] for s in appends.snapshots] == [10, 20]
    java = [upserts.java[s["snapshot_id"]] for s in upserts.snapshots]
    # an equality delete per row upserted: six keys, then the five even ids below 10, three of which (0, 2, 4)
    # replace earlier rows
    assert [j["equality_deletes"] for j in java] == [6, 11]
    assert [j["records"] for j in java] == [6, 11]
    assert [j["live_records"] for j in java] == [6, 8]


def test_flink_commits_through_the_bridge(flink_tables, live_bridge, spark_via_live_bridge, tmp_path):
    """Each snapshot's run is the child of its job's application run (``flink.application``)."""
    for name, table in flink_tables.tables.items():
        events = check_named_runs(live_bridge, f"{NAMESPACE}.{name}", spark_via_live_bridge, tmp_path)
        assert [e["job"]["name"] for e in events] == [f"{NAMESPACE}.{name}.flink"] * len(table.snapshots)
        parents = [e["run"]["facets"]["parent"] for e in events]
        assert [(p["job"]["name"], p["run"]["runId"]) for p in parents] == [
            ("flink.application", application_run_id("flink", job)) for job in flink_tables.answers]


def test_flink_reports_link_no_read(flink_tables, live_bridge, spark_via_live_bridge, tmp_path):
    """Flink posts a commit report per commit and scan reports of the table the second job reads, but names no job in
    them (``engine-name``, ``engine-version``, ``iceberg-version``): each scan is a run of its own, and the second
    job's upsert has no input; only the summaries' ``flink.job-id`` ties the commits to the job."""
    appends, upserts = flink_tables.tables["appends"], flink_tables.tables["upserts"]
    scans = live_bridge.reports("scan-report", NAMESPACE)
    commits = live_bridge.reports("commit-report", NAMESPACE)
    assert {(r["table-name"], r["snapshot-id"]) for r in scans} == {
        (f"ice.{NAMESPACE}.appends", appends.snapshots[0]["snapshot_id"])}
    assert sorted((r["table-name"], r["snapshot-id"]) for r in commits) == sorted(
        (f"ice.{NAMESPACE}.{name}", s["snapshot_id"]) for name, t in flink_tables.tables.items() for s in t.snapshots)
    for report in scans + commits:
        assert (report["metadata"]["engine-name"], report["metadata"]["engine-version"]) == ("flink", "1.20.5")
        assert not {"app-id", "flink.job-id"} & set(report["metadata"])
    events = check_named_runs(live_bridge, f"{NAMESPACE}.upserts", spark_via_live_bridge, tmp_path)
    assert [event["inputs"] for event in events] == [[]] * len(upserts.snapshots)
