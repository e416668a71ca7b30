"""Metadata-only commits are ALTER runs with the schema diff; catalog operations are CREATE, DROP, RENAME runs."""
from __future__ import annotations

import pytest
from tests.support.hook import SCHEMA, lifecycle, outputs, rows, table_of, valid, version
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import StringType

from iceberg_lineage.hook import reporter as hook


@pytest.fixture
def table(sql_catalog, sink):
    hook.observe(sql_catalog, client=sink.client)
    table = sql_catalog.create_table("db.t", SCHEMA)
    table.append(rows(1, 2))
    sink.events()
    sink.path.unlink()
    return table


def _statistics(event):
    return outputs(event)[0]["facets"]["icebergTableStatistics"]


def test_schema_evolution_is_alter_with_the_diff(table, sink):
    with table.update_schema() as update:
        update.add_column("note", StringType())
        update.rename_column("v", "value")

    # the schema rule's checks run (issue 18) follows the ALTER; each run a START, then its COMPLETE
    start, event, checks_start, checks = valid(sink.events())
    assert checks["job"]["name"] == checks_start["job"]["name"] == "db.t.checks"
    assert [(e["eventType"], e["run"]["runId"]) for e in (start, checks_start)] == [
        ("START", event["run"]["runId"]), ("START", checks["run"]["runId"])]
    assert outputs(start) == []  # the COMPLETE carries the table (one Marquez version per run)
    assert "dataQualityAssertions" not in checks_start["inputs"][0].get("inputFacets", {})
    assert event["eventType"] == "COMPLETE" and event["job"]["name"] == "db.t.pyiceberg"
    out = outputs(event)[0]
    assert lifecycle(out) == "ALTER"
    assert [f["name"] for f in out["facets"]["schema"]["fields"]] == ["id", "value", "note"]
    change = _statistics(event)["schemaChange"]
    assert change["fromSchemaId"] == 0 and change["toSchemaId"] == 1
    assert change["added"] == [{"fieldId": 3, "name": "note", "type": "string"}]
    assert change["renamed"] == [{"fieldId": 2, "from": "v", "to": "value"}]


def test_partition_evolution_and_properties_are_alter(table, sink):
    with table.update_spec() as update:
        update.add_field("v", IdentityTransform(), "v_part")
    table.transaction().set_properties(owner="data-team").commit_transaction()

    spec_start, spec_event, properties_start, properties_event = valid(sink.events())
    assert [e["eventType"] for e in (spec_start, properties_start)] == ["START", "START"]
    assert lifecycle(outputs(spec_event)[0]) == lifecycle(outputs(properties_event)[0]) == "ALTER"
    assert "schemaChange" not in _statistics(spec_event)
    assert outputs(properties_event)[0]["facets"]["ownership"]["owners"] == [{"name": "user:data-team"}]
    assert len({e["run"]["runId"] for e in (spec_event, properties_event)}) == 2


def test_new_branch_and_tag_are_recorded_in_the_custom_facet(table, sink):
    first = table.current_snapshot().snapshot_id
    table.append(rows(3))
    table.manage_snapshots().create_tag(first, "v1").commit()
    table.manage_snapshots().create_branch(first, "audit").commit()

    tag_event, branch_event = [e for e in valid(sink.events()) if outputs(e) and lifecycle(outputs(e)[0]) == "ALTER"]
    assert _statistics(tag_event)["snapshotId"] == first and "v1" in _statistics(tag_event)["refs"]
    assert _statistics(branch_event)["snapshotId"] == first and "audit" in _statistics(branch_event)["refs"]
    assert version(outputs(tag_event)[0]) == table.current_snapshot().snapshot_id


def test_create_register_rename_drop(sql_catalog, sink):
    hook.observe(sql_catalog, client=sink.client)
    created = sql_catalog.create_table("db.a", SCHEMA)
    created.append(rows(1))
    sql_catalog.rename_table("db.a", "db.b")
    location = sql_catalog.load_table("db.b").metadata_location
    sql_catalog.drop_table("db.b")
    sql_catalog.register_table("db.c", location)

    everything = valid(sink.events())
    starts = [e for e in everything if e["eventType"] == "START"]  # every run: its START, then its COMPLETE
    events = [e for e in everything if e["eventType"] != "START"]
    assert [s["run"]["runId"] for s in starts] == [e["run"]["runId"] for e in events]
    assert everything[::2] == starts
    kinds = [(e["job"]["name"], lifecycle(outputs(e)[0])) for e in events]
    assert kinds == [
        ("db.a.pyiceberg", "CREATE"),
        ("db.a.pyiceberg", "CREATE"),  # the first snapshot of the table
        ("db.b.pyiceberg", "RENAME"),
        ("db.b.pyiceberg", "DROP"),
        ("db.c.pyiceberg", "CREATE"),
    ]
    rename = outputs(events[2])[0]
    assert table_of(rename) == "db.b"
    previous = rename["facets"]["lifecycleStateChange"]["previousIdentifier"]
    assert previous["name"] == rename["name"]  # location naming: a rename keeps the dataset
    assert table_of(outputs(events[3])[0]) == "db.b"
    assert all(e["eventType"] == "COMPLETE" for e in events)
