"""ScanReport counters against an independent count from ``inspect.entries()`` and ``plan_files()``.

The partitioned table has one data file per data manifest (one commit each), so whether a manifest is pruned
equals whether its single entry's partition matches the filter's inclusive projection; the expected counters are
computed here in plain Python from the partition values and readable bounds of ``inspect.entries()``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import pytest
from tests.support import scan_reporters as h
from tests.support.scan_reporters import catalog  # noqa: F401 - pytest fixture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyiceberg.expressions import And, BooleanExpression, EqualTo, GreaterThanOrEqual, LessThan, Or

from scan_reporters.scan_metrics import DeleteScope, plan_with_report, projected_field_ids


@dataclass(frozen=True)
class Atom:
    """A predicate with two plain-Python models: on a partition tuple (inclusive projection) and on file bounds."""

    column: str
    op: str
    value: Any

    def expr(self) -> BooleanExpression:
        return {"eq": EqualTo, "ge": GreaterThanOrEqual, "lt": LessThan}[self.op](self.column, self.value)

    def partition_may_match(self, part: dict[str, Any]) -> bool:
        if self.column == "cat":  # identity
            v = part["cat"]
            return {"eq": v == self.value, "ge": v >= self.value, "lt": v < self.value}[self.op]
        if self.column == "ts":  # day(ts)
            day = self.value.date()  # day(ts) < ... projects the last microsecond before the bound
            return {"eq": part["ts_day"] == day, "ge": part["ts_day"] >= day, "lt": part["ts_day"] <= (self.value - dt.timedelta(microseconds=1)).date()}[
                self.op
            ]
        # bucket(id): only equality projects
        return self.op != "eq" or part["id_bucket"] == h.BUCKET(self.value)

    def bounds_may_match(self, metrics: dict[str, Any]) -> bool:
        lo, hi = metrics[self.column]["lower_bound"], metrics[self.column]["upper_bound"]
        return {"eq": lo <= self.value <= hi, "ge": hi >= self.value, "lt": lo < self.value}[self.op]


@dataclass(frozen=True)
class Node:
    kind: str  # "and" | "or"
    left: Any
    right: Any

    def expr(self) -> BooleanExpression:
        return (And if self.kind == "and" else Or)(self.left.expr(), self.right.expr())

    def _combine(self, a: bool, b: bool) -> bool:
        return (a and b) if self.kind == "and" else (a or b)

    def partition_may_match(self, part: dict[str, Any]) -> bool:
        return self._combine(self.left.partition_may_match(part), self.right.partition_may_match(part))

    def bounds_may_match(self, metrics: dict[str, Any]) -> bool:
        return self._combine(self.left.bounds_may_match(metrics), self.right.bounds_may_match(metrics))


atoms = st.one_of(
    st.builds(Atom, st.just("cat"), st.sampled_from(["eq", "ge", "lt"]), st.sampled_from(["a", "b", "c", "bb", "d"])),
    st.builds(Atom, st.just("id"), st.sampled_from(["eq", "ge", "lt"]), st.integers(-5, 500)),
    st.builds(
        Atom,
        st.just("ts"),
        st.sampled_from(["ge", "lt"]),
        st.builds(lambda d, m: h.DAY0 + dt.timedelta(days=d, minutes=m), st.integers(-1, 5), st.sampled_from([0, 30, 600])),
    ),
)
filters = st.recursive(atoms, lambda inner: st.builds(Node, st.sampled_from(["and", "or"]), inner, inner), max_leaves=4)


_ENTRIES: dict[int, list[dict[str, Any]]] = {}


def live_data_entries(table) -> list[dict[str, Any]]:
    """Live data entries of the current snapshot from ``inspect.entries()`` (memoised per snapshot)."""
    key = table.current_snapshot().snapshot_id
    if key not in _ENTRIES:
        rows = table.inspect.entries().to_pylist()
        _ENTRIES[key] = [e for e in rows if e["status"] != 2 and e["data_file"]["content"] == 0]
    return _ENTRIES[key]


def expected_counts(table, model) -> dict[str, int]:
    live = live_data_entries(table)
    scanned = [e for e in live if model.partition_may_match(e["data_file"]["partition"])]
    result = [e for e in scanned if model.bounds_may_match(e["readable_metrics"])]
    return {
        "total-data-manifests": len(live),
        "scanned-data-manifests": len(scanned),
        "skipped-data-manifests": len(live) - len(scanned),
        "result-data-files": len(result),
        "skipped-data-files": len(scanned) - len(result),
        "total-file-size-in-bytes": sum(e["data_file"]["file_size_in_bytes"] for e in result),
    }


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    from pyiceberg.catalog.sql import SqlCatalog

    tmp = tmp_path_factory.mktemp("parts")
    catalog = SqlCatalog("t", uri=f"sqlite:///{tmp}/c.db", warehouse=f"file://{tmp}/wh")
    catalog.create_namespace("db")
    return h.build_partitioned_table(catalog, tmp / "incoming")


def check(table, model) -> dict[str, int]:
    scan = table.scan(row_filter=model.expr())
    planned = plan_with_report(scan, "t.db.parts")
    got = planned.report.scan_metrics.values()
    expected = expected_counts(table, model)
    assert {k: got[k] for k in expected} == expected
    pyiceberg_tasks = list(table.scan(row_filter=model.expr()).plan_files())
    assert got["result-data-files"] == len(pyiceberg_tasks) == len(planned.tasks)
    assert sorted(t.file.file_path for t in planned.tasks) == sorted(t.file.file_path for t in pyiceberg_tasks)
    assert got["total-data-manifests"] == got["scanned-data-manifests"] + got["skipped-data-manifests"]
    assert got["total-delete-manifests"] == got["scanned-delete-manifests"] + got["skipped-delete-manifests"] == 0
    return got


def test_manifest_level_pruning_on_identity_partition(parts):
    got = check(parts, Atom("cat", "eq", "a"))
    assert (got["scanned-data-manifests"], got["skipped-data-manifests"], got["skipped-data-files"]) == (4, 8, 0)


def test_day_transform_prunes_manifests(parts):
    got = check(parts, Atom("ts", "ge", h.DAY0 + dt.timedelta(days=3)))
    assert got["skipped-data-manifests"] == 10 and got["result-data-files"] == 2


def test_bucket_equality_prunes_manifests_and_metrics_prune_files(parts):
    got = check(parts, Atom("id", "eq", 7))
    assert got["skipped-data-manifests"] >= 6 and got["result-data-files"] <= 1


def test_file_level_pruning_by_metrics_only(parts):
    got = check(parts, Atom("id", "ge", 300))
    assert got["scanned-data-manifests"] == 12 and got["skipped-data-files"] > 0


@settings(max_examples=50, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(model=filters)
def test_invariants_hold_for_generated_filters(parts, model):
    check(parts, model)


def test_report_fields(parts):
    scan = parts.scan(row_filter="cat == 'a' and id > 3", selected_fields=("id", "ts"))
    report = plan_with_report(scan, "t.db.parts", {"k": "v"}).report
    assert report.snapshot_id == parts.current_snapshot().snapshot_id
    assert report.schema_id == parts.schema().schema_id
    assert report.projected_field_ids == (1, 3) and report.projected_field_names == ("id", "ts")
    assert report.filter == {
        "type": "and",
        "left": {"type": "eq", "term": "cat", "value": "(hash-3c2569b2)"},
        "right": {"type": "gt", "term": "id", "value": "(1-digit-int)"},
    }
    assert report.metadata == {"k": "v"}
    assert report.scan_metrics.total_planning_duration.total_duration > 0


def test_time_travel_reports_the_snapshot_read(parts):
    first = parts.history()[2].snapshot_id
    planned = plan_with_report(parts.scan(snapshot_id=first), "x")
    assert planned.report.snapshot_id == first
    assert planned.report.scan_metrics.values()["total-data-manifests"] == 3
    assert len(planned.tasks) == 3


def test_empty_table_gives_no_report(catalog):
    table = catalog.create_table("db.empty", h.SCHEMA)
    planned = plan_with_report(table.scan(), "x")
    assert planned.report is None and planned.tasks == []


def test_copy_on_write_delete_manifest_without_live_files_is_skipped(catalog):
    table = h.simple_table(catalog, "db.cow", batches=2)
    table.delete("cat == 'a'")  # drops the whole file: the rewritten manifest holds only a DELETED entry
    manifests = table.current_snapshot().manifests(table.io)
    only_deleted = [m for m in manifests if not m.has_added_files() and not m.has_existing_files()]
    assert len(only_deleted) == 1
    got = plan_with_report(table.scan(), "x").report.scan_metrics.values()
    assert got["total-data-manifests"] == len(manifests)
    assert got["skipped-data-manifests"] == 1
    assert got["result-data-files"] == len(list(table.scan().plan_files())) == 1
    assert got["skipped-data-files"] == 0  # DELETED entries are not counted


def test_position_deletes_and_dvs_follow_scope_rules(catalog):
    table = h.simple_table(catalog, "db.pos", batches=4)
    files = sorted(t.file.file_path for t in table.scan().plan_files())
    path_scoped = h.position_delete_file(table, files[0], [0, 1], path_scoped=True)
    partition_scoped = h.position_delete_file(table, files[1], [2], path_scoped=False)
    dv = h.dv_file(table, files[2], cardinality=3, offset=4, size=42)
    h.commit_delete_files(table, [path_scoped, partition_scoped, dv])

    planned = plan_with_report(table.scan(), "x")
    got = planned.report.scan_metrics.values()
    assert got["indexed-delete-files"] == 3
    assert (got["positional-delete-files"], got["dvs"], got["equality-delete-files"]) == (2, 1, 0)
    assert got["result-delete-files"] == 3  # each applies to exactly one data file
    assert got["total-delete-file-size-in-bytes"] == path_scoped.file_size_in_bytes + partition_scoped.file_size_in_bytes + 42
    assert (got["total-delete-manifests"], got["scanned-delete-manifests"]) == (1, 1)

    # a filter that prunes the delete manifest's partitions: the delete manifest is skipped
    other = plan_with_report(table.scan(row_filter="cat == 'd'"), "x").report.scan_metrics.values()
    assert (other["skipped-delete-manifests"], other["indexed-delete-files"], other["result-delete-files"]) == (1, 0, 0)

    # the rows are really deleted (the DV is never read: its data file is filtered out) and results are unchanged
    rows = table.scan(row_filter="cat != 'c'").to_arrow()
    assert rows.num_rows == 30 - 3


def test_equality_deletes_are_reported_although_pyiceberg_refuses_them(catalog):
    table = h.simple_table(catalog, "db.eq", batches=4)
    partition_a = next(t.file.partition for t in table.scan().plan_files() if t.file.partition[0] == "a")
    h.commit_delete_files(table, [h.equality_delete_file(table, partition_a, size=777)])
    with pytest.raises(ValueError, match="equality deletes"):
        table.scan().plan_files()
    planned = plan_with_report(table.scan(), "x")
    assert isinstance(planned.error, ValueError) and planned.tasks is None
    got = planned.report.scan_metrics.values()
    assert (got["equality-delete-files"], got["indexed-delete-files"]) == (1, 1)
    assert got["result-data-files"] == 4
    assert (got["result-delete-files"], got["total-delete-file-size-in-bytes"]) == (1, 777)


def test_delete_scope_rules_by_sequence_number_and_partition():
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat, ManifestEntry, ManifestEntryStatus
    from pyiceberg.typedef import Record

    def file(path: str, content: DataFileContent, part: str, fmt: FileFormat = FileFormat.PARQUET, spec: int = 1, **kw: Any):
        f = DataFile.from_args(
            _table_format_version=3, content=content, file_path=path, file_format=fmt, partition=Record(part) if spec else Record(),
            record_count=1, file_size_in_bytes=100, **kw,
        )
        f.spec_id = spec
        return f

    def entry(f, seq: int):
        return ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=1, sequence_number=seq, data_file=f)

    scope = DeleteScope(frozenset({0}))
    pos = DataFileContent.POSITION_DELETES
    eq = DataFileContent.EQUALITY_DELETES
    scope.add(entry(file("pos-a", pos, "a"), 5))
    scope.add(entry(file("pos-ref", pos, "a", referenced_data_file="d2"), 5))
    scope.add(entry(file("dv", pos, "a", FileFormat.PUFFIN, referenced_data_file="d3", content_size_in_bytes=9), 5))
    scope.add(entry(file("eq-a", eq, "a", equality_ids=[1]), 5))
    scope.add(entry(file("eq-global", eq, "", spec=0, equality_ids=[1]), 5))
    names = lambda found: sorted(f.file_path for f in found)  # noqa: E731
    assert names(scope.for_data_file(5, file("d1", DataFileContent.DATA, "a"))) == ["pos-a"]  # eq needs a strictly newer seq
    assert names(scope.for_data_file(4, file("d1", DataFileContent.DATA, "a"))) == ["eq-a", "eq-global", "pos-a"]
    assert names(scope.for_data_file(4, file("d2", DataFileContent.DATA, "a"))) == ["eq-a", "eq-global", "pos-a", "pos-ref"]
    assert names(scope.for_data_file(4, file("d3", DataFileContent.DATA, "a"))) == ["dv", "eq-a", "eq-global"]  # DV supersedes
    assert names(scope.for_data_file(4, file("d4", DataFileContent.DATA, "b"))) == ["eq-global"]
    assert names(scope.for_data_file(6, file("d3", DataFileContent.DATA, "a"))) == []


def test_projected_field_ids_include_nested_leaves():
    from pyiceberg.schema import Schema
    from pyiceberg.types import ListType, LongType, MapType, NestedField, StringType, StructType

    schema = Schema(
        NestedField(1, "id", LongType()),
        NestedField(2, "s", StructType(NestedField(3, "x", StringType()))),
        NestedField(4, "l", ListType(5, LongType())),
        NestedField(6, "m", MapType(7, StringType(), 8, LongType())),
    )
    assert projected_field_ids(schema) == (1, 3, 5, 7, 8)



def needs_fixture(name: str) -> Any:
    return pytest.mark.skipif(not (h.FIXTURE_TABLES / name).is_dir(), reason=f"fixture table {name} not present")


@needs_fixture("impala_spark_v3_deletion_vectors")
def test_java_written_v3_deletion_vectors_are_scoped_and_sized_like_java():
    """Spark 4 / Iceberg 1.10 wrote 5 data files and 2 DVs; its summary says added-dvs=2, added-files-size=84
    (Java counts DV sizes by content_size_in_bytes). PyIceberg's own DeleteFileIndex attaches the DVs' shared
    Puffin file to all 5 unpartitioned data files; Java's scope rules attach each DV to its referenced data file
    only. The v3 fields come from reading the delete manifest with the v3 read schema."""
    scan = h.fixture_scan("impala_spark_v3_deletion_vectors")
    planned = plan_with_report(scan, "hadoop.iceberg_v3_deletion_vectors")
    got = planned.report.scan_metrics.values()
    summary = scan.table_metadata.current_snapshot().summary
    assert (got["dvs"], got["indexed-delete-files"], got["positional-delete-files"]) == (int(summary["added-dvs"]), 2, 0)
    assert got["result-data-files"] == int(summary["total-data-files"]) == len(planned.tasks)
    assert got["result-delete-files"] == 2
    assert got["total-delete-file-size-in-bytes"] == int(summary["added-files-size"]) == 84
    layout = lambda tasks: sorted((t.file.file_path, sorted(d.file_path for d in t.delete_files)) for t in tasks)  # noqa: E731
    assert layout(planned.tasks) == layout(scan.plan_files())  # PyIceberg's tasks are returned untouched
    assert all(len(t.delete_files) == 1 for t in planned.tasks)


@needs_fixture("impala_hive_pos_deletes_6snaps")
def test_hive_written_position_deletes_match_pyicebergs_own_attachment():
    scan = h.fixture_scan("impala_hive_pos_deletes_6snaps")
    planned = plan_with_report(scan, "hadoop.ice")
    got = planned.report.scan_metrics.values()
    tasks = list(scan.plan_files())
    assert got["result-data-files"] == len(tasks) == 4
    assert got["result-delete-files"] == sum(len(t.delete_files) for t in tasks) == 2
    assert got["total-delete-file-size-in-bytes"] == sum(d.file_size_in_bytes for t in tasks for d in t.delete_files)
    assert (got["positional-delete-files"], got["indexed-delete-files"]) == (2, 2)


@needs_fixture("duckdb_java_spark_eq_deletes")
def test_java_written_equality_deletes_apply_to_strictly_older_data():
    """Unpartitioned, so every equality delete is global; it applies to data with a smaller sequence number."""
    scan = h.fixture_scan("duckdb_java_spark_eq_deletes")
    with pytest.raises(ValueError, match="equality deletes"):
        scan.plan_files()
    planned = plan_with_report(scan, "x.mytable")
    got = planned.report.scan_metrics.values()
    entries = [e for m in scan.snapshot().manifests(scan.io) for e in m.fetch_manifest_entry(scan.io)]
    data = [e for e in entries if e.data_file.content == 0]
    deletes = [e for e in entries if e.data_file.content == 2]
    pairs = [(d, x) for d in data for x in deletes if d.sequence_number < x.sequence_number]
    assert (got["result-data-files"], got["equality-delete-files"]) == (len(data), len(deletes)) == (2, 4)
    assert got["result-delete-files"] == len(pairs) == 5
    assert got["total-delete-file-size-in-bytes"] == sum(x.data_file.file_size_in_bytes for _, x in pairs)
