"""The ``stats`` command as users run it: a real subprocess, JSON parsed back, exit codes and one-line errors."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fixture_tables import FIXTURES, fixture_relocation

CLI = [sys.executable, "-m", "iceberg_lineage.cli"]
SNAPSHOT_KEYS = {
    "snapshot_id", "parent_id", "operation", "timestamp_ms", "sequence_number", "schema_id", "refs", "staged",
    "available", "data_files", "records", "data_files_size_bytes", "position_delete_files", "equality_delete_files",
    "dv_files", "position_deletes", "equality_deletes", "delete_files_size_bytes", "total_files_size_bytes",
    "added_data_files", "removed_data_files", "added_records", "removed_records", "live_records", "data_manifests",
    "delete_manifests", "sources", "columns",
}
COLUMN_KEYS = {"value_count", "null_count", "nan_count", "min", "max", "distinct_count", "bounds_truncated"}


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENLINEAGE", "ICEBERG_LINEAGE"))}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120, cwd=cwd, env=env)


def relocate_args(name: str) -> list[str]:
    return [arg for old, new in fixture_relocation(name).items() for arg in ("--relocate", f"{old}={new}")]


def test_stats_json_contract_for_all_snapshots():
    name = "impala_spark_v3_deletion_vectors"
    proc = run("stats", "--metadata", str(FIXTURES / name), "--all-snapshots", "--format", "json", *relocate_args(name))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert set(doc["table"]) >= {"uuid", "location", "format_version", "current_snapshot_id"}
    assert doc["table"]["format_version"] == 3
    assert [s["snapshot_id"] for s in doc["snapshots"]] == [2700858159721908397, 3685752423136077685]
    for snap in doc["snapshots"]:
        assert SNAPSHOT_KEYS <= set(snap)
        for col in snap["columns"].values():
            assert COLUMN_KEYS <= set(col)
    last = doc["snapshots"][-1]
    assert (last["dv_files"], last["delete_files_size_bytes"], last["live_records"]) == (2, 84, 3)
    assert last["sources"]["records"] == "summary" and last["sources"]["dv_files"] == "entries"


def test_stats_json_bounds_forms():
    proc = run("stats", "--metadata", str(FIXTURES / "duckdb_java_spark_eq_deletes"), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    snap = json.loads(proc.stdout)["snapshots"][0]
    assert snap["columns"]["bir"]["min"] == "2025-01-01"  # dates as ISO-8601 strings
    assert snap["columns"]["id"]["max"] == 6 and isinstance(snap["columns"]["id"]["max"], int)
    decimal = run("stats", "--metadata", str(FIXTURES / "impala_v1_trino_puffin_stats"), "--format", "json",
                  *relocate_args("impala_v1_trino_puffin_stats"))
    cols = json.loads(decimal.stdout)["snapshots"][0]["columns"]
    assert cols["d"]["min"] == "1" and cols["d"]["distinct_count"] == 2  # decimals as strings


def test_snapshot_selection_and_depth():
    path = str(FIXTURES / "duckdb_java_spark_eq_deletes")
    proc = run("stats", "--metadata", path, "--snapshot", "853766660775201079", "--depth", "summary", "--format", "json")
    snap = json.loads(proc.stdout)["snapshots"]
    assert len(snap) == 1 and snap[0]["records"] == 4 and snap[0]["data_manifests"] is None
    assert run("stats", "--metadata", path, "--snapshot", "1", "--format", "json").returncode == 1


def test_text_format_renders_a_table():
    proc = run("stats", "--metadata", str(FIXTURES / "duckdb_spark_partition_evolution"), "--format", "text")
    assert proc.returncode == 0
    assert "data files" in proc.stdout and "records" in proc.stdout


@pytest.mark.parametrize(
    "damage,expected",
    [
        (lambda p: p.write_text("{not json"), "not valid JSON"),
        (lambda p: p.write_text(json.dumps({**json.loads(p.read_text()), "format-version": 9})), "unsupported format-version 9"),
        (lambda p: p.unlink(), "not found"),
    ],
)
def test_broken_metadata_gives_one_line_and_exit_1(tmp_path, damage, expected):
    table = tmp_path / "t"
    shutil.copytree(FIXTURES / "duckdb_spark_partition_evolution", table)
    meta = table / "metadata" / "v4.metadata.json"
    damage(meta)
    proc = run("stats", "--metadata", str(meta), "--format", "json")
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0] and str(meta) in lines[0]
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_truncated_manifest_names_table_and_file(tmp_path):
    table = tmp_path / "t"
    shutil.copytree(FIXTURES / "duckdb_spark_partition_evolution", table)
    manifest = table / "metadata" / "fee93099-6425-4d83-bd7c-0aa646533090-m0.avro"
    manifest.write_bytes(manifest.read_bytes()[:300])
    proc = run("stats", "--metadata", str(table), "--format", "json")
    assert proc.returncode == 1
    assert "fee93099-6425-4d83-bd7c-0aa646533090-m0.avro" in proc.stderr and "table " in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    debug = run("stats", "--metadata", str(table), "--format", "json", "--debug")
    assert "Traceback" in debug.stderr


def test_usage_errors_exit_2():
    assert run("stats").returncode == 2
    assert run("stats", "--metadata", "x", "--catalog", "c", "--table", "a.b").returncode == 2
    assert run("stats", "--depth", "everything", "--metadata", "x").returncode == 2
    assert run("stats", "--metadata", str(FIXTURES / "duckdb_spark_partition_evolution"), "--snapshot", "1",
               "--all-snapshots").returncode == 2


def test_catalog_and_table_through_pyiceberg_config(tmp_path, sql_catalog):
    import pyarrow as pa

    table = sql_catalog.create_table("db.orders", schema=pa.schema([("id", pa.int64())]))
    table.append(pa.table({"id": pa.array([1, 2, 3], pa.int64())}))
    (tmp_path / ".pyiceberg.yaml").write_text(
        f"catalog:\n  test:\n    type: sql\n    uri: {sql_catalog.properties['uri']}\n"
        f"    warehouse: {sql_catalog.properties['warehouse']}\n"
    )
    env_home = tmp_path
    proc = subprocess.run([*CLI, "stats", "--catalog", "test", "--table", "db.orders", "--format", "json"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYICEBERG_HOME": str(env_home)})
    assert proc.returncode == 0, proc.stderr
    snap = json.loads(proc.stdout)["snapshots"][0]
    assert snap["records"] == 3 and snap["columns"]["id"]["max"] == 3
    missing = subprocess.run([*CLI, "stats", "--catalog", "test", "--table", "db.nope"], capture_output=True,
                             text=True, timeout=120, cwd=tmp_path, env={**os.environ, "PYICEBERG_HOME": str(env_home)})
    assert missing.returncode == 1 and "db.nope" in missing.stderr
