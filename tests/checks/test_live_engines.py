"""The rules on tables live engines write, each assertion against Iceberg Java's own metadata tables: Spark
(merge-on-read position deletes, many small appends, an INSERT OVERWRITE) and Sail (equality deletes)."""
from __future__ import annotations

import pytest

from iceberg_lineage.checks import check_snapshot
from iceberg_lineage.config import Settings
from iceberg_lineage.quality.rules import rule_set
from iceberg_lineage.read.source import open_table
from tests.support.engines import HADOOP, JDBC

RULES = {"delete_ratio": {"max": 0.2}, "small_files": {"size": "1MB", "max_ratio": 0.5},
         "equality_deletes": {"max_files_ratio": 0.1}, "row_count": {"max_drop_pct": 50}}


def _files(spark, table: str, snapshot_id: int) -> list:
    return spark.sql(f"SELECT content, record_count, file_size_in_bytes FROM {table}.files VERSION AS OF {snapshot_id}")


def _check(metadata: str, snapshot_id: int):
    result = check_snapshot(open_table(metadata), rule_set(RULES), Settings(), snapshot_id)
    return {a.name: a for a in result.assertions}


def _snapshots(spark, table: str) -> list:
    return spark.sql(f"SELECT snapshot_id, operation FROM {table}.snapshots ORDER BY committed_at")


@pytest.fixture(scope="module")
def spark_table(spark):
    """v2 merge-on-read: five one-file appends of 4 rows, a DELETE (position deletes), an INSERT OVERWRITE."""
    table = f"{JDBC}.db.checks_merge_on_read"
    spark.sql(f"CREATE TABLE {table} (id BIGINT, v STRING) USING iceberg TBLPROPERTIES ('format-version'='2', "
              "'write.delete.mode'='merge-on-read')")
    for n in range(5):
        spark.sql(f"INSERT INTO {table} SELECT /*+ COALESCE(1) */ id, 'v' FROM range({n * 4}, {n * 4 + 4})")
    spark.sql(f"DELETE FROM {table} WHERE id % 4 = 1 OR id = 2")
    deleted = spark.metadata_location(table)
    spark.sql(f"INSERT OVERWRITE {table} SELECT /*+ COALESCE(1) */ id, 'w' FROM range(0, 3)")
    return table, deleted, spark.metadata_location(table)


def test_delete_ratio_and_small_files_after_merge_on_read_deletes(spark, spark_table):
    table, metadata, _ = spark_table
    snapshots = _snapshots(spark, table)
    delete = snapshots[5]
    assert delete.operation in ("delete", "overwrite")
    files = _files(spark, table, delete.snapshot_id)
    records = sum(f.record_count for f in files if f.content == 0)
    position_deletes = sum(f.record_count for f in files if f.content == 1)
    data = [f for f in files if f.content == 0]
    small = sum(1 for f in data if f.file_size_in_bytes < 1 << 20)
    assert (records, position_deletes, len(data), small) == (20, 6, 5, 5)  # by hand: ids 1,5,9,13,17 and 2
    got = _check(metadata, delete.snapshot_id)
    assert (got["delete_ratio"].success, got["delete_ratio"].actual) == (False, "0.3 (6 of 20)")
    assert (got["small_files"].success, got["small_files"].actual) == (False, "1 (5 of 5)")
    assert got["equality_deletes"].actual == "0 (0 of 5)"
    row = got["row_count"]  # 14 rows by estimate (20 - 6) against 20 before the delete
    assert (row.success, row.actual) == (True, "14 (-30.0% from 20)")
    assert row.description.startswith("estimate: records minus position and DV deletes")


def test_row_drop_after_insert_overwrite(spark, spark_table):
    table, _, metadata = spark_table
    last = _snapshots(spark, table)[-1]
    assert last.operation == "overwrite"
    rows = spark.sql(f"SELECT count(*) AS n FROM {table}")[0].n
    assert rows == 3
    row = _check(metadata, last.snapshot_id)["row_count"]
    assert (row.success, row.actual) == (False, "3 (-78.6% from 14)")  # 14 estimated before: -78.6%


@pytest.fixture(scope="module")
def sail_table(spark, sail):
    """Sail, merge-on-read: 12 rows in one file, then a DELETE that writes equality deletes."""
    table = "checks_equality_deletes"
    location = f"file://{spark.root / HADOOP / 'db' / table}"
    sail.sql(f"CREATE TABLE {table} (id BIGINT, name STRING) USING iceberg LOCATION '{location}' "
             "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')",
             f"INSERT INTO {table} SELECT id, concat('n', id) FROM range(0, 12)",
             f"DELETE FROM {table} WHERE id % 3 = 0")
    return f"{HADOOP}.db.{table}", location


def test_equality_deletes_from_sail(spark, sail_table):
    table, location = sail_table
    last = _snapshots(spark, table)[-1]
    files = _files(spark, table, last.snapshot_id)
    equality = [f for f in files if f.content == 2]
    data = [f for f in files if f.content == 0]
    assert equality and data
    got = _check(spark.metadata_location(table), last.snapshot_id)
    ratio = len(equality) / len(data)
    assert got["equality_deletes"].actual == f"{ratio:.4g} ({len(equality)} of {len(data)})"
    assert got["equality_deletes"].success is (ratio <= 0.1)
    row = got["row_count"]  # equality-deleted rows cannot be counted from metadata: records, said as an estimate
    assert row.actual.startswith(f"{sum(f.record_count for f in data)} ")
    assert "equality deletes not subtracted" in row.description


def test_equality_deletes_on_the_static_fixture():
    """The fixture written by Spark and the Java API: 4 equality-delete files over 2 data files (CATALOG.md)."""
    from tests.support.fixture_tables import fixture_table

    result = check_snapshot(fixture_table("duckdb_java_spark_eq_deletes"), rule_set(RULES), Settings())
    got = {a.name: a for a in result.assertions}
    assert (got["equality_deletes"].success, got["equality_deletes"].actual) == (False, "2 (4 of 2)")
    assert result.depth == "entries"  # the manifest list cannot tell equality from position deletes
