"""Snapshot runs built plain (the scanner's form, :func:`~iceberg_lineage.lineage.serde.make`) are byte for byte the
JSON openlineage-python writes for the same events built as its objects, and every one is a valid OpenLineage event.

Every fixture table (format v1, v2 and v3; appends, overwrites, deletes, deletion vectors, a schema evolution), at
summary depth (no statistics of columns) and at entries depth (with them), and under a byte budget small enough that
events are trimmed."""
from __future__ import annotations

import dataclasses
import datetime as dt
import json

import pytest
from openlineage.client.event_v2 import RunEvent
from openlineage.client.serde import Serde

from iceberg_lineage.config import Settings
from iceberg_lineage.lineage.events import snapshot_runs
from iceberg_lineage.lineage.serde import Plain, make, plain_json, to_json
from iceberg_lineage.stats import table_history
from tests.support.fixture_tables import FIXTURE_TABLES, fixture_table
from tests.support.olschema import validate_event

CLOCK = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)


def _catalogued(table):
    """The fixture as a catalog's table: symlinks, a catalog facet with redacted properties, and a comment."""
    metadata = dataclasses.replace(table.metadata, properties={**table.metadata.properties, "comment": "a table"})
    return dataclasses.replace(table, metadata=metadata, identifier=("db", "t"), name="t", catalog_name="prod",
                               catalog_type="rest", catalog_properties={"uri": "https://u:secret@rest.example/x",
                                                                        "warehouse": "s3://bucket/w"})


def _both(table, settings: Settings, depth: str) -> tuple[dict[int, list], dict[int, list]]:
    ids = [s.snapshot_id for s in table.metadata.snapshots]
    return tuple(snapshot_runs(table, ids, settings, depth=depth, capture_time=CLOCK, plain=plain)  # type: ignore
                 for plain in (False, True))


@pytest.mark.parametrize("catalogued", [False, True])
@pytest.mark.parametrize("depth", ["summary", "entries"])
@pytest.mark.parametrize("name", FIXTURE_TABLES)
def test_plain_runs_are_the_objects_json(name, depth, catalogued):
    table = fixture_table(name)
    objects, plain = _both(_catalogued(table) if catalogued else table, Settings(), depth)
    assert list(plain) == list(objects) and objects
    for snapshot_id, events in objects.items():
        built = plain[snapshot_id]
        assert [type(e) for e in built] == [Plain, Plain] and [type(e) for e in events] == [RunEvent, RunEvent]
        texts = [plain_json(e) for e in built]
        assert texts == [Serde.to_json(e) for e in events] == [to_json(e) for e in events]
        for text in texts:
            validate_event(text)


def test_the_fixtures_cover_what_events_can_hold():
    """What the comparison above goes through: each operation, each format, the optional facets."""
    seen: set[str] = set()
    for name in FIXTURE_TABLES:
        table = _catalogued(fixture_table(name))
        seen.add(f"v{table.metadata.format_version}")
        for events in _both(table, Settings(), "entries")[1].values():
            doc = events[-1]
            seen.add(doc["outputs"][0]["facets"]["icebergTableStatistics"].get("operation") or "none")
            seen.update(doc["run"]["facets"])
            seen.update(doc["outputs"][0]["facets"])
            seen.update(doc["outputs"][0]["outputFacets"])
    assert {"v1", "v2", "v3", "append", "overwrite", "delete", "lifecycleStateChange", "outputStatistics",
            "icebergCommitReport", "dataQualityMetrics", "schema", "symlinks", "catalog", "documentation", "ownership",
            "parent", "externalQuery", "processing_engine", "icebergTableStatistics", "version", "storage"} <= seen


@pytest.mark.parametrize("name", FIXTURE_TABLES)
def test_trimmed_plain_runs_are_the_trimmed_objects_json(name):
    """Under a budget that trims: the plain event goes through the same trimming, to the same bytes."""
    table = fixture_table(name)
    settings = Settings().updated({"events.max_bytes": 4_000})
    objects, plain = _both(table, settings, "entries")
    for snapshot_id, events in objects.items():
        texts = [plain_json(e) for e in plain[snapshot_id]]
        assert texts == [Serde.to_json(e) for e in events]
        for text in texts:
            validate_event(text)


def test_the_budget_trims_some_fixture_events():
    """The budget above is small enough to trim: events of snapshots with column statistics are trimmed (those with
    few columns fit as they are)."""
    settings = Settings().updated({"events.max_bytes": 4_000})
    with_columns = trimmed = 0
    for name in FIXTURE_TABLES:
        table = fixture_table(name)
        with_columns += sum(1 for s in table_history(table, depth="entries") if s.columns)
        for events in _both(table, settings, "entries")[1].values():
            statistics = events[-1]["outputs"][0]["facets"]["icebergTableStatistics"]
            trimmed += "columnsOmitted" in statistics or "schemaOmitted" in statistics
    assert 0 < trimmed <= with_columns


def test_owned_snapshots_rebuild_the_same_events():
    """A hook-tagged snapshot's owner events (objects, from the plain event) are those the objects path rebuilds."""
    from iceberg_lineage.lineage.tags import Ownership

    table = fixture_table("duckdb_java_spark_eq_deletes")
    sid = table.metadata.snapshots[-1].snapshot_id
    owner = Ownership(owner="snapshot", run_id="01890000-0000-7000-8000-000000000001", job_namespace="ns",
                      job_name="job")
    objects, plain = (snapshot_runs(table, [sid], Settings(), depth="entries", capture_time=CLOCK,
                                    owners={sid: owner}, plain=p) for p in (False, True))
    assert [type(e) for e in plain[sid]] == [RunEvent, RunEvent]
    assert [to_json(e) for e in plain[sid]] == [Serde.to_json(e) for e in objects[sid]]
    assert json.loads(to_json(plain[sid][-1]))["run"]["runId"] == owner.run_id


def test_make_fills_defaults_and_drops_nulls():
    """:func:`make`'s plain form against the object's own serialisation, including a value given as None over a
    default, an enum, and nested objects."""
    from openlineage.client.event_v2 import Job, Run, RunState
    from openlineage.client.facet_v2 import schema_dataset

    def build(plain: bool) -> object:
        field = make(schema_dataset.SchemaDatasetFacetFields, plain, name="a", type="int", description=None,
                     fields=None)
        return make(RunEvent, plain, eventType=RunState.START, eventTime="2026-01-02T03:04:05.000Z",
                    run=make(Run, plain, runId="01890000-0000-7000-8000-000000000001"),
                    job=make(Job, plain, namespace="n", name="j",
                             facets={"schema": make(schema_dataset.SchemaDatasetFacet, plain, fields=[field],
                                                    producer="https://example.com/p")}),
                    producer="https://example.com/p")

    text = plain_json(build(True))
    assert text == Serde.to_json(build(False))
    assert json.loads(text)["job"]["facets"]["schema"]["fields"] == [{"name": "a", "type": "int"}]
    assert json.loads(text)["run"] == {"runId": "01890000-0000-7000-8000-000000000001", "facets": {}}


def test_a_schema_as_deep_as_the_reader_accepts_is_the_same_plain(tmp_path):
    """A schema nested far deeper than the schema facet lists (see test_deep_schema, which goes deeper from a
    command's own stack): plain parts are not walked again, so building it plain recurses no deeper than the
    objects' serialisation does, and gives the same bytes."""
    from iceberg_lineage.read.source import open_table
    from tests.lineage.test_deep_schema import _deep_table
    from tests.support.fixture_tables import EDITABLE_TABLE, fixture_relocation

    path = _deep_table(tmp_path, 200)
    table = open_table(str(path), relocate=fixture_relocation(EDITABLE_TABLE))
    objects, plain = _both(table, Settings(), "summary")
    for snapshot_id, events in objects.items():
        assert [plain_json(e) for e in plain[snapshot_id]] == [Serde.to_json(e) for e in events]
