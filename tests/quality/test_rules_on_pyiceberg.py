"""Every rule on tables PyIceberg writes, each assertion against a hand computation from PyIceberg's own metadata
tables (``inspect.files``, ``inspect.snapshots``, ``inspect.manifests``) or from the rows written."""
from __future__ import annotations

import pytest

from tests.support.checks import by_name, check, live_files, new_table, rows


@pytest.fixture
def small_appends(sql_catalog):
    """Six appends of 3 rows (one small file each), one row in three without a customer."""
    table = new_table(sql_catalog, "small_appends")
    for n in range(6):
        table.append(rows(n * 3, 3, null_every=3))
    return table


def test_small_files_after_many_small_appends(small_appends):
    files = live_files(small_appends)
    sizes = sorted(f["file_size_in_bytes"] for f in files)
    threshold = sizes[2] + 1  # three files are below it, by hand
    small = sum(1 for s in sizes if s < threshold)
    assert (len(files), small) == (6, 3)
    result = check(small_appends, {"small_files": {"size": threshold, "max_ratio": 0.4}})
    [a] = result.assertions
    assert (a.assertion, a.success, a.actual, a.severity) == ("small_files", False, "0.5 (3 of 6)", "warn")
    assert a.expected == f"<= 0.4 of files < {threshold} bytes"
    assert a.params == {"size": threshold, "max_ratio": 0.4}
    assert result.depth == "entries"
    default = check(small_appends, {"small_files": {"size": "32MB", "max_ratio": 0.5}})
    assert default.assertions[0].actual == "1 (6 of 6)"  # every file is a few KiB, below 32 MiB


def test_null_fraction_from_manifest_null_counts(small_appends):
    written = [r for n in range(6) for r in rows(n * 3, 3, null_every=3).to_pylist()]
    nulls = sum(1 for r in written if r["customer_id"] is None)
    assert (nulls, len(written)) == (6, 18)
    result = check(small_appends, {"null_fraction": {"columns": ["customer_id", "id"], "max": 0}})
    got = by_name(result.assertions)
    customer, ident = got["null_fraction:customer_id"], got["null_fraction:id"]
    assert (customer.success, customer.actual, customer.column) == (False, "0.3333 (6 of 18)", "customer_id")
    assert (ident.success, ident.actual) == (True, "0 (0 of 18)")


def test_unknown_null_counts_fail_never_pass(sql_catalog):
    """A writer that leaves out null counts (metrics mode none): unknown, success false."""
    table = new_table(sql_catalog, "no_metrics", {"write.metadata.metrics.default": "none"})
    table.append(rows(0, 4, null_every=2))
    [a] = check(table, {"null_fraction": {"columns": ["customer_id"], "max": 0.5, "severity": "error"}}).assertions
    assert (a.success, a.actual, a.blocks) == (False, "unknown", True)
    assert a.description == "the writer left out value or null counts"


def test_unknown_null_counts_of_a_column_added_after_the_files_name_them(sql_catalog):
    """Files written before a column was added (schema evolution) have no counts for it: the assertion says so and
    in which schema the column came, apart from files whose writer left metrics out (metrics mode none)."""
    import pyarrow as pa
    from pyiceberg.types import StringType

    def metrics(mode: str) -> None:
        table.transaction().set_properties({"write.metadata.metrics.default": mode}).commit_transaction()

    def null_fraction(*columns: str) -> dict:
        return by_name(check(table, {"null_fraction": {"columns": list(columns), "max": 0.5}}).assertions)

    table = new_table(sql_catalog, "evolved", {"write.metadata.metrics.default": "none"})
    table.append(rows(0, 4, null_every=2))  # A: no metrics at all
    metrics("counts")
    table.append(rows(4, 4, null_every=2))  # B: counts for id, customer_id, amount
    table.update_schema().add_column("region", StringType()).commit()
    region = table.schema().find_field("region")
    added_in = next(s.schema_id for s in table.schemas().values() if region.field_id in s.field_ids)
    assert added_in == table.schema().schema_id == 1
    table.append(rows(8, 4).append_column("region", pa.array(["eu", None, "us", "eu"])))  # C: counts for all
    files = live_files(table)
    assert [f["record_count"] for f in files if region.field_id not in dict(f["null_value_counts"] or ())] == [4, 4]

    got = null_fraction("region", "customer_id")
    assert (got["null_fraction:region"].actual, got["null_fraction:region"].description) == (
        "unknown", "2 file(s) predate column region (added in schema id 1)")  # A and B
    assert got["null_fraction:customer_id"].description == "the writer left out value or null counts"  # A

    metrics("none")
    table.append(rows(12, 4).append_column("region", pa.array(["eu"] * 4)))  # D: no metrics again
    files = live_files(table)
    assert (len(files), sum(region.field_id not in dict(f["null_value_counts"] or ()) for f in files)) == (4, 3)
    assert null_fraction("region")["null_fraction:region"].description == (
        "2 file(s) predate column region (added in schema id 1); in 1 other file(s) the writer left out value or "
        "null counts")


def test_row_drop_after_overwrite(sql_catalog):
    """A delete that rewrites part of a file is an ``overwrite`` snapshot: 10 rows before, 3 after (-70%)."""
    table = new_table(sql_catalog, "overwritten")
    table.append(rows(0, 10))
    table.delete("id >= 3")
    first, last = table.metadata.snapshots[0], table.metadata.snapshots[-1]
    assert last.summary.operation.value == "overwrite"
    assert (len(table.scan().to_arrow()), len(table.metadata.snapshots)) == (3, 2)
    result = check(table, {"row_count": {"min": 1, "max_drop_pct": 20}})
    [a] = result.assertions
    assert (a.success, a.actual, a.expected) == (False, "3 (-70.0% from 10)", ">= 1 rows, drop <= 20%")
    assert a.description is None  # live_records is exact here (no delete files)
    assert result.depth == "summary"
    assert check(table, {"row_count": {"max_drop_pct": 70}}).assertions[0].success is True
    at_first = check(table, {"row_count": {"max_drop_pct": 20}}, snapshot_id=first.snapshot_id).assertions[0]
    assert (at_first.success, at_first.actual) == (True, "not applicable")
    assert at_first.description.startswith("no parent snapshot")
    assert check(table, {"row_count": {"min": 5}}).assertions[0].actual == "3"


def test_pyiceberg_overwrite_is_a_delete_then_an_append(sql_catalog):
    """PyIceberg's ``overwrite`` commits two snapshots: the drop shows at the delete (10 to 0), the append adds 3."""
    table = new_table(sql_catalog, "replaced")
    table.append(rows(0, 10))
    table.overwrite(rows(100, 3))
    _, delete, append = table.metadata.snapshots
    at_delete = check(table, {"row_count": {"max_drop_pct": 50}}, snapshot_id=delete.snapshot_id).assertions[0]
    assert (at_delete.success, at_delete.actual) == (False, "0 (-100.0% from 10)")
    at_append = check(table, {"row_count": {"max_drop_pct": 50}}).assertions[0]
    assert (at_append.success, at_append.actual) == (True, "3 (+0.0% from 0)")


def test_snapshots_manifests_and_freshness(small_appends):
    snapshots = small_appends.inspect.snapshots().to_pylist()
    manifests = small_appends.inspect.manifests().to_pylist()
    newest = max(s["committed_at"] for s in snapshots)
    now_ms = int(newest.timestamp() * 1000) + 7_200_000  # two hours after the last commit
    result = check(small_appends, {"snapshots": {"max": 5}, "manifests": {"max": 6},
                                   "freshness": {"max_age": "1h", "severity": "error"}}, now_ms=now_ms)
    got = by_name(result.assertions)
    assert (got["snapshots"].success, got["snapshots"].actual) == (False, str(len(snapshots)))
    assert len(snapshots) == 6
    assert (got["manifests"].success, got["manifests"].actual) == (True, str(len(manifests)))
    assert (got["freshness"].success, got["freshness"].actual, got["freshness"].blocks) == (False, "7200 s", True)
    assert result.depth == "manifest_list"
    fresh = check(small_appends, {"freshness": {"max_age": "3h"}}, now_ms=now_ms)
    assert fresh.assertions[0].success and fresh.depth == "summary"


def test_delete_ratio_and_equality_deletes_on_an_append_only_table(small_appends):
    """No deletes at all: the summary says so, and nothing deeper is read."""
    result = check(small_appends, {"delete_ratio": {"max": 0.2}, "equality_deletes": {"max_files_ratio": 0.1}})
    got = by_name(result.assertions)
    assert got["delete_ratio"].actual == "0 (0 of 18)"
    assert got["equality_deletes"].actual == "0 (0 of 6)"
    assert result.depth == "manifest_list"


def test_partition_skew_by_records(sql_catalog):
    """Partitions by ``customer_id``: a gets 6 + 4 rows (two files), b 2, c 3: largest 10, median 3."""
    import pyarrow as pa
    from pyiceberg.transforms import IdentityTransform

    from tests.support.checks import SCHEMA

    table = sql_catalog.create_table("db.skewed", schema=SCHEMA)
    with table.update_spec() as update:
        update.add_field("customer_id", IdentityTransform(), "customer")
    written = {"a": 0, "b": 0, "c": 0}
    for customer, count in (("a", 6), ("b", 2), ("a", 4), ("c", 3)):
        table.append(pa.table({"id": pa.array(range(count), pa.int32()), "customer_id": [customer] * count,
                               "amount": pa.array([1.0] * count, pa.float32())}, schema=SCHEMA))
        written[customer] += count
    ordered = sorted(written.values())
    assert (ordered[-1], ordered[1]) == (10, 3)
    result = check(table, {"partition_skew": {"max_ratio": 3}})
    [a] = result.assertions
    assert (a.success, a.actual, result.depth) == (False, "3.333 (10 / 3)", "entries")
    assert check(table, {"partition_skew": {"max_ratio": 4}}).assertions[0].success
    plain = new_table(sql_catalog, "plain")
    plain.append(rows(0, 5))
    [one] = check(plain, {"partition_skew": {"max_ratio": 3}}).assertions
    assert (one.success, one.actual, one.description) == (True, "not applicable", "fewer than two partitions")
