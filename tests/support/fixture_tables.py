"""The real tables written by other engines (copied into tests/fixtures), made readable from their new place.

A module of its own (not conftest) so test files can import it by a unique name.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

FIXTURES = Path(__file__).parents[1] / "fixtures" / "iceberg-tables"

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
    from iceberg_lineage.read.source import open_table

    return open_table(str(FIXTURES / name), relocate=fixture_relocation(name))


def copied_table(tmp_path: Path, name: str) -> Path:
    """A private copy of a fixture table, for tests that edit or break its files."""
    dest = tmp_path / "t"
    shutil.copytree(FIXTURES / name, dest)
    return dest


#: A v2 fixture with deletes and several snapshots (one expired) whose paths are relative: a copy needs no
#: relocation, so tests that break its files work on a copy.
EDITABLE_TABLE = "duckdb_java_spark_eq_deletes"
EDITABLE_METADATA = "v7.metadata.json"


def current_metadata(table: Path) -> Path:
    """The current metadata file of a copy of :data:`EDITABLE_TABLE`."""
    return table / "metadata" / EDITABLE_METADATA


def current_manifest(table: Path) -> Path:
    """The first manifest of the current snapshot of a copy of :data:`EDITABLE_TABLE`."""
    import fastavro

    doc = json.loads(current_metadata(table).read_text())
    current = next(s for s in doc["snapshots"] if s["snapshot-id"] == doc["current-snapshot-id"])
    with open(table / "metadata" / Path(current["manifest-list"]).name, "rb") as f:
        first = next(iter(fastavro.reader(f)))
    return table / "metadata" / Path(first["manifest_path"]).name
