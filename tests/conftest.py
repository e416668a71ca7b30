"""Shared test fixtures: the real tables written by other engines (copied into tests/fixtures), made readable
from their new place, and PyIceberg SQLite catalogs with a local warehouse."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "iceberg-tables"

#: Where each fixture table's files were when it was written (the prefix found in its metadata and manifests).
_ORIGINAL_LOCATION = {
    "impala_hive_pos_deletes_6snaps": "/test-warehouse/iceberg_test/hadoop_catalog/ice/"
    "iceberg_v2_positional_not_all_data_files_have_delete_files",
    "impala_spark_v3_deletion_vectors": "hdfs://localhost:20500/test-warehouse/iceberg_v3_deletion_vectors",
    "impala_v1_trino_puffin_stats": "/test-warehouse/iceberg_with_puffin_stats",
    "icebergpython_bigquery_v1": "gs://kevinliu_blmt",
}

FIXTURE_TABLES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def fixture_relocation(name: str) -> dict[str, str]:
    """The relocation that makes a fixture table readable where it lies now (duckdb tables are relative)."""
    original = _ORIGINAL_LOCATION.get(name)
    return {original: str(FIXTURES / name)} if original else {}


def fixture_table(name: str):
    from iceberg_lineage.source import open_table

    return open_table(str(FIXTURES / name), relocate=fixture_relocation(name))


@pytest.fixture
def sql_catalog(tmp_path):
    """A PyIceberg SqlCatalog on SQLite with a real local warehouse."""
    from pyiceberg.catalog.sql import SqlCatalog

    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    catalog = SqlCatalog("test", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{warehouse}")
    catalog.create_namespace("db")
    return catalog


@pytest.fixture(autouse=True)
def _isolated_cwd_env(monkeypatch, tmp_path):
    """Tests never read the developer's configuration nor write into the source tree."""
    for name in list(os.environ):
        if name.startswith(("OPENLINEAGE", "ICEBERG_LINEAGE", "PYICEBERG_")):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
