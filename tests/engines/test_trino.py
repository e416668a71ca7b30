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
