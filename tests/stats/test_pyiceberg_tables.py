"""The walker on tables built here with PyIceberg, checked against PyIceberg's own view of them:
``inspect.files()``, ``plan_files()`` and the snapshot summaries, computed in the test."""
from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from pyiceberg.expressions import EqualTo, GreaterThanOrEqual, LessThan
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import DayTransform, IdentityTransform
from pyiceberg.types import DoubleType, LongType, NestedField, StringType, StructType, TimestampType

from iceberg_lineage.stats import snapshot_stats, table_history

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "region", StringType(), required=False),
    NestedField(3, "amount", DoubleType(), required=False),
    NestedField(4, "ts", TimestampType(), required=False),
    NestedField(5, "info", StructType(NestedField(6, "note", StringType(), required=False)), required=False),
)


def rows(start: int, n: int, region: str, *, null_every: int = 0) -> pa.Table:
    amounts = [None if null_every and i % null_every == 0 else float(i) for i in range(start, start + n)]
    return pa.Table.from_pylist(
        [
            {
                "id": i,
                "region": region,
                "amount": amounts[i - start],
                "ts": dt.datetime(2024, 1, 1) + dt.timedelta(hours=i),
                "info": {"note": f"n{i % 5}"},
            }
            for i in range(start, start + n)
        ],
        schema=SCHEMA.as_arrow(),
    )


def check_against_pyiceberg(table, stats):
    """Live files, records and bytes from inspect.files(); the planned data files from plan_files()."""
    files = table.inspect.files(snapshot_id=stats.snapshot_id)
    data = files.filter(pc.equal(files["content"], 0))
    assert stats.data_files == data.num_rows
    assert stats.records == pc.sum(data["record_count"]).as_py() or (stats.records == 0 and data.num_rows == 0)
    assert stats.data_files_size_bytes == (pc.sum(data["file_size_in_bytes"]).as_py() or 0)
    planned = list(table.scan(snapshot_id=stats.snapshot_id).plan_files())
    assert stats.data_files == len(planned)
    summary = table.metadata.snapshot_by_id(stats.snapshot_id).summary
    assert stats.records == int(summary["total-records"])
    assert stats.total_files_size_bytes == int(summary["total-files-size"])


def test_append_overwrite_delete_match_pyiceberg(sql_catalog):
    table = sql_catalog.create_table("db.t", schema=SCHEMA)
    table.append(rows(0, 50, "eu", null_every=7))
    table.append(rows(50, 50, "us"))
    table.overwrite(rows(1000, 20, "us"), overwrite_filter=EqualTo("region", "us"))
    table.delete(LessThan("id", 10))
    history = table_history(table)
    assert [s.operation for s in history] == ["append", "append", "delete", "append", "overwrite"]
    for stats in history:
        check_against_pyiceberg(table, stats)
    last = history.snapshots[-1]
    # independent: read the rows back
    arrow = table.scan().to_arrow()
    assert last.records == arrow.num_rows == last.live_records
    amount = last.columns["amount"]
    assert amount.null_count == arrow["amount"].null_count
    assert amount.value_count == arrow.num_rows
    assert amount.min == pc.min(arrow["amount"]).as_py() and amount.max == pc.max(arrow["amount"]).as_py()
    assert last.columns["id"].min == pc.min(arrow["id"]).as_py()
    assert last.columns["ts"].max == pc.max(arrow["ts"]).as_py()
    assert last.columns["info.note"].value_count == arrow.num_rows
    # truncate(16), the default mode, cuts neither: 'eu' is shorter than 16, 'us' is a file's lower bound
    assert (last.columns["region"].lower_truncated, last.columns["region"].upper_truncated) == (False, False)
    assert "info" not in last.columns  # structs have no metrics of their own


def test_removed_and_added_by_each_snapshot(sql_catalog):
    table = sql_catalog.create_table("db.t", schema=SCHEMA)
    table.append(rows(0, 30, "eu"))
    table.append(rows(30, 30, "us"))
    table.overwrite(rows(100, 5, "us"), overwrite_filter=EqualTo("region", "us"))
    history = table_history(table)
    delete_snap = history.snapshots[2]
    assert delete_snap.operation == "delete"
    assert (delete_snap.removed_data_files, delete_snap.removed_records) == (1, 30)
    assert (delete_snap.added_data_files, delete_snap.added_records) == (0, 0)
    # summary-free computation agrees with the summary
    from tests.stats.test_fixture_tables import _without_summaries
    from iceberg_lineage.read.source import open_table

    computed = table_history(_without_summaries(open_table(table)))
    for a, b in zip(history, computed):
        for figure in ("data_files", "records", "added_data_files", "removed_data_files", "added_records",
                       "removed_records", "added_files_size_bytes", "removed_files_size_bytes", "total_files_size_bytes"):
            assert getattr(a, figure) == getattr(b, figure), (figure, a.snapshot_id)


def test_schema_and_partition_evolution(sql_catalog):
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region"))
    table = sql_catalog.create_table("db.t", schema=SCHEMA, partition_spec=spec)
    table.append(rows(0, 20, "eu"))
    table.append(rows(20, 20, "us"))
    with table.update_spec() as update:
        update.add_field("ts", DayTransform(), "ts_day")
    table.append(rows(40, 48, "eu"))  # 48 hours -> 2 (or 3) days
    with table.update_schema() as update:
        update.add_column("extra", LongType())
        update.rename_column("amount", "value")
    table.append(table.scan().to_arrow().slice(0, 0))  # no-op append keeps things simple
    table.refresh()
    stats = snapshot_stats(table)
    by_spec = {p.spec_id: p for p in stats.partitions}
    assert by_spec[0].partitions == 2 and by_spec[0].files == 2
    files = table.inspect.files()
    spec1_days = {(r["region"], r["ts_day"]) for r in files.select(["partition"]).to_pylist() for r in [r["partition"]] if r.get("ts_day") is not None}
    assert by_spec[1].partitions == len(spec1_days)
    current_columns = set(stats.columns)
    assert "value" in current_columns and "amount" not in current_columns
    assert stats.columns["value"].value_count == 88  # metrics keyed by field id survive the rename
    assert stats.columns["extra"].value_count is None  # no file has metrics for the new column: unknown, not 0


def test_branches_tags_and_staged_snapshots(sql_catalog):
    table = sql_catalog.create_table("db.t", schema=SCHEMA)
    table.append(rows(0, 10, "eu"))
    first = table.current_snapshot().snapshot_id
    table.manage_snapshots().create_tag(first, "v1").create_branch(first, "audit").commit()
    table.append(rows(10, 10, "eu"), branch="audit")
    audit_head = table.refresh().metadata.refs["audit"].snapshot_id
    table.append(rows(20, 10, "us"))
    history = {s.snapshot_id: s for s in table_history(table)}
    assert history[first].refs == ("audit", "main", "v1")
    assert history[audit_head].refs == ("audit",)
    assert history[audit_head].records == 20
    assert not any(s.staged for s in history.values())
    # a snapshot no ref reaches is staged: drop the branch
    table.manage_snapshots().remove_branch("audit").commit()
    history = {s.snapshot_id: s for s in table_history(table.refresh())}
    assert history[audit_head].staged and history[audit_head].refs == ()


def test_many_small_commits_read_each_manifest_once(sql_catalog):
    table = sql_catalog.create_table("db.t", schema=SCHEMA)
    for i in range(25):
        table.append(rows(i * 4, 4, "eu"))
    history = table_history(table)
    assert len(history) == 25
    distinct = {m.manifest_path for s in table.metadata.snapshots for m in s.manifests(table.io)}
    assert history.manifest_reads == len(distinct) == 25
    assert [s.records for s in history] == [4 * (i + 1) for i in range(25)]
    for s in history.snapshots[::6]:
        check_against_pyiceberg(table, s)


def test_depths_only_claim_what_they_read(sql_catalog):
    table = sql_catalog.create_table("db.t", schema=SCHEMA)
    table.append(rows(0, 10, "eu"))
    summary = snapshot_stats(table, depth="summary")
    assert summary.data_manifests is None and summary.columns == {} and summary.depth == "summary"
    listed = snapshot_stats(table, depth="manifest_list")
    assert listed.data_manifests == 1 and listed.sources["data_manifests"] == "manifest_list" and listed.columns == {}
    entries = snapshot_stats(table, depth="entries")
    assert entries.columns["id"].max == 9 and entries.file_sizes.count == 1


def test_filtered_scan_matches_plan_files(sql_catalog):
    table = sql_catalog.create_table("db.t", schema=SCHEMA)
    for i in range(4):
        table.append(rows(i * 10, 10, "eu"))
    stats = snapshot_stats(table)
    planned = list(table.scan(row_filter=GreaterThanOrEqual("id", 0)).plan_files())
    assert stats.data_files == len(planned) == 4
    assert stats.file_sizes.min == min(t.file.file_size_in_bytes for t in planned)
    assert stats.file_sizes.max == max(t.file.file_size_in_bytes for t in planned)
    assert stats.file_sizes.small_files == 4  # all far below half of 512 MiB
    assert sum(stats.file_sizes.histogram.values()) == 4


@pytest.mark.parametrize("depth", ["summary", "manifest_list", "entries"])
def test_empty_table_has_no_snapshot_error(sql_catalog, depth):
    from iceberg_lineage.errors import IcebergLineageError

    table = sql_catalog.create_table("db.t", schema=SCHEMA)
    with pytest.raises(IcebergLineageError, match="no snapshot"):
        snapshot_stats(table, depth=depth)
    assert len(table_history(table, depth=depth)) == 0


def test_large_manifests_split_into_block_ranges_give_the_same_statistics(sql_catalog, monkeypatch):
    """Worker processes decoding block ranges of one manifest agree with one serial read."""
    from iceberg_lineage.stats import cache

    table = sql_catalog.create_table("db.t", schema=SCHEMA)
    table.append(pa.concat_tables([rows(i * 10, 10, "eu", null_every=3) for i in range(30)]))
    for i in range(3):
        table.append(rows(1000 + i, 5, "us"))
    serial = table_history(table)
    monkeypatch.setattr(cache, "SPLIT_MIN_BYTES", 0)
    split = table_history(table)
    assert [s.to_json() for s in split] == [s.to_json() for s in serial]
    assert split.manifest_reads == serial.manifest_reads == 4


def test_writer_schemas_are_parsed_once_and_list_rows_built_once(sql_catalog, monkeypatch):
    """25 manifests and 25 manifest lists share two writer schemas: two parses, not fifty; the 325 rows of the
    25 lists (fast appends repeat their parent's rows) are 25 distinct manifest rows, each built once."""
    import fastavro

    import iceberg_lineage.read.avro as avro
    import iceberg_lineage.read.manifests as manifests

    table = sql_catalog.create_table("db.t", schema=SCHEMA)
    for i in range(25):
        table.append(rows(i * 4, 4, "eu"))
    monkeypatch.setattr(avro, "_PARSED_SCHEMAS", {})  # start cold
    for cache in ("_ENTRY_PLANS", "_LIST_PLANS"):
        monkeypatch.setattr(manifests, cache, {})
    parses = []
    real_parse = fastavro.parse_schema
    monkeypatch.setattr(avro.fastavro, "parse_schema", lambda s, *a, **k: parses.append(1) or real_parse(s, *a, **k))
    built = []
    real_row = manifests.ManifestFile
    monkeypatch.setattr(manifests, "ManifestFile", lambda *a, **k: built.append(k["manifest_path"]) or real_row(*a, **k))

    history = table_history(table)
    assert len(parses) == 2  # the manifest-list schema and the manifest schema
    assert history.manifest_list_reads == 25 and sorted(built) == sorted(set(built)) and len(built) == 25
    assert [s.data_manifests for s in history] == list(range(1, 26))
