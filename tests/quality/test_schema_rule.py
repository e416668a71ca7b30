"""The schema rule: a diff by field id on tables PyIceberg evolves (add, drop, rename, int to long), and an illegal
type change written by hand into a copy of the metadata file; plus Iceberg's promotion table."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.types import LongType, StringType

from iceberg_lineage.lineage.facets import schema_change
from iceberg_lineage.quality.evaluate import schema_assertions
from iceberg_lineage.quality.rules import make_rule
from iceberg_lineage.quality.schema import SchemaChange, is_promotion, schema_diff
from iceberg_lineage.read.metadata import Field, Schema
from iceberg_lineage.read.source import open_table
from tests.support.checks import check, new_table, rows


def _evolve(table, change) -> int:
    """Apply one schema change and append under it: the new snapshot's id."""
    with table.update_schema() as update:
        change(update)
    schema = table.schema().as_arrow()
    table.append(pa.Table.from_pylist([{f.name: None for f in schema} | {"id": 99}], schema=schema))
    return table.metadata.current_snapshot_id


@pytest.fixture
def evolving(sql_catalog):
    table = new_table(sql_catalog, "evolving")
    table.append(rows(0, 2))
    return table


def test_added_dropped_renamed_and_promoted_fields(evolving):
    added = _evolve(evolving, lambda u: u.add_column("discount", StringType()))
    renamed = _evolve(evolving, lambda u: u.rename_column("customer_id", "customer"))
    promoted = _evolve(evolving, lambda u: u.update_column("id", LongType()))
    dropped = _evolve(evolving, lambda u: u.delete_column("discount"))
    rule = {"schema": {}}  # the default severities
    expect = {
        added: ("schema.added", "warn", "field discount (string) added", "discount"),
        renamed: ("schema.renamed", "warn", "field customer_id renamed to customer", "customer"),
        promoted: ("schema.promoted", "warn", "field id promoted from int to long", "id"),
        dropped: ("schema.removed", "error", "field discount (string) removed", "discount"),
    }
    for snapshot_id, (name, severity, actual, column) in expect.items():
        [a] = check(evolving, rule, snapshot_id=snapshot_id).assertions
        assert (a.name, a.severity, a.actual, a.column, a.success) == (name, severity, actual, column, False)
        assert a.description == f"field id {a.change.field_id}"
    assert check(evolving, rule, snapshot_id=dropped).blocks  # removed is an error by default
    [first] = check(evolving, rule, snapshot_id=evolving.metadata.snapshots[0].snapshot_id).assertions
    assert (first.success, first.actual) == (True, "not applicable")


def test_ignored_kinds_and_globs(evolving):
    added = _evolve(evolving, lambda u: u.add_column("tmp_load", StringType()))
    [a] = check(evolving, {"schema": {"ignore": ["tmp_*"]}}, snapshot_id=added).assertions
    assert (a.success, a.actual) == (True, "no change")
    [b] = check(evolving, {"schema": {"added": "ignore"}}, snapshot_id=added).assertions
    assert (b.success, b.expected) == (True, "no removed, type_changed, promoted, renamed")
    [c] = check(evolving, {"schema": {"added": "error"}}, snapshot_id=added).assertions
    assert (c.severity, c.blocks) == ("error", True)


def test_illegal_type_change_written_by_hand(evolving, tmp_path):
    """``amount`` float -> string in a new schema and a new snapshot, written into a copy of the metadata file."""
    md_path = Path(evolving.metadata_location.removeprefix("file://"))
    doc = json.loads(md_path.read_text())
    schema = json.loads(json.dumps(next(s for s in doc["schemas"] if s["schema-id"] == doc["current-schema-id"])))
    schema["schema-id"] = max(s["schema-id"] for s in doc["schemas"]) + 1
    for f in schema["fields"]:
        if f["name"] == "amount":
            f["type"] = "string"
    doc["schemas"].append(schema)
    doc["current-schema-id"] = schema["schema-id"]
    last = dict(doc["snapshots"][-1])
    snapshot = {**last, "snapshot-id": 4242, "parent-snapshot-id": last["snapshot-id"],
                "schema-id": schema["schema-id"], "sequence-number": last["sequence-number"] + 1,
                "timestamp-ms": last["timestamp-ms"] + 1}
    doc["snapshots"].append(snapshot)
    doc["last-sequence-number"] = snapshot["sequence-number"]
    doc["current-snapshot-id"] = 4242
    doc["refs"] = {"main": {"snapshot-id": 4242, "type": "branch"}}
    copy = tmp_path / "v99.metadata.json"
    copy.write_text(json.dumps(doc))
    table = open_table(str(copy))
    [a] = check(table, {"schema": {}}).assertions
    assert (a.name, a.severity, a.success, a.column) == ("schema.type_changed", "error", False, "amount")
    assert a.actual == "field amount changed type from float to string (not a legal promotion)"
    assert a.change == SchemaChange("type_changed", a.change.field_id, "amount", "string", "amount", "float")


@pytest.mark.parametrize(("old", "new", "version", "legal"), [
    ("int", "long", 2, True), ("float", "double", 2, True), ("decimal(9,2)", "decimal(12,2)", 2, True),
    ("decimal(9,2)", "decimal(9,3)", 2, False), ("decimal(12,2)", "decimal(9,2)", 2, False),
    ("long", "int", 2, False), ("int", "string", 2, False), ("date", "timestamp", 2, False),
    ("date", "timestamp", 3, True), ("date", "timestamp_ns", 3, True), ("int", "double", 2, False),
])
def test_promotions(old, new, version, legal):
    assert is_promotion(old, new, version) is legal


def test_a_nested_struct_added_is_one_change():
    old = Schema(0, (Field(1, "id", "long"),))
    new = Schema(1, (Field(1, "id", "long"), Field(2, "address", "struct", children=(Field(3, "city", "string"),))))
    assert schema_diff(old, new) == (SchemaChange("added", 2, "address", "struct"),)
    assert schema_diff(new, old) == (SchemaChange("removed", 2, "address", "struct"),)
    rule = make_rule("schema", {})
    [a] = schema_assertions(rule, new, new)
    assert (a.success, a.actual) == (True, "no change")


def test_the_alter_facets_view_lists_every_field_and_every_full_name_that_moved():
    """One diff serves the rule and the ALTER facet (``schema_change``): the facet lists a new struct's children
    and, when a struct is renamed, each child whose full name changed; the rule reports the struct once."""
    old = Schema(0, (Field(1, "id", "int"), Field(2, "addr", "struct", children=(Field(3, "city", "string"),))))
    new = Schema(1, (Field(1, "id", "long"), Field(2, "address", "struct", children=(Field(3, "city", "string"),)),
                     Field(4, "geo", "struct", children=(Field(5, "lat", "double"),))))
    assert schema_diff(old, new) == (
        SchemaChange("promoted", 1, "id", "long", old_name="id", old_type="int"),
        SchemaChange("renamed", 2, "address", "struct", old_name="addr"),
        SchemaChange("added", 4, "geo", "struct"))
    assert schema_change(old, new) == {
        "fromSchemaId": 0, "toSchemaId": 1,
        "added": [{"fieldId": 4, "name": "geo", "type": "struct"}, {"fieldId": 5, "name": "geo.lat", "type": "double"}],
        "dropped": [],
        "renamed": [{"fieldId": 2, "from": "addr", "to": "address"}, {"fieldId": 3, "from": "addr.city",
                                                                       "to": "address.city"}],
        "typeChanged": [{"fieldId": 1, "name": "id", "from": "int", "to": "long"}]}
    assert schema_change(new, new) is None
