"""A table written by another engine (Spark via DuckDB's test data, Impala/Hive), registered in a SQLite catalog
and scanned like any other: its whole history, once."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.olschema import validate_event

from iceberg_lineage.read.metadata_json import parse_metadata
from tests.support.relocate import relocated_copy
from tests.support.scan import run_scan, snapshot_ids

FIXTURES = Path(__file__).parent.parent / "fixtures" / "iceberg-tables"
ORIGINAL_PREFIX = {
    "duckdb_spark_partition_evolution": "data/persistent/hive_partitioned_table",
    "impala_hive_pos_deletes_6snaps": "/test-warehouse/iceberg_test/hadoop_catalog/ice/"
                                      "iceberg_v2_positional_not_all_data_files_have_delete_files",
}


@pytest.mark.parametrize("name", sorted(ORIGINAL_PREFIX))
def test_registered_foreign_table_full_history(sql_catalog, tmp_path, state_path, name):
    current = relocated_copy(FIXTURES / name, tmp_path / "copy" / name, ORIGINAL_PREFIX[name])
    sql_catalog.register_table(("db", "foreign"), f"file://{current}")
    md = parse_metadata(json.loads(current.read_text()), str(current))

    summary, sink = run_scan(sql_catalog, state_path)

    assert summary.exit_code == 0, summary.failures
    assert snapshot_ids(sink.parsed) == [s.snapshot_id for s in md.snapshots_in_commit_order()]
    for event in sink.parsed:
        validate_event(event)
        assert event["job"]["name"].startswith("db.foreign.")
    for event in sink.terminal:  # a START names no output
        assert event["outputs"][0]["name"] == str(tmp_path / "copy" / name)
    assert run_scan(sql_catalog, state_path)[1].events == []
