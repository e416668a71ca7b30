"""Mixed writers, one catalog: Spark (Iceberg Java) and hooked PyIceberg programs commit to the same table of the
shared SQLite/JDBC catalog, then the scanner runs on that catalog.

- Every snapshot's figures equal Iceberg Java's, whoever wrote it.
- The scanner sends each Spark snapshot once (one run, its runId the snapshot's deterministic one), naming the
  engine from the summary: ``spark.app.id`` as ``externalQuery``, Spark's version in ``processing_engine``, the job
  ``<namespace>.<table>.spark``.
- The hook's snapshots follow docs/hook.md, "One run per snapshot": one whose delivery the shared ledger knows is not sent
  again; one written without the ledger (``hook.ledger: false``) is re-sent as the hook's very run (same runId, job
  and eventTypes).
"""
from __future__ import annotations

from collections import defaultdict

import pyarrow as pa
import pytest
from tests.engines.conftest import MERGE_ON_READ, capture
from tests.engines.test_exactness import compare
from tests.support.engines import JDBC, require
from tests.support.hook import Collector, valid
from tests.support.scan import run_scan, snapshot_ids

from iceberg_lineage.delivery.emitter import EMITTERS
from iceberg_lineage.hook import observe
from iceberg_lineage.lineage.events import snapshot_run_id
from iceberg_lineage.lineage.tags import ownership
from iceberg_lineage.scan.discovery import TableFilter
from tests.support.userstate import USER_STATE

NAMESPACE, NAME = "mixed", "mixed_writers"
TABLE = f"{NAMESPACE}.{NAME}"
#: The hook's ledger and the scanner's state: the default ``state.path``, in the test's per-user state folder.
SHARED_STATE = USER_STATE / "state.db"


def pyiceberg_rows(*ids: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "v": pa.array([f"v{i}" for i in ids], pa.string())})


def runs(events: list[dict]) -> dict[str, list[dict]]:
    """Events by runId, in order."""
    out: dict[str, list[dict]] = defaultdict(list)
    for event in events:
        out[event["run"]["runId"]].append(event)
    return dict(out)


def hook_figures(event: dict) -> dict:
    """The figures of a hook's COMPLETE event (its statistics facet), named as Iceberg Java's below."""
    stats = event["outputs"][0]["facets"]["icebergTableStatistics"]
    return {"data_files": stats["dataFiles"], "records": stats["records"], "live_records": stats.get("liveRecords"),
            "data_bytes": stats["bytes"]["data"], "delete_bytes": stats["bytes"]["delete"],
            "position_delete_files": stats["deleteFiles"]["position"],
            "position_deletes": stats["deletedRows"]["position"], "added_data_files": stats["added"]["dataFiles"],
            "added_records": stats["added"]["records"]}


def java_figures(java: dict) -> dict:
    """The same figures from Iceberg Java's metadata tables; live rows are given only without position deletes."""
    return {"data_files": java["data_files"], "records": java["records"],
            "live_records": None if java["position_deletes"] else java["live_records"],
            "data_bytes": java["data_files_size_bytes"], "delete_bytes": java["delete_files_size_bytes"],
            "position_delete_files": java["position_delete_files"], "position_deletes": java["position_deletes"],
            "added_data_files": java["added_data_files"], "added_records": java["added_records"]}


@pytest.fixture
def fresh_emitters():
    """No queued events, emitters or default client before or after (the hook runs in this process)."""
    EMITTERS.shutdown()
    yield
    EMITTERS.shutdown()


def test_spark_and_hooked_pyiceberg_on_one_table(spark, tmp_path, monkeypatch, fresh_emitters):
    require("sqlite-jdbc")
    full = f"{JDBC}.{TABLE}"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {JDBC}.{NAMESPACE}")
    spark.sql(f"CREATE TABLE {full} (id BIGINT, v STRING) USING iceberg "
              f"TBLPROPERTIES ('format-version'='2', {MERGE_ON_READ})")
    collector = Collector()
    try:
        spark.sql(f"INSERT INTO {full} VALUES (1, 'v1'), (2, 'v2')")  # s1 Spark
        observe(spark.pyiceberg_catalog(), client=collector.client).load_table(TABLE).append(
            pyiceberg_rows(10, 11))  # s2 hooked, in the ledger
        spark.sql(f"INSERT INTO {full} VALUES (3, 'v3')")  # s3 Spark
        spark.sql(f"DELETE FROM {full} WHERE id = 1")  # s4 Spark, a position delete
        monkeypatch.setenv("ICEBERG_LINEAGE__HOOK__LEDGER", "false")
        observe(spark.pyiceberg_catalog(), client=collector.client).load_table(TABLE).append(
            pyiceberg_rows(20))  # s5 hooked, not in the ledger
        hooked = valid(collector.events())
    finally:
        collector.stop()

    live = capture(spark, full)
    compare(live)
    ids = [s["snapshot_id"] for s in live.snapshots]
    summaries = [s["summary"] for s in live.snapshots]
    assert [s.get("engine-name") for s in summaries] == ["spark", None, "spark", "spark", None]
    owners = [ownership(s) for s in summaries]
    assert [o and o.owner for o in owners] == [None, "snapshot", None, None, "snapshot"]
    table = spark.pyiceberg_catalog().load_table(TABLE)
    uuid = str(table.metadata.table_uuid)
    run_id = {s.snapshot_id: str(snapshot_run_id(uuid, s.snapshot_id, s.timestamp_ms))
              for s in table.metadata.snapshots}
    hook_runs = runs(hooked)
    assert list(hook_runs) == [run_id[ids[1]], run_id[ids[4]]]
    assert {e["job"]["name"] for e in hooked} == {f"{TABLE}.pyiceberg"}
    for sid in (ids[1], ids[4]):  # what the hook said of its commits, against Iceberg Java
        assert hook_figures(hook_runs[run_id[sid]][-1]) == java_figures(live.java[sid]), sid

    only_mine = TableFilter(namespaces=(NAMESPACE,))
    summary, sink = run_scan(spark.pyiceberg_catalog(), tmp_path / SHARED_STATE, filters=only_mine)
    scanned = valid(sink.parsed)
    assert (summary.snapshots_emitted, summary.snapshots_by_hooks, summary.snapshots_resent) == (3, 1, 1)
    by_run = runs(scanned)
    assert list(by_run) == [run_id[ids[0]], run_id[ids[2]], run_id[ids[3]], run_id[ids[4]]]
    completes = [[e for e in events if e["eventType"] == "COMPLETE"] for events in by_run.values()]
    assert [snapshot_ids(events) for events in completes] == [[ids[0]], [ids[2]], [ids[3]], [ids[4]]]

    def key(event):
        return event["run"]["runId"], event["job"]["name"], event["eventType"], event["eventTime"]

    # the unledgered hook snapshot: the hook's very run again; the ledgered one: not at all
    # (a re-send cannot know how long the commit took: its START is the hook's, its COMPLETE at the same instant)
    resent, hooked = by_run[run_id[ids[4]]], hook_runs[run_id[ids[4]]]
    assert [key(e)[:3] for e in resent] == [key(e)[:3] for e in hooked] and key(resent[0]) == key(hooked[0])
    assert [e["eventType"] for e in by_run[run_id[ids[4]]]] == ["START", "COMPLETE"]
    app_id, version = spark.session.sparkContext.applicationId, spark.session.version
    for sid in (ids[0], ids[2], ids[3]):
        events = by_run[run_id[sid]]
        assert [e["eventType"] for e in events] == ["START", "COMPLETE"]  # the scanner's run of a snapshot
        for event in events:
            facets = event["run"]["facets"]
            assert event["job"]["name"] == f"{TABLE}.spark"
            assert (facets["externalQuery"]["externalQueryId"], facets["externalQuery"]["source"]) == (app_id, "spark")
            assert (facets["processing_engine"]["name"], facets["processing_engine"]["version"]) == ("spark", version)

    again, sink = run_scan(spark.pyiceberg_catalog(), tmp_path / SHARED_STATE, filters=only_mine)
    assert sink.events == [] and (again.snapshots_emitted, again.snapshots_resent) == (0, 0)
