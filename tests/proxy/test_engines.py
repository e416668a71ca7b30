"""Spark 3.5 with Iceberg 1.10 Java (``type=rest``, uri = the proxy) and DuckDB's iceberg extension through the
proxy: every snapshot they commit gets exactly one schema-valid COMPLETE with the scanner's runId, named
``<ns>.<table>.<engine>``, and each table they create one CREATE."""
from __future__ import annotations

from iceberg_lineage.lineage.events import snapshot_run_id
from tests.proxy.test_pyiceberg import lifecycle_events
from tests.support.olschema import validate_event
from tests.support.proxy import wait_until


def check(stack, name: str, job: str, operations: list[str]) -> None:
    """Each of the table's snapshots has exactly one START and one COMPLETE (schema-valid, the scanner's runId and
    job name), and the table one CREATE."""
    metadata = stack.seaweed.catalog("direct").load_table(name).metadata
    assert [s.summary.operation.value for s in metadata.snapshots] == operations
    expected = {str(snapshot_run_id(str(metadata.table_uuid), s.snapshot_id, s.timestamp_ms)) for s in metadata.snapshots}
    # a run's START goes out at once: wait for its COMPLETE
    wait_until(lambda: expected <= {e["run"]["runId"] for e in stack.lineage.accepted_events()
                                    if e["eventType"] == "COMPLETE"})
    stack.lineage.wait_idle()
    events = stack.lineage.accepted_events()
    for event in events:
        validate_event(event)
    sent = [e for e in events if e["run"]["runId"] in expected and e["eventType"] != "START"]
    assert sorted(e["run"]["runId"] for e in sent) == sorted(expected)
    assert {(e["eventType"], e["job"]["name"]) for e in sent} == {("COMPLETE", job)}
    starts = [e for e in events if e["run"]["runId"] in expected and e["eventType"] == "START"]
    assert sorted(e["run"]["runId"] for e in starts) == sorted(expected)  # each run's START too
    catalog_job = f"{name}.catalog"
    assert [e["job"]["name"] for e in lifecycle_events(events, "CREATE") if e["job"]["name"] == catalog_job] == [
        catalog_job]


def test_spark_insert_merge_delete_through_the_proxy(stack, spark):
    from tests.support.rest_engines import spark_rest_catalog

    catalog = spark_rest_catalog(spark, "via_proxy", stack.proxy.uri, stack.seaweed)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {catalog}.sparkns")
    spark.sql(f"CREATE TABLE {catalog}.sparkns.t (id BIGINT, v STRING) USING iceberg "
              "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', "
              "'write.merge.mode'='merge-on-read', 'write.update.mode'='merge-on-read')")
    spark.sql(f"INSERT INTO {catalog}.sparkns.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    spark.sql(f"MERGE INTO {catalog}.sparkns.t t USING (SELECT 2 AS id, 'B' AS v UNION ALL SELECT 4, 'd') s "
              "ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *")
    spark.sql(f"DELETE FROM {catalog}.sparkns.t WHERE id = 1")
    check(stack, "sparkns.t", "sparkns.t.spark", ["append", "overwrite", "delete"])


def test_duckdb_create_insert_delete_update_merge_through_the_proxy(stack):
    from tests.support.duckdb_engine import duckdb_connection

    duck = duckdb_connection(stack.seaweed, uri=stack.proxy.uri)
    duck.execute("CREATE SCHEMA IF NOT EXISTS lake.duckns")
    duck.execute("CREATE TABLE lake.duckns.t (id BIGINT, v VARCHAR)")
    duck.execute("INSERT INTO lake.duckns.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    duck.execute("DELETE FROM lake.duckns.t WHERE id = 1")
    duck.execute("UPDATE lake.duckns.t SET v = 'B' WHERE id = 2")
    duck.execute("MERGE INTO lake.duckns.t t USING (SELECT 4 AS id, 'd' AS v) s ON t.id = s.id "
                 "WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v)")
    duck.close()
    # DuckDB names no engine in its summaries; its UPDATE is one overwrite (a delete file and the new row)
    check(stack, "duckns.t", "duckns.t.commit", ["append", "delete", "overwrite", "append"])
