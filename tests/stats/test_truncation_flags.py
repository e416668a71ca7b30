"""The truncation flags (docs/stats.md, "Truncated bounds"): one test per row of its table, on tables PyIceberg
writes, with the metrics modes set as table properties and changed between appends. And NaN counts exist for float
and double only.
"""
from __future__ import annotations

import os
from urllib.parse import urlparse

import pyarrow as pa
import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import BinaryType, DoubleType, FixedType, LongType, NestedField, StringType

from iceberg_lineage.lineage.facets.statistics import statistics_facet
from iceberg_lineage.stats import table_history

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "s", StringType(), required=False),
    NestedField(3, "b", BinaryType(), required=False),
    NestedField(4, "d", DoubleType(), required=False),
    NestedField(5, "f", FixedType(4), required=False),
)
ARROW = pa.schema([("id", pa.int64()), ("s", pa.string()), ("b", pa.binary()), ("d", pa.float64()),
                   ("f", pa.binary(4))])
DEFAULT = "write.metadata.metrics.default"


def _append(table, strings, binaries=None):
    n = len(strings)
    binaries = binaries if binaries is not None else [s.encode() for s in strings]
    table.append(pa.Table.from_pydict({
        "id": list(range(n)), "s": strings, "b": binaries, "d": [float("nan")] + [1.5] * (n - 1),
        "f": [b"abcd"] * n,
    }, schema=ARROW))


def _set(table, **properties):
    with table.transaction() as tx:
        tx.set_properties({k.replace("__", "."): v for k, v in properties.items()})


def _flags(column):
    return column.min, column.max, column.lower_truncated, column.upper_truncated


@pytest.fixture
def make(sql_catalog):
    def make_table(properties=None, name="db.t"):
        return sql_catalog.create_table(name, schema=SCHEMA, properties=properties or {})
    return make_table


def test_lower_shorter_than_n_and_upper_equal_to_a_lower_bound_are_exact(make):
    """'ab'..'b' under truncate(16): 'ab' is shorter than 16; 'b' is the lower bound of the file that holds it."""
    table = make()
    _append(table, ["ab"])
    _append(table, ["b"])
    col = table_history(table).snapshots[-1].columns["s"]
    assert _flags(col) == ("ab", "b", False, False)
    assert col.bounds_truncated is False


def test_shorter_upper_bound_of_a_file_with_other_values_may_be_truncated(make):
    """One file holding 'ab' and 'b': Iceberg Java cuts 'a' followed by 15 U+10FFFF to 'b', so 'b' proves nothing."""
    table = make()
    _append(table, ["ab", "b"])
    assert _flags(table_history(table).snapshots[-1].columns["s"]) == ("ab", "b", False, True)


def test_bounds_cut_at_n(make):
    """A lower bound exactly N long may be a cut; an upper bound of N, cut and incremented, too."""
    table = make({DEFAULT: "truncate(4)"})
    _append(table, ["abcdefgh", "abcdxyz"])
    col = table_history(table).snapshots[-1].columns["s"]
    assert _flags(col) == ("abcd", "abce", True, True) and col.bounds_truncated is True


def test_full_mode_never_truncates(make):
    table = make({DEFAULT: "full"})
    _append(table, ["a", "c" * 40])
    assert _flags(table_history(table).snapshots[-1].columns["s"]) == ("a", "c" * 40, False, False)


def test_counts_and_none_store_no_bounds(make):
    table = make({DEFAULT: "counts", "write.metadata.metrics.column.d": "none"})
    _append(table, ["ab", "b"])
    stats = table_history(table).snapshots[-1]
    assert _flags(stats.columns["s"]) == (None, None, False, False)
    assert stats.columns["s"].value_count == 2
    assert stats.columns["d"].nan_count is None and stats.columns["d"].value_count is None


def test_file_written_under_truncate_before_the_switch_to_full(make):
    """Its max 'zzzzzzzzzzzzzzz{' occurs in no row: the current mode (full) must not clear the flag."""
    table = make()
    _append(table, ["z" * 20])
    _set(table, **{DEFAULT: "full"})
    _append(table, ["a" * 30])
    history = table_history(table)
    col = history.snapshots[-1].columns["s"]
    assert _flags(col) == ("a" * 30, "zzzzzzzzzzzzzzz{", False, True)
    # the lower bound of the older file is 16 long and cut: but the winning one, 30 long, can come from no
    # truncate(16) file
    assert history.snapshots[0].columns["s"].lower_truncated is True
    # once the old file is gone, only files written under full are left
    table.overwrite(pa.Table.from_pydict({"id": [9], "s": ["q"], "b": [b"q"], "d": [2.0], "f": [b"abcd"]},
                                         schema=ARROW))
    assert _flags(table_history(table).snapshots[-1].columns["s"]) == ("q", "q", False, False)


def test_per_column_mode(make):
    table = make({"write.metadata.metrics.column.s": "truncate(3)", "write.metadata.metrics.column.b": "full"})
    _append(table, ["ab", "abcdef"], [b"a", b"\x01" * 20])
    stats = table_history(table).snapshots[-1]
    assert _flags(stats.columns["s"]) == ("ab", "abd", False, True)
    assert _flags(stats.columns["b"]) == (b"\x01" * 20, b"a", False, False)


def test_binary_under_truncate_counts_bytes(make):
    table = make()
    _append(table, ["x", "y"], [b"\x00" * 20, b"\xff" * 3])
    assert _flags(table_history(table).snapshots[-1].columns["b"]) == (b"\x00" * 16, b"\xff" * 3, True, True)


def test_fixed_is_cut_only_below_its_length(make):
    table = make()
    _append(table, ["x", "y"])
    assert _flags(table_history(table).snapshots[-1].columns["f"]) == (b"abcd", b"abcd", False, False)


def test_bound_longer_than_every_length_that_applied(make):
    """A 20-long bound can come from no truncate(16) file: written under full after the switch."""
    table = make()
    _append(table, ["b" * 3])
    _set(table, **{DEFAULT: "full"})
    _append(table, ["a" * 20, "c" * 20])
    col = table_history(table).snapshots[-1].columns["s"]
    assert _flags(col) == ("a" * 20, "c" * 20, False, False)


def test_missing_old_metadata_file_means_any_mode(make):
    """The version the snapshot's writer read is gone: its mode cannot be recovered, so any N could have applied."""
    table = make({DEFAULT: "full"})
    _append(table, ["ab", "b"])
    assert _flags(table_history(table).snapshots[-1].columns["s"]) == ("ab", "b", False, False)
    first = table.metadata.metadata_log[0].metadata_file
    os.remove(urlparse(first).path)
    assert _flags(table_history(table).snapshots[-1].columns["s"]) == ("ab", "b", True, True)


def test_other_types_are_never_truncated(make):
    table = make({DEFAULT: "truncate(1)"})
    _append(table, ["ab", "b"])
    stats = table_history(table).snapshots[-1]
    assert _flags(stats.columns["id"]) == (0, 1, False, False)
    assert _flags(stats.columns["d"])[2:] == (False, False)


def test_nan_counts_exist_for_float_and_double_only(make):
    """PyIceberg's writer records no NaN counts, so the file is declared as Iceberg Java writes it: NaN counts for
    the double column (and a writer's stray 0 for the string one, which is no figure)."""
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.typedef import Record

    table = make()
    _append(table, ["ab", "b", "c"])
    assert table_history(table).snapshots[-1].columns["d"].nan_count is None  # no NaN counts written: unknown
    df = DataFile.from_args(
        content=DataFileContent.DATA, file_path="file:///nowhere/x.parquet", file_format=FileFormat.PARQUET,
        partition=Record(), record_count=3, file_size_in_bytes=100, value_counts={1: 3, 2: 3, 4: 3},
        null_value_counts={1: 0, 2: 0, 4: 0}, nan_value_counts={4: 2, 2: 0},
    )
    df.spec_id = 0
    with table.transaction() as tx:
        tx.delete("id >= 0")
    with table.transaction() as tx:
        with tx.update_snapshot().fast_append() as append:
            append.append_data_file(df)
    stats = table_history(table).snapshots[-1]
    assert stats.columns["d"].nan_count == 2
    assert [stats.columns[c].nan_count for c in ("id", "s", "b", "f")] == [None] * 4
    assert stats.columns["s"].to_json()["nan_count"] is None
    facet = _serialised(statistics_facet(stats))
    assert facet["columns"]["d"]["nanCount"] == 2
    assert "nanCount" not in facet["columns"]["s"] and "nanCount" not in facet["columns"]["id"]


def _serialised(facet):
    import json

    from iceberg_lineage.lineage.serde import to_json

    return json.loads(to_json(facet))


def _history_of(versions: int, listed_from: int, cut: bool = False):
    """A table whose log holds ``versions`` older metadata files; snapshot 1 is listed from version ``listed_from``
    on, snapshot 2 only by the current file. Returns the history and the list of paths it read."""
    from iceberg_lineage.read.metadata_json import parse_metadata
    from iceberg_lineage.read.modes import ModeHistory

    def doc(snapshots, log):
        return {"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": "/t",
                "last-sequence-number": 2, "last-updated-ms": 2, "last-column-id": 1, "current-schema-id": 0,
                "schemas": [{"schema-id": 0, "type": "struct",
                             "fields": [{"id": 1, "name": "s", "required": False, "type": "string"}]}],
                "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}], "last-partition-id": 999,
                "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}], "properties": {},
                "snapshots": [{"snapshot-id": s, "timestamp-ms": s, "sequence-number": s, "manifest-list": f"/m{s}",
                               "summary": {"operation": "append"}} for s in snapshots],
                "metadata-log": [{"metadata-file": p, "timestamp-ms": 0} for p in log]}

    paths = [f"/t/metadata/v{i}.metadata.json" for i in range(versions)]
    older = ["/t/metadata/v-1.metadata.json"] if cut else []  # a log cut by previous-versions-max
    files = {p: doc([1] if i >= listed_from else [], older + paths[:i]) for i, p in enumerate(paths)}
    read: list[str] = []

    def read_raw(path):
        read.append(path)
        return files[path]

    current = parse_metadata(doc([1, 2], paths), "/t/metadata/current.metadata.json")
    return ModeHistory(current, read_raw), read


def test_a_snapshot_older_than_the_log_costs_one_read():
    """The log was cut (its oldest file has a log of its own): snapshot 1 is already in the oldest file, so its
    modes cannot be recovered; that takes one read, not one per version."""
    history, read = _history_of(100, 0, cut=True)
    assert history.union([1, 2], 1, "s") is None
    assert len(read) == 1


def test_a_recent_snapshot_is_found_from_the_newest_version():
    history, read = _history_of(30, 25)  # a complete log: the oldest file has no log
    assert history.lengths(2, 1, "s") == frozenset({16})  # added by the current file: the last two versions
    assert read == ["/t/metadata/v0.metadata.json", "/t/metadata/v29.metadata.json"]
    assert history.lengths(1, 1, "s") == frozenset({16})  # first listed by v25: v24 and v25
    assert read[2:] == [f"/t/metadata/v{i}.metadata.json" for i in (28, 27, 26, 25, 24)]


# -- the rule without a (whole) metadata log: docs/stats.md, "Truncated bounds" -------------------------------------
REAL = ["abcdefgh", "abcdxyz"]


def _metadata_path(table) -> str:
    return urlparse(table.metadata_location).path


def _keep_log(table, keep) -> str:
    """Rewrites the current metadata file with only the log entries ``keep`` selects (as BigQuery and Redpanda
    writers leave it, or with a hole); returns its path."""
    import json

    path = _metadata_path(table)
    doc = json.loads(open(path).read())
    doc["metadata-log"] = [e for i, e in enumerate(doc.get("metadata-log", [])) if keep(i)]
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def _real_bounds_hold(col) -> None:
    """The real values, against the printed bounds: a bound the flags call exact is a real extreme."""
    assert col.min <= min(REAL) and max(REAL) <= col.max
    assert (col.min == min(REAL)) or col.lower_truncated
    assert (col.max == max(REAL)) or col.upper_truncated


def test_stripped_log_after_a_switch_to_full_means_any_mode(make):
    """Written under truncate(4), then switched to full, log stripped: the current mode does not prove the old one."""
    table = make({DEFAULT: "truncate(4)"})
    _append(table, REAL)
    _set(table, **{DEFAULT: "full"})
    col = table_history(_keep_log(table, lambda i: False)).snapshots[-1].columns["s"]
    assert _flags(col) == ("abcd", "abce", True, True)
    _real_bounds_hold(col)


def test_a_hole_in_the_log_means_any_mode(make):
    """v1 set truncate(4); v2 appended and switched to full in one commit; the log lists v0 and not v1 (a hole):
    the version before the one that added the snapshot is gone, so any N could have applied."""
    table = make({DEFAULT: "full"})
    _set(table, **{DEFAULT: "truncate(4)"})
    with table.transaction() as tx:
        tx.append(pa.Table.from_pydict({"id": [0, 1], "s": REAL, "b": [b"x", b"y"], "d": [1.0, 2.0],
                                        "f": [b"abcd"] * 2}, schema=ARROW))
        tx.set_properties({DEFAULT: "full"})
    whole = table_history(_metadata_path(table)).snapshots[-1].columns["s"]
    assert _flags(whole) == ("abcd", "abce", True, True)  # the whole log: v1's truncate(4) applied
    col = table_history(_keep_log(table, lambda i: i != 1)).snapshots[-1].columns["s"]
    assert _flags(col) == ("abcd", "abce", True, True)
    _real_bounds_hold(col)


def test_an_empty_log_proves_a_create_and_append_commit(sql_catalog):
    """The table's first version holds its one parentless snapshot, as old as the file: its own modes applied."""
    with sql_catalog.create_table_transaction("db.first", schema=SCHEMA, properties={DEFAULT: "full"}) as tx:
        tx.append(pa.Table.from_pydict({"id": [0, 1], "s": REAL, "b": [b"x", b"y"], "d": [1.0, 2.0],
                                        "f": [b"abcd"] * 2}, schema=ARROW))
    table = sql_catalog.load_table("db.first")
    assert table.metadata.metadata_log == []
    col = table_history(_metadata_path(table)).snapshots[-1].columns["s"]
    assert _flags(col) == ("abcdefgh", "abcdxyz", False, False)


def test_an_empty_log_does_not_prove_a_later_append(make):
    """Created, then appended, then the log stripped: the same shape as a create-and-append commit but for the
    file's version number, and the version the writer read is gone."""
    table = make({DEFAULT: "full"})
    _append(table, ["ab", "b"])
    assert _flags(table_history(_metadata_path(table)).snapshots[-1].columns["s"]) == ("ab", "b", False, False)
    col = table_history(_keep_log(table, lambda i: False)).snapshots[-1].columns["s"]
    assert _flags(col) == ("ab", "b", True, True)


def test_a_log_holding_the_version_before_proves_the_modes(make):
    """The log lost its older entries but holds the version written just before the append: the modes are known."""
    table = make({DEFAULT: "truncate(4)"})
    _set(table, **{DEFAULT: "full"})
    _append(table, REAL)
    col = table_history(_keep_log(table, lambda i: i >= 1)).snapshots[-1].columns["s"]
    assert _flags(col) == ("abcdefgh", "abcdxyz", False, False)
