"""The walker on real tables written by Spark, Java, Hive, Impala/Trino and BigQuery.

Figures are checked three ways: against each snapshot's own summary, against an independent raw fastavro walk
written here, and against the known figures of CATALOG.md.
"""
from __future__ import annotations

import dataclasses
import uuid

import fastavro
import pytest

from tests.support.fixture_tables import FIXTURE_TABLES, fixture_table
from iceberg_lineage.read.metadata import STABLE_ID_NAMESPACE, normalise_location
from iceberg_lineage.stats import table_history

SUMMARY_KEYS = {
    "data_files": "total-data-files",
    "records": "total-records",
    "delete_files": "total-delete-files",
    "position_deletes": "total-position-deletes",
    "equality_deletes": "total-equality-deletes",
    "total_files_size_bytes": "total-files-size",
    "added_data_files": "added-data-files",
    "removed_data_files": "deleted-data-files",
    "added_records": "added-records",
    "removed_records": "deleted-records",
    "added_files_size_bytes": "added-files-size",
    "removed_files_size_bytes": "removed-files-size",
}

# CATALOG.md, current snapshot: data files, delete files (pos / DV / eq), records.
CATALOG = {
    "duckdb_java_spark_eq_deletes": (2, 0, 0, 4, 6),
    "duckdb_java_v1_name_mapping": (1, 0, 0, 0, 10000),
    "duckdb_spark_lineitem_cow": (1, 0, 0, 0, 51793),
    "duckdb_spark_partition_evolution": (6, 0, 0, 0, 6),
    "icebergpython_bigquery_v1": (2, 0, 0, 0, 6),
    "impala_hive_pos_deletes_6snaps": (4, 2, 0, 0, 10),
    "impala_spark_v3_deletion_vectors": (5, 0, 2, 0, 5),
    "impala_v1_trino_puffin_stats": (1, 0, 0, 0, 2),
}


def _without_summaries(table):
    """The same table with every snapshot summary emptied, so the walker must compute everything itself."""
    md = table.metadata
    snaps = tuple(dataclasses.replace(s, summary={}) for s in md.snapshots)
    return dataclasses.replace(table, metadata=dataclasses.replace(md, snapshots=snaps))


def _raw_walk(table, snapshot):
    """An independent count: every manifest of the snapshot, live entries by content, with plain fastavro."""
    io = table.io
    with io.open(snapshot.manifest_list) as f:
        manifests = list(fastavro.reader(f))
    out = {"data_files": 0, "records": 0, "pos": 0, "eq": 0, "dv": 0, "pos_rows": 0, "eq_rows": 0, "bytes": 0}
    for m in manifests:
        with io.open(m["manifest_path"]) as f:
            for e in fastavro.reader(f):
                if e["status"] == 2:
                    continue
                df = e["data_file"]
                content = df.get("content", 0)
                if content == 0:
                    out["data_files"] += 1
                    out["records"] += df["record_count"]
                    out["bytes"] += df["file_size_in_bytes"]
                elif content == 1 and df["file_format"].upper() == "PUFFIN":
                    out["dv"] += 1
                    out["pos_rows"] += df["record_count"]
                    out["bytes"] += df["content_size_in_bytes"]
                elif content == 1:
                    out["pos"] += 1
                    out["pos_rows"] += df["record_count"]
                    out["bytes"] += df["file_size_in_bytes"]
                else:
                    out["eq"] += 1
                    out["eq_rows"] += df["record_count"]
                    out["bytes"] += df["file_size_in_bytes"]
    return out


@pytest.mark.parametrize("name", FIXTURE_TABLES)
def test_every_snapshot_matches_its_summary_when_computed_from_entries(name):
    table = fixture_table(name)
    from_summary = table_history(table)
    from_entries = table_history(_without_summaries(table))
    assert len(from_summary) == len(table.metadata.snapshots)
    checked = 0
    for with_summary, computed in zip(from_summary, from_entries):
        summary = with_summary.summary
        if not computed.available:
            assert not with_summary.available
            continue
        for figure, key in SUMMARY_KEYS.items():
            if key in summary:
                assert getattr(with_summary, figure) == int(summary[key]), (figure, with_summary.snapshot_id)
                assert with_summary.sources[figure] == "summary"
                assert getattr(computed, figure) == int(summary[key]), (figure, computed.snapshot_id)
                assert computed.sources[figure] in ("manifest_list", "entries")
                checked += 1
    if name != "icebergpython_bigquery_v1":
        assert checked > 0


@pytest.mark.parametrize("name", FIXTURE_TABLES)
def test_every_available_snapshot_matches_an_independent_raw_walk(name):
    table = fixture_table(name)
    history = table_history(_without_summaries(table))
    for stats in history:
        if not stats.available:
            continue
        raw = _raw_walk(table, table.metadata.snapshot_by_id(stats.snapshot_id))
        assert stats.data_files == raw["data_files"]
        assert stats.records == raw["records"]
        assert stats.position_delete_files == raw["pos"]
        assert stats.equality_delete_files == raw["eq"]
        assert stats.dv_files == raw["dv"]
        assert stats.position_deletes == raw["pos_rows"]
        assert stats.equality_deletes == raw["eq_rows"]
        assert stats.total_files_size_bytes == raw["bytes"]


@pytest.mark.parametrize("name", FIXTURE_TABLES)
def test_current_snapshot_matches_catalog_md(name):
    stats = table_history(fixture_table(name)).snapshots[-1]
    data_files, pos, dv, eq, records = CATALOG[name]
    assert (stats.data_files, stats.position_delete_files, stats.dv_files, stats.equality_delete_files, stats.records) == (
        data_files, pos, dv, eq, records)
    assert stats.delete_files == pos + dv + eq


def test_expired_manifest_list_keeps_summary_figures_and_marks_unavailable():
    history = table_history(fixture_table("duckdb_java_spark_eq_deletes"))
    expired = {s.snapshot_id: s for s in history}[7342794868382145167]
    assert expired.available is False
    assert "manifest list not found" in expired.error
    assert expired.records == 4 and expired.sources["records"] == "summary"
    assert expired.equality_deletes == 1
    assert expired.data_manifests is None  # unknown, not 0
    assert all(s.available for s in history if s.snapshot_id != 7342794868382145167)


def test_deletion_vectors_use_content_size_and_give_exact_live_records():
    current = table_history(fixture_table("impala_spark_v3_deletion_vectors")).snapshots[-1]
    assert current.dv_files == 2 and current.position_delete_files == 0
    assert current.dv_deletes == 2 and current.position_deletes == 2
    # two 42-byte blobs in one shared Puffin file: 84 bytes, not twice the Puffin file size
    assert current.delete_files_size_bytes == 84
    assert current.total_files_size_bytes == 2044
    assert current.live_records == 3 and current.sources["live_records"] == "entries"


def test_position_and_equality_deletes_leave_live_records_unknown():
    for name in ("impala_hive_pos_deletes_6snaps", "duckdb_java_spark_eq_deletes"):
        current = table_history(fixture_table(name)).snapshots[-1]
        assert current.live_records is None


def test_table_without_uuid_gets_a_stable_id():
    first = fixture_table("icebergpython_bigquery_v1")
    second = fixture_table("icebergpython_bigquery_v1")
    assert first.metadata.table_uuid is None
    expected = str(uuid.uuid5(STABLE_ID_NAMESPACE, normalise_location("gs://kevinliu_blmt")))
    assert first.metadata.identity == second.metadata.identity == expected


def test_bigquery_table_without_summary_is_computed_from_entries():
    stats = table_history(fixture_table("icebergpython_bigquery_v1")).snapshots[-1]
    assert stats.operation is None and stats.summary == {}
    assert (stats.data_files, stats.records) == (2, 6)
    assert stats.sources["data_files"] == "entries"  # the 4-field manifest list has no counts
    assert stats.added_data_files == 0  # every entry is EXISTING


def test_relative_location_is_resolved_against_the_table_directory():
    from tests.support.fixture_tables import FIXTURES

    table = fixture_table("duckdb_spark_lineitem_cow")
    assert table.metadata.location == str(FIXTURES / "duckdb_spark_lineitem_cow")
    assert table.metadata.raw["location"] == "./lineitem_iceberg"


def test_partition_evolution_counts_partitions_per_spec():
    stats = table_history(fixture_table("duckdb_spark_partition_evolution")).snapshots[-1]
    assert [(p.spec_id, p.partitions, p.files) for p in stats.partitions] == [(0, 2, 2), (1, 4, 4)]


def test_distinct_counts_come_from_puffin_statistics_of_that_snapshot():
    stats = table_history(fixture_table("impala_v1_trino_puffin_stats")).snapshots[-1]
    assert stats.columns["i"].distinct_count == 2
    assert stats.columns["d"].distinct_count == 2
    assert str(stats.columns["d"].min) == "1" and str(stats.columns["d"].max) == "2"


def test_schema_evolution_columns_follow_each_snapshot_schema():
    history = table_history(fixture_table("duckdb_java_v1_name_mapping"))
    for stats in history:
        md = fixture_table("duckdb_java_v1_name_mapping").metadata
        schema = md.schema_for(md.snapshot_by_id(stats.snapshot_id))
        assert set(stats.columns) == {n for n, f in schema.columns() if f.is_primitive}


def test_refs_without_refs_block_mean_main_is_current_and_ancestors():
    table = fixture_table("impala_hive_pos_deletes_6snaps")
    assert not table.metadata.refs_explicit
    history = table_history(table)
    assert all(s.refs == ("main",) and not s.staged for s in history)


def test_history_reads_each_distinct_manifest_once():
    table = fixture_table("impala_hive_pos_deletes_6snaps")
    history = table_history(table)
    distinct = {m for s in table.metadata.snapshots for m in _manifest_paths(table, s)}
    assert history.manifest_reads == len(distinct)
    assert history.manifest_list_reads == len(table.metadata.snapshots)


def _manifest_paths(table, snapshot):
    with table.io.open(snapshot.manifest_list) as f:
        return [m["manifest_path"] for m in fastavro.reader(f)]


def test_types_pyiceberg_cannot_load_do_not_stop_the_other_columns(tmp_path):
    """A v3 table with a ``variant`` column: PyIceberg 0.12 refuses the metadata; the walker reports the rest."""
    import json
    import shutil

    from tests.support.fixture_tables import FIXTURES, fixture_relocation
    from iceberg_lineage.read.source import open_table

    name = "impala_spark_v3_deletion_vectors"
    table_dir = tmp_path / name
    shutil.copytree(FIXTURES / name, table_dir)
    meta = table_dir / "metadata" / "v3.metadata.json"
    doc = json.loads(meta.read_text())
    for schema in doc["schemas"]:
        schema["fields"].append({"id": 99, "name": "payload", "required": False, "type": "variant"})
    doc["last-column-id"] = 99
    meta.write_text(json.dumps(doc))
    from pyiceberg.table import StaticTable

    with pytest.raises(Exception):
        StaticTable.from_metadata(str(meta))
    relocate = {old: str(table_dir) for old in fixture_relocation(name)}
    stats = table_history(open_table(str(meta), relocate=relocate)).snapshots[-1]
    assert stats.columns["i"].max == 5 and stats.dv_files == 2
    assert stats.columns["payload"].type == "variant" and stats.columns["payload"].min is None
