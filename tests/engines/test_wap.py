"""Write-audit-publish, cherry-picks, a fast-forward and a tag (Spark, Iceberg Java): every snapshot of the table,
on main, on a branch or staged on none, has Iceberg Java's figures and the refs it belongs to, and the scanner
sends each one exactly once across two scans (the first made before the publish)."""
from __future__ import annotations

import json

from tests.engines.test_exactness import compare
from tests.support.engines import JDBC
from tests.support.iceberg_java import differences, lineage_stats, run_cli
from tests.support.olschema import validate_event
from tests.support.scan import run_scan, snapshot_ids

from iceberg_lineage.scan.discovery import TableFilter

#: Refs per snapshot s1..s9 (see the fixture): the branches whose history holds it, and the tags on it.
REFS = [("audit", "first", "hotfix", "main"), ("audit", "hotfix", "main"), ("audit",), ("audit",), (),
        ("hotfix", "main"), ("hotfix", "main"), ("hotfix", "main"), ("hotfix", "main")]
#: The refs of s1..s5 when the first scan ran (no hotfix yet; main was s2).
REFS_AT_FIRST_SCAN = [("audit", "first", "main"), ("audit", "main"), ("audit",), ("audit",), ()]
STAGED = [False] * 4 + [True] + [False] * 4
JOB = "wap.write_audit_publish.spark"


def statistics(event: dict) -> dict:
    return event["outputs"][0]["facets"]["icebergTableStatistics"]


def test_every_snapshot_on_and_off_main_equals_iceberg_java(write_audit_publish):
    table = write_audit_publish.live
    ours = list(compare(table).values())
    java = [table.java[s["snapshot_id"]] for s in table.snapshots]
    ids = [s["snapshot_id"] for s in table.snapshots]
    summaries = [s["summary"] for s in table.snapshots]
    assert [s["operation"] for s in table.snapshots] == ["append"] * 3 + ["delete"] + ["append"] * 5
    # parents: the branch and the staged commit start from s2; publish and cherry-pick land on main's tip
    assert [s["parent_id"] for s in table.snapshots] == [None, ids[0], ids[1], ids[2], ids[1], ids[1], ids[5],
                                                         ids[6], ids[7]]
    assert summaries[4]["wap.id"] == "wap-1" and summaries[6]["published-wap-id"] == "wap-1"
    assert summaries[6]["source-snapshot-id"] == str(ids[4]) and summaries[7]["source-snapshot-id"] == str(ids[2])
    # a cherry-pick adds the source's files again: the figures of the picked snapshot, on another parent
    assert (java[6]["added_data_files"], java[6]["added_records"]) == (1, 5) == (
        java[4]["added_data_files"], java[4]["added_records"])
    assert java[7]["data_files"] == java[6]["data_files"] + 1 and java[3]["position_delete_files"] == 3
    assert java[8]["records"] == 45 and java[3]["live_records"] == 22
    assert [tuple(s["refs"]) for s in ours] == REFS
    assert [s["staged"] for s in ours] == STAGED


def test_events_carry_each_snapshots_refs(spark, write_audit_publish):
    """``events --all-snapshots`` through PyIceberg's SqlCatalog: one valid run per snapshot, branches and the
    staged one included, its refs in the statistics facet."""
    table = write_audit_publish.live
    catalog = {"PYICEBERG_CATALOG__JDBC__TYPE": "sql",
               "PYICEBERG_CATALOG__JDBC__URI": f"sqlite:///{spark.root}/catalog.db"}
    proc = run_cli("events", "--catalog", JDBC, "--table", "wap.write_audit_publish", "--all-snapshots", env=catalog)
    printed = [json.loads(line) for line in proc.stdout.splitlines()]
    for event in printed:
        validate_event(event)
    events = [e for e in printed if e["eventType"] != "START"]  # each run's START, then its COMPLETE
    assert [e["eventType"] for e in printed] == ["START", "COMPLETE"] * len(events)
    assert snapshot_ids(events) == [s["snapshot_id"] for s in table.snapshots]
    assert [tuple(statistics(e)["refs"]) for e in events] == REFS
    assert [statistics(e)["staged"] for e in events] == STAGED
    assert {e["job"]["name"] for e in events} == {JOB}


def test_scanner_sends_each_snapshot_once_across_the_publish(spark, write_audit_publish):
    """The scan made before the publish sent s1..s5 (with the refs of that moment); this one sends s6..s9 only,
    and reports no gap; a third sends nothing."""
    table, state = write_audit_publish.live, write_audit_publish.state
    ids = [s["snapshot_id"] for s in table.snapshots]
    first = write_audit_publish.first_scan
    only_wap = TableFilter(namespaces=("wap",))
    summary, second = run_scan(spark.pyiceberg_catalog(), state, filters=only_wap)
    for event in first + second.parsed:
        validate_event(event)
    assert snapshot_ids(first) == ids[:5] and snapshot_ids(second.parsed) == ids[5:]
    assert [tuple(statistics(e)["refs"]) for e in first] == REFS_AT_FIRST_SCAN
    assert [tuple(statistics(e)["refs"]) for e in second.terminal] == REFS[5:]
    assert [e["eventType"] for e in second.parsed] == ["START", "COMPLETE"] * 4
    assert {e["job"]["name"] for e in first + second.parsed} == {JOB}
    assert (summary.snapshots_emitted, summary.gaps) == (4, ())
    third, nothing = run_scan(spark.pyiceberg_catalog(), state, filters=only_wap)
    assert nothing.events == [] and third.snapshots_emitted == 0


def test_summaries_of_picked_and_staged_snapshots_equal_iceberg_java(write_audit_publish):
    """At ``--depth summary`` the figures come from each snapshot's summary alone (Iceberg Java writes totals into a
    cherry-pick's and a staged commit's summary too): every one given equals Java's. Java leaves out a counter that
    is 0 (a DELETE's ``added-data-files``), which the package then does not give."""
    table = write_audit_publish.live
    problems = []
    for snap in lineage_stats(table.metadata, "--depth", "summary")["snapshots"]:
        java = table.java[snap["snapshot_id"]]
        known = {key: value for key, value in snap.items() if key in java and key != "columns" and value is not None}
        assert {"data_files", "records", "position_deletes", "delete_files", "total_files_size_bytes"} <= set(known)
        problems += [f"{snap['snapshot_id']} {line}" for line in
                     differences({**known, "columns": {}}, {**{k: java[k] for k in known}, "columns": {}})]
    assert problems == []
