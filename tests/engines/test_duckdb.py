"""DuckDB (its own C++ Iceberg writer) writes a v2 table through the REST catalog: CREATE, INSERT, DELETE, UPDATE
and MERGE. Every snapshot's figures from ``iceberg-lineage stats`` (by catalog) against Iceberg Java's metadata
tables, read by the session's Spark through the same REST catalog.

What DuckDB 1.5.5 writes: merge-on-read only, position-delete files (Parquet, content 1) in v2, one per partition
per statement and not file-scoped (no ``referenced_data_file``); an UPDATE is those deletes plus a new data file;
a MERGE commits twice (an ``overwrite`` for the matched rows, then an ``append`` for the new ones). In v3 it writes
deletion vectors, as Puffin files, which SeaweedFS refuses (``test_v3_delete_refused_by_seaweedfs``).
"""
from __future__ import annotations

import pytest
from tests.engines.conftest import LiveTable, capture
from tests.engines.test_exactness import compare
from tests.support.duckdb_engine import CATALOG, duckdb_connection

NAMESPACE = "duckdb_writes"
COLUMNS = ("id BIGINT, name VARCHAR, amount DOUBLE, price DECIMAL(10,2), day DATE, ts TIMESTAMP, flag BOOLEAN, "
           "part VARCHAR")


def rows(start: int, count: int, part: str) -> str:
    """The rows of tests/engines/conftest.py ``rows()`` (long names, NaN and null amounts), in DuckDB's SQL."""
    return (f"SELECT i AS id, CASE WHEN i % 6 = 5 THEN NULL ELSE 'customer-with-a-long-name-' || lpad(i::VARCHAR, 4, "
            "'0') END AS name, CASE WHEN i % 7 = 3 THEN 'NaN'::DOUBLE WHEN i % 5 = 4 THEN NULL ELSE i * 1.5 END "
            "AS amount, (i + 0.25)::DECIMAL(10,2) AS price, DATE '2024-01-01' + (i % 3)::INTEGER AS day, "
            "TIMESTAMP '2024-01-01 10:00:00' + INTERVAL (i) MINUTE AS ts, i % 2 = 0 AS flag, "
            f"'{part}' AS part FROM range({start}, {start + count}) r(i)")


@pytest.fixture(scope="module")
def duck(seaweed):
    connection = duckdb_connection(seaweed)
    connection.execute(f"CREATE SCHEMA IF NOT EXISTS {CATALOG}.{NAMESPACE}")
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def duckdb_table(spark, seaweed, rest_catalog, duck) -> LiveTable:
    """v2, partitioned by ``part``: two appends, a DELETE, an UPDATE and a MERGE, all by DuckDB."""
    table = f"{CATALOG}.{NAMESPACE}.v2_merge_on_read"
    duck.execute(f"CREATE TABLE {table} ({COLUMNS}) PARTITIONED BY (part) WITH ('format-version'='2')")
    duck.execute(f"INSERT INTO {table} {rows(0, 20, 'a')}")
    duck.execute(f"INSERT INTO {table} {rows(20, 20, 'b')}")
    duck.execute(f"DELETE FROM {table} WHERE id % 4 = 1")
    duck.execute(f"UPDATE {table} SET amount = -1.0, name = 'updated' WHERE id IN (2, 22, 30)")
    duck.execute(f"MERGE INTO {table} t USING ({rows(35, 10, 'b')}) s ON t.id = s.id "
                 "WHEN MATCHED THEN UPDATE SET amount = s.amount + 100 WHEN NOT MATCHED THEN INSERT *")
    return capture(spark, f"{rest_catalog}.{NAMESPACE}.v2_merge_on_read", seaweed.catalog_properties())


def test_duckdb_writes_exact_against_iceberg_java(spark, duckdb_table, duck):
    compare(duckdb_table)
    java = [duckdb_table.java[s["snapshot_id"]] for s in duckdb_table.snapshots]
    # A MERGE is two commits: the matched rows (deletes + their new versions), then the new rows.
    assert [s["operation"] for s in duckdb_table.snapshots] == ["append", "append", "delete", "overwrite",
                                                                "overwrite", "append"]
    # Position deletes that accumulate: one file per partition per statement, never replaced, never file-scoped.
    assert [j["position_delete_files"] for j in java] == [0, 0, 2, 4, 5, 5]
    assert [j["removed_delete_files"] for j in java] == [0] * 6 and all(j["dv_files"] == 0 for j in java)
    scoped = spark.sql(f"SELECT referenced_data_file FROM {duckdb_table.name}.delete_files")
    assert len(scoped) == 5 and {row.referenced_data_file for row in scoped} == {None}
    live = duck.execute(f"SELECT count(*) FROM {CATALOG}.{NAMESPACE}.v2_merge_on_read").fetchone()[0]
    assert [j["live_records"] for j in java] == [20, 40, 30, 30, 30, 36] and live == 36
    # DuckDB keeps no value counts, no NaN counts and no boolean bounds: both sides have none (null), not 0.
    columns = {c["name"]: c for c in java[-1]["columns"].values()}
    assert {c["value_count"] for c in columns.values()} == {None}
    assert columns["amount"]["nan_count"] is None and columns["amount"]["null_count"] == 9
    assert (columns["flag"]["min"], columns["flag"]["max"]) == (None, None)
    # Its string bounds are cut at 16 characters, as Iceberg Java's truncate(16).
    assert columns["name"]["min"] == "customer-with-a-" and columns["name"]["lower_truncated"]


def test_v3_delete_refused_by_seaweedfs(seaweed, duck):
    """In v3 DuckDB deletes with a deletion vector, a Puffin file, which SeaweedFS will not store (403): the DELETE
    fails and commits nothing."""
    import duckdb

    table = f"{CATALOG}.{NAMESPACE}.v3_delete"
    duck.execute(f"CREATE TABLE {table} (id BIGINT) WITH ('format-version'='3')")
    duck.execute(f"INSERT INTO {table} SELECT * FROM range(10)")
    with pytest.raises(duckdb.HTTPException, match=r"-deletes\.puffin: Forbidden \(HTTP code 403\)"):
        duck.execute(f"DELETE FROM {table} WHERE id = 1")
    snapshots = seaweed.catalog().load_table(f"{NAMESPACE}.v3_delete").metadata.snapshots
    assert [s.summary["added-records"] for s in snapshots] == ["10"]
