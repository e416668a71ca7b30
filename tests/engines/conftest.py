"""Live tables written by Spark (Iceberg Java), each built once per session, with what Iceberg Java reports of
every snapshot captured right after the build (before any later change could hide it)."""
from __future__ import annotations

from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.support.engines import HADOOP, JDBC, SparkEngine, require
from tests.support.iceberg_java import catalog_stats, column_types, java_figures, java_snapshots, lineage_stats
from tests.support.rest_engines import spark_rest_catalog
from tests.support.scan import run_scan

from iceberg_lineage.scan.discovery import TableFilter

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


def capture(spark: SparkEngine, table: str, catalog: Mapping[str, str] | None = None) -> LiveTable:
    """Iceberg Java's figures of every snapshot, then the CLI's: of the metadata file, or, given the PyIceberg
    ``catalog`` properties of the table's catalog (a REST catalog over S3), through that catalog by identifier."""
    metadata = spark.metadata_location(table)
    types = column_types(metadata, catalog)
    snapshots = java_snapshots(spark, table)
    java = {s["snapshot_id"]: java_figures(spark, table, s["snapshot_id"], types) for s in snapshots}
    if catalog is None:
        return LiveTable(table, metadata, snapshots, java, lineage_stats(metadata))
    name, identifier = table.split(".", 1)
    return LiveTable(table, metadata, snapshots, java, catalog_stats(name, catalog, identifier))


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
    write_v2_merge_on_read(spark, table)
    return capture(spark, table)


def write_v2_merge_on_read(spark: SparkEngine, table: str) -> None:
    """Two appends (one per partition), a DELETE, an UPDATE and a MERGE, all merge-on-read in v2."""
    create(spark, table, 2, "part")
    spark.sql(f"INSERT INTO {table} {rows(0, 20, 'a')}")
    spark.sql(f"INSERT INTO {table} {rows(20, 20, 'b')}")
    spark.sql(f"DELETE FROM {table} WHERE id % 4 = 1")
    spark.sql(f"UPDATE {table} SET amount = -1.0, name = 'updated' WHERE id IN (2, 22, 30)")
    spark.sql(f"MERGE INTO {table} t USING ({rows(35, 10, 'b')}) s ON t.id = s.id "
              f"WHEN MATCHED THEN UPDATE SET t.amount = s.amount + 100 WHEN NOT MATCHED THEN INSERT *")


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


def snapshot_ids(spark: SparkEngine, table: str) -> list[int]:
    """Every snapshot of the table in commit order (branches and staged ones included)."""
    return [s["snapshot_id"] for s in java_snapshots(spark, table)]


@contextmanager
def session_conf(spark: SparkEngine, key: str, value: str):
    """A Spark SQL setting for the statements inside (``spark.wap.branch``, ``spark.wap.id``)."""
    spark.session.conf.set(key, value)
    try:
        yield
    finally:
        spark.session.conf.unset(key)


@dataclass
class WapTable:
    """The write-audit-publish table, and a scan made halfway (after the staged commit) into ``state``."""

    live: LiveTable
    state: Path
    first_scan: list[dict[str, Any]]


@pytest.fixture(scope="session")
def write_audit_publish(spark) -> WapTable:
    """v2 merge-on-read, ``write.wap.enabled``, JDBC catalog (namespace ``wap``, scanned alone), nine snapshots:
    s1, s2 appends on main; tag ``first`` on s1; branch ``audit`` (``spark.wap.branch``): s3 append, s4 DELETE;
    s5 staged with ``spark.wap.id`` (no ref), then a scan; s6 append on main; s7 ``publish_changes`` (s5
    cherry-picked onto s6); s8 ``cherrypick_snapshot`` of s3; branch ``hotfix``: s9 append, main ``fast_forward``
    to it."""
    require("sqlite-jdbc")
    table, short = f"{JDBC}.wap.write_audit_publish", "wap.write_audit_publish"
    create(spark, table, 2, "part")
    spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('write.wap.enabled'='true')")
    spark.sql(f"INSERT INTO {table} {rows(0, 10, 'a')}")
    spark.sql(f"INSERT INTO {table} {rows(10, 10, 'b')}")
    spark.sql(f"ALTER TABLE {table} CREATE TAG first AS OF VERSION {snapshot_ids(spark, table)[0]}")
    spark.sql(f"ALTER TABLE {table} CREATE BRANCH audit")
    with session_conf(spark, "spark.wap.branch", "audit"):
        spark.sql(f"INSERT INTO {table} {rows(20, 10, 'c')}")
        spark.sql(f"DELETE FROM {table} WHERE id % 4 = 1")
    with session_conf(spark, "spark.wap.id", "wap-1"):
        spark.sql(f"INSERT INTO {table} {rows(30, 5, 'a')}")
    state = spark.root / "wap-state.db"
    _, first = run_scan(spark.pyiceberg_catalog(), state, filters=TableFilter(namespaces=("wap",)))
    spark.sql(f"INSERT INTO {table} {rows(40, 5, 'b')}")
    spark.sql(f"CALL {JDBC}.system.publish_changes('{short}', 'wap-1')")
    spark.sql(f"CALL {JDBC}.system.cherrypick_snapshot('{short}', {snapshot_ids(spark, table)[2]})")
    spark.sql(f"ALTER TABLE {table} CREATE BRANCH hotfix")
    with session_conf(spark, "spark.wap.branch", "hotfix"):
        spark.sql(f"INSERT INTO {table} {rows(50, 5, 'c')}")
    spark.sql(f"CALL {JDBC}.system.fast_forward('{short}', 'main', 'hotfix')")
    return WapTable(capture(spark, table), state, first.terminal)  # each run's COMPLETE, without its START


#: The session's SeaweedFS REST catalog as Spark names it, and the CLI through ``.pyiceberg.yaml``.
REST = "seaweed"


@pytest.fixture(scope="session")
def rest_catalog(spark, seaweed) -> str:
    """The session's Spark with SeaweedFS's REST catalog (its S3 through S3A) added as ``seaweed``."""
    return spark_rest_catalog(spark, REST, seaweed.uri, seaweed)


@pytest.fixture(scope="session")
def v2_rest(spark, seaweed, rest_catalog) -> LiveTable:
    """The v2 merge-on-read table again, in the REST catalog, its files in S3; the CLI reads it by identifier."""
    table = f"{rest_catalog}.exactness.v2_merge_on_read"
    write_v2_merge_on_read(spark, table)
    return capture(spark, table, seaweed.catalog_properties())


@dataclass
class SailTable:
    """A table Sail wrote, as Iceberg Java reads it, and the rows Sail itself counted after each of its commits."""

    live: LiveTable
    sail_counts: list[int]


@pytest.fixture(scope="session")
def sail_equality_deletes(spark, sail) -> SailTable:
    """Written by Sail into the Hadoop catalog's warehouse (a path table with ``version-hint.text``, which Spark's
    Hadoop catalog reads as ``hadoop.db.sail_equality_deletes``): v2, unpartitioned, merge-on-read; two appends,
    two DELETEs (equality deletes, every column a key), an append. Sail writes equality deletes neither for
    partitioned tables nor with float or double keys, hence the columns."""
    table = "sail_equality_deletes"
    location = f"file://{spark.root / HADOOP / 'db' / table}"
    values = ("SELECT id, IF(id % 6 = 5, NULL, concat('customer-with-a-long-name-', id)), id + 0.25, "
              "DATE '2024-01-01' + CAST(id % 3 AS INT), "
              "TIMESTAMP '2024-01-01 10:00:00' + make_interval(0, 0, 0, 0, 0, CAST(id AS INT)), id % 2 = 0")
    writes = [f"INSERT INTO {table} {values} FROM range(0, 20)", f"INSERT INTO {table} {values} FROM range(20, 30)",
              f"DELETE FROM {table} WHERE id % 3 = 0", f"DELETE FROM {table} WHERE name IS NULL",
              f"INSERT INTO {table} {values} FROM range(100, 105)"]
    answers = sail.sql(
        f"CREATE TABLE {table} (id BIGINT, name STRING, price DECIMAL(10,2), day DATE, ts TIMESTAMP, flag BOOLEAN) "
        f"USING iceberg LOCATION '{location}' "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')",
        *(statement for write in writes for statement in (write, f"SELECT count(*) FROM {table}")))
    return SailTable(capture(spark, f"{HADOOP}.db.{table}"), [answer[0][0] for answer in answers[2::2]])


@dataclass
class EngineTables:
    """Tables a live engine (Flink, Trino: issue 30) wrote through the bridge, by name, as Iceberg Java reads them
    from the same REST catalog (directly), and what the engine itself answered."""

    tables: dict[str, LiveTable]
    answers: list


def capture_rest(spark: SparkEngine, seaweed, rest_catalog: str, namespace: str, names: tuple[str, ...],
                 answers: list) -> EngineTables:
    return EngineTables({name: capture(spark, f"{rest_catalog}.{namespace}.{name}", seaweed.catalog_properties())
                         for name in names}, answers)


@pytest.fixture(scope="session")
def flink_tables(spark, seaweed, rest_catalog, flink_run) -> EngineTables:
    """Flink's two tables (:mod:`tests.support.flink`); its answers are its jobs' ids."""
    from tests.support.flink import NAMESPACE

    return capture_rest(spark, seaweed, rest_catalog, NAMESPACE, ("appends", "upserts"), flink_run.job_ids())


@pytest.fixture(scope="session")
def trino_tables(spark, seaweed, rest_catalog, trino_run) -> EngineTables:
    """Trino's two tables (:mod:`tests.support.trino`); its answers are those of its statements."""
    from tests.support.trino import NAMESPACE

    return capture_rest(spark, seaweed, rest_catalog, NAMESPACE, ("a", "b"), trino_run.answers())


@pytest.fixture(scope="session")
def spark_via_live_bridge(spark, live_bridge) -> dict:
    """The COMPLETE of one Spark INSERT through the live engines' bridge: how Spark's tables are named there."""
    from iceberg_lineage.lineage.events import snapshot_run_id

    catalog = spark_rest_catalog(spark, "live_bridge", live_bridge.proxy.uri, live_bridge.seaweed)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {catalog}.sparkref")
    spark.sql(f"CREATE TABLE {catalog}.sparkref.t (id BIGINT) USING iceberg")
    spark.sql(f"INSERT INTO {catalog}.sparkref.t VALUES (1)")
    metadata = live_bridge.seaweed.catalog("direct").load_table("sparkref.t").metadata
    [snapshot] = metadata.snapshots
    run = str(snapshot_run_id(str(metadata.table_uuid), snapshot.snapshot_id, snapshot.timestamp_ms))
    return live_bridge.completes({run})[run]
