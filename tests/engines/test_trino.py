"""Trino 476 writing through the bridge (issue 30): CREATE, INSERT, DELETE, UPDATE, MERGE, ADD COLUMN, optimize and
an ``INSERT INTO b SELECT ... FROM a``. Every snapshot becomes one per-snapshot run with the scanner's runId, its
Trino query as ``externalQuery``; the datasets are named as Spark's through the same bridge."""
from __future__ import annotations

from tests.support.live_bridge import check_named_runs
from tests.support.trino import NAMESPACE

A_OPERATIONS = ["append", "append", "delete", "overwrite", "overwrite", "append", "replace"]


def test_trino_commits(trino_tables):
    a, b = trino_tables.tables["a"], trino_tables.tables["b"]
    assert [s["operation"] for s in a.snapshots] == A_OPERATIONS
    assert [s["operation"] for s in b.snapshots] == ["append", "append"]  # CREATE commits an empty append
    java = [a.java[s["snapshot_id"]] for s in a.snapshots]
    assert java[0]["data_files"] == 0 and java[1]["records"] == 30
    assert java[2]["position_delete_files"] >= 1 and java[2]["position_deletes"] == 8  # merge-on-read DELETE
    # Trino's own count equals the rows Iceberg Java reads at the last snapshot: 30 - 8 deleted + MERGE's 1 + 1
    assert trino_tables.answers[-1] == [[24]] and java[-1]["live_records"] == 24
    assert java[-1]["delete_files"] == 0  # optimize rewrote the deletes away
    summaries = [s["summary"] for t in (a, b) for s in t.snapshots]
    assert {(s["engine-name"], s["engine-version"]) for s in summaries} == {("trino", "476")}
    assert len({s["trino_query_id"] for s in summaries}) == len(summaries)  # one query per commit


def test_trino_commits_through_the_bridge(trino_tables, live_bridge, spark_via_live_bridge, tmp_path):
    """Each snapshot's run: job ``<ns>.<table>.trino``, its query id as ``externalQuery``."""
    for name, table in trino_tables.tables.items():
        events = check_named_runs(live_bridge, f"{NAMESPACE}.{name}", spark_via_live_bridge, tmp_path)
        assert [e["job"]["name"] for e in events] == [f"{NAMESPACE}.{name}.trino"] * len(table.snapshots)
        queries = [e["run"]["facets"]["externalQuery"] for e in events]
        assert [(q["externalQueryId"], q["source"]) for q in queries] == [
            (s["summary"]["trino_query_id"], "trino") for s in table.snapshots]


def test_trino_reports_link_nothing(trino_tables, live_bridge, spark_via_live_bridge, tmp_path):
    """Trino posts scan and commit reports to ``/metrics``, but names no application or query in them (only
    ``engine-name``, ``engine-version``, ``iceberg-version``): each scan is a run of its own, and the commit of
    ``INSERT INTO b SELECT ... FROM a`` has no input."""
    scans = live_bridge.reports("scan-report", NAMESPACE)
    commits = live_bridge.reports("commit-report", NAMESPACE)
    assert scans and {r["table-name"] for r in scans} <= {f"{NAMESPACE}.a", f"{NAMESPACE}.b"}
    assert {tuple(sorted(r["metadata"])) for r in scans} == {("engine-name", "engine-version", "iceberg-version")}
    assert {(r["metadata"]["engine-name"], r["metadata"]["engine-version"]) for r in scans} == {("trino", "476")}
    written = {s["snapshot_id"] for table in trino_tables.tables.values() for s in table.snapshots}
    assert commits and {r["snapshot-id"] for r in commits} <= written
    b = check_named_runs(live_bridge, f"{NAMESPACE}.b", spark_via_live_bridge, tmp_path)
    assert [event["inputs"] for event in b] == [[], []]


def test_trino_metadata_log_has_a_hole(trino_tables, live_bridge):
    """Recorded for issue 31: SeaweedFS's ``metadata-log`` of Trino's table skips versions (v2, the commit after
    CREATE TABLE's, and later ones)."""
    metadata = live_bridge.seaweed.catalog("direct").load_table(f"{NAMESPACE}.a")
    current = int(metadata.metadata_location.rsplit("/v", 1)[1].split(".")[0])
    log = [entry.metadata_file.rsplit("/", 1)[-1] for entry in metadata.metadata.metadata_log]
    numbers = [int(name.removeprefix("v").split(".")[0]) for name in log]
    assert numbers[:2] == [1, 3] and numbers == sorted(numbers) and numbers[-1] < current
