"""Live tables written by Spark (Iceberg Java), each built once per session, with what Iceberg Java reports of
every snapshot captured right after the build (before any later change could hide it)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from tests.support.engines import HADOOP, JDBC, SparkEngine, require
from tests.support.iceberg_java import column_types, java_figures, java_snapshots, lineage_stats

MERGE_ON_READ = ("'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
                 "'write.merge.mode'='merge-on-read'")
#: Columns of every type the metadata tables give bounds for; ``name`` values run past the 16 characters that
#: Iceberg's default ``truncate(16)`` keeps, ``amount`` holds NaN and nulls.
COLUMNS = ("id BIGINT, name STRING, amount DOUBLE, price DECIMAL(10,2), day DATE, ts TIMESTAMP, flag BOOLEAN, "
           "part STRING")


def rows(start: int, count: int, part: str) -> str:
    """``count`` rows of :data:`COLUMNS` as a single-file SELECT (COALESCE(1): one data file per statement)."""
    values = []
    for i in range(start, start + count):
        amount = "CAST('NaN' AS DOUBLE)" if i % 7 == 3 else ("NULL" if i % 5 == 4 else f"{i * 1.5}")
        name = "NULL" if i % 6 == 5 else f"'customer-with-a-long-name-{i:04d}'"
        values.append(f"({i}, {name}, {amount}, {i}.25, DATE '2024-01-01' + {i % 3}, "
                      f"TIMESTAMP '2024-01-01 10:00:00' + INTERVAL {i} MINUTES, {str(i % 2 == 0).lower()}, '{part}')")
    return f"SELECT /*+ COALESCE(1) */ * FROM VALUES {', '.join(values)} AS v({', '.join(COLUMN_NAMES)})"


COLUMN_NAMES = [c.split()[0] for c in COLUMNS.split(", ")]


@dataclass
class LiveTable:
    """A Spark-written table: its newest metadata file and Iceberg Java's figures of each of its snapshots."""

    name: str
    metadata: str
    snapshots: list[dict[str, Any]]
    java: dict[int, dict[str, Any]]
    stats: dict[str, Any]  # what the CLI said at the same moment


def capture(spark: SparkEngine, table: str) -> LiveTable:
    metadata = spark.metadata_location(table)
    types = column_types(metadata)
    snapshots = java_snapshots(spark, table)
    java = {s["snapshot_id"]: java_figures(spark, table, s["snapshot_id"], types) for s in snapshots}
    return LiveTable(table, metadata, snapshots, java, lineage_stats(metadata))


def create(spark: SparkEngine, table: str, version: int, partitioned_by: str = "", merge_on_read: bool = True):
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {table.rsplit('.', 1)[0]}")
    partitioning = f"PARTITIONED BY ({partitioned_by})" if partitioned_by else ""
    props = f"'format-version'='{version}'" + (f", {MERGE_ON_READ}" if merge_on_read else "")
    spark.sql(f"CREATE TABLE {table} ({COLUMNS}) USING iceberg {partitioning} TBLPROPERTIES ({props})")


@pytest.fixture(scope="session")
def v2_merge_on_read(spark) -> LiveTable:
    """v2, partitioned by ``part``, in the JDBC catalog: DELETE, UPDATE and MERGE write position deletes."""
    require("sqlite-jdbc")
    table = f"{JDBC}.db.v2_merge_on_read"
    create(spark, table, 2, "part")
    spark.sql(f"INSERT INTO {table} {rows(0, 20, 'a')}")
    spark.sql(f"INSERT INTO {table} {rows(20, 20, 'b')}")
    spark.sql(f"DELETE FROM {table} WHERE id % 4 = 1")
    spark.sql(f"UPDATE {table} SET amount = -1.0, name = 'updated' WHERE id IN (2, 22, 30)")
    spark.sql(f"MERGE INTO {table} t USING ({rows(35, 10, 'b')}) s ON t.id = s.id "
              f"WHEN MATCHED THEN UPDATE SET t.amount = s.amount + 100 WHEN NOT MATCHED THEN INSERT *")
    return capture(spark, table)


@pytest.fixture(scope="session")
def v3_deletion_vectors(spark) -> LiveTable:
    """v3, Hadoop catalog: two MERGEs on the same data file (the second DV replaces the first), then a DELETE that
    drops a whole file (its partition)."""
    table = f"{HADOOP}.db.v3_deletion_vectors"
    create(spark, table, 3, "part")
    spark.sql(f"INSERT INTO {table} {rows(0, 30, 'a')}")
    spark.sql(f"INSERT INTO {table} {rows(30, 10, 'b')}")
    for ids, bump in (("(1, 2, 3)", 10), ("(4, 5, 6)", 20)):
        spark.sql(f"MERGE INTO {table} t USING (SELECT * FROM {table} WHERE id IN {ids}) s ON t.id = s.id "
                  f"WHEN MATCHED THEN UPDATE SET t.amount = {bump}")
    spark.sql(f"DELETE FROM {table} WHERE part = 'b'")
    return capture(spark, table)


@pytest.fixture(scope="session")
def v1_overwrite(spark) -> LiveTable:
    """v1 (copy-on-write only), Hadoop catalog: appends, a dynamic INSERT OVERWRITE of one partition and a DELETE."""
    table = f"{HADOOP}.db.v1_overwrite"
    create(spark, table, 1, "part", merge_on_read=False)
    spark.sql(f"INSERT INTO {table} {rows(0, 10, 'a')}")
    spark.sql(f"INSERT INTO {table} {rows(10, 10, 'b')}")
    spark.session.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        spark.sql(f"INSERT OVERWRITE {table} {rows(100, 5, 'b')}")
    finally:
        spark.session.conf.unset("spark.sql.sources.partitionOverwriteMode")
    spark.sql(f"DELETE FROM {table} WHERE id = 3")
    return capture(spark, table)


@dataclass
class ExpiredTable:
    """A table before and after ``expire_snapshots``: the metadata file written just before it still lists the
    expired snapshots, whose manifest lists are gone."""

    before: LiveTable
    after: LiveTable


@pytest.fixture(scope="session")
def maintained(spark) -> ExpiredTable:
    """v2 merge-on-read, JDBC catalog: small appends and position deletes, then Iceberg's maintenance procedures."""
    require("sqlite-jdbc")
    table, short = f"{JDBC}.db.maintained", "db.maintained"
    create(spark, table, 2, "part")
    for start in (0, 10, 20):
        spark.sql(f"INSERT INTO {table} {rows(start, 10, 'a')}")
    spark.sql(f"INSERT INTO {table} {rows(30, 10, 'b')}")
    spark.sql(f"DELETE FROM {table} WHERE id % 3 = 0")
    spark.sql(f"CALL {JDBC}.system.rewrite_position_delete_files(table => '{short}', "
              "options => map('rewrite-all', 'true'))")
    spark.sql(f"CALL {JDBC}.system.rewrite_data_files(table => '{short}', options => map('min-input-files', '2'))")
    spark.sql(f"CALL {JDBC}.system.rewrite_manifests('{short}')")
    before = capture(spark, table)
    spark.sql(f"CALL {JDBC}.system.expire_snapshots(table => '{short}', "
              "older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)")
    return ExpiredTable(before, capture(spark, table))


@pytest.fixture(scope="session")
def evolved(spark) -> LiveTable:
    """v2, Hadoop catalog: partitioning identity(part) -> bucket(4, id) -> days(ts); columns added, renamed and
    widened from int to long; an append after each change."""
    table = f"{HADOOP}.db.evolved"
    create(spark, table, 2, "part")
    spark.sql(f"INSERT INTO {table} {rows(0, 10, 'a')}")
    spark.sql(f"ALTER TABLE {table} REPLACE PARTITION FIELD part WITH bucket(4, id)")
    spark.sql(f"INSERT INTO {table} {rows(10, 10, 'b')}")
    spark.sql(f"ALTER TABLE {table} REPLACE PARTITION FIELD bucket(4, id) WITH days(ts)")
    spark.sql(f"ALTER TABLE {table} ADD COLUMN extra INT")
    spark.sql(f"INSERT INTO {table} SELECT *, CAST(id AS INT) FROM ({rows(20, 10, 'c')})")
    spark.sql(f"ALTER TABLE {table} RENAME COLUMN name TO full_name")
    spark.sql(f"ALTER TABLE {table} ALTER COLUMN extra TYPE BIGINT")
    spark.sql(f"INSERT INTO {table} SELECT *, id * 1000000000L FROM ({rows(30, 10, 'd')})")
    return capture(spark, table)
