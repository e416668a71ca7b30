"""Events of tables PyIceberg writes through a SQL catalog on SQLite: schema evolution, deletes, multi-snapshot
commits, catalog naming, and the lifecycle builders the hooks and scanner use."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import DoubleType, LongType, NestedField, StringType, StructType

from tests.support.olschema import validate_event
from iceberg_lineage.config import Settings
from iceberg_lineage.lineage.events import dataset_event, history_events, lifecycle_event
from iceberg_lineage.lineage.serde import to_json
from iceberg_lineage.read.source import open_table
from iceberg_lineage.stats import table_history

SETTINGS = Settings()

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False, doc="row id"),
    NestedField(2, "name", StringType(), required=False),
    NestedField(3, "loc", StructType(NestedField(4, "lat", DoubleType(), required=False),
                                     NestedField(5, "lon", DoubleType(), required=False)), required=False),
)


def _rows(ids: list[int], with_loc: bool = True, with_amount: bool = False) -> pa.Table:
    cols: dict = {"id": pa.array(ids, pa.int64())}
    cols["customer" if with_amount else "name"] = pa.array([f"n{i}" for i in ids], pa.string())
    if with_loc:
        cols["loc"] = pa.array([{"lat": 1.0 * i, "lon": 2.0 * i} for i in ids],
                               pa.struct([("lat", pa.float64()), ("lon", pa.float64())]))
    if with_amount:
        cols["amount"] = pa.array([0.5 * i for i in ids], pa.float64())
    return pa.table(cols)


@pytest.fixture
def evolved(sql_catalog):
    """append, evolve (add amount, rename name -> customer, drop loc), append, delete, overwrite."""
    table = sql_catalog.create_table("db.orders", SCHEMA, properties={"comment": "Orders", "owner": "alice"})
    table.append(_rows([1, 2, 3]))
    with table.update_schema() as update:
        update.add_column("amount", DoubleType())
        update.rename_column("name", "customer")
        update.delete_column("loc")
    table.append(_rows([4, 5], with_loc=False, with_amount=True))
    table.delete("id = 1")
    table.overwrite(_rows([7], with_loc=False, with_amount=True))
    return sql_catalog.load_table("db.orders")


def _events(table) -> tuple[list, list[dict]]:
    loaded = open_table(table)
    history = table_history(loaded)
    events = history_events(loaded, history, SETTINGS)
    return list(history), [json.loads(to_json(e)) for e in events]


def test_every_event_is_valid_and_one_per_snapshot(evolved):
    history, events = _events(evolved)
    assert len(events) == len(evolved.metadata.snapshots) >= 5  # overwrite commits a delete and an append
    for event in events:
        validate_event(event)
    ops = [s.operation for s in history]
    changes = [e["outputs"][0]["facets"].get("lifecycleStateChange", {}).get("lifecycleStateChange") for e in events]
    assert changes[0] == "CREATE"
    assert changes[1] == "ALTER"
    assert all(c == "OVERWRITE" for c, op in zip(changes, ops) if op in ("delete", "overwrite"))


def test_schema_diff_by_field_id(evolved):
    _, events = _events(evolved)
    change = events[1]["outputs"][0]["facets"]["icebergTableStatistics"]["schemaChange"]
    assert change["added"] == [{"fieldId": 6, "name": "amount", "type": "double"}]
    assert change["renamed"] == [{"fieldId": 2, "from": "name", "to": "customer"}]
    assert [d["name"] for d in change["dropped"]] == ["loc", "loc.lat", "loc.lon"]
    assert change["toSchemaId"] == change["fromSchemaId"] + 1
    assert "schemaChange" not in events[0]["outputs"][0]["facets"]["icebergTableStatistics"]
    assert "schemaChange" not in events[2]["outputs"][0]["facets"]["icebergTableStatistics"]


def test_table_facets_and_sql_catalog_naming(evolved, sql_catalog):
    _, events = _events(evolved)
    first = events[0]
    out = first["outputs"][0]
    facets = out["facets"]
    assert out["namespace"] == "file" and out["name"].endswith("/warehouse/db/orders")
    assert facets["symlinks"]["identifiers"] == [
        {"namespace": sql_catalog.properties["uri"], "name": "db.orders", "type": "TABLE"}
    ]
    assert (facets["catalog"]["type"], facets["catalog"]["name"]) == ("sql", "test")
    assert facets["documentation"]["description"] == "Orders"
    assert facets["ownership"]["owners"] == [{"name": "user:alice"}]
    assert facets["storage"]["fileFormat"] == "parquet"
    fields = facets["schema"]["fields"]
    assert fields[0] == {"name": "id", "type": "long", "description": "row id", "ordinal_position": 1}
    assert [f["name"] for f in fields[2]["fields"]] == ["lat", "lon"]
    assert first["job"]["name"].startswith("db.orders.")
    metrics = facets["dataQualityMetrics"]
    assert metrics["rowCount"] == 3 and metrics["columnMetrics"]["id"] == {"nullCount": 0, "count": 3, "min": 1, "max": 3,
                                                                           "quantiles": {}}
    assert facets["icebergTableStatistics"]["columns"]["name"]["min"] == "n1"


def test_primary_table_naming(evolved, sql_catalog):
    loaded = open_table(evolved)
    table_first = Settings().updated({"naming.primary": "table"})
    event = json.loads(to_json(dataset_event(loaded, table_history(loaded).snapshots[-1], table_first)))
    validate_event(event)
    dataset = event["dataset"]
    assert (dataset["namespace"], dataset["name"]) == (sql_catalog.properties["uri"], "db.orders")
    assert dataset["facets"]["symlinks"]["identifiers"][0]["type"] == "LOCATION"


def test_lifecycle_builders(sql_catalog):
    created = sql_catalog.create_table("db.fresh", SCHEMA)
    loaded = open_table(created)
    create = json.loads(to_json(lifecycle_event(loaded, "CREATE", SETTINGS, engine="pyiceberg")))
    validate_event(create)
    assert create["outputs"][0]["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "CREATE"
    assert "version" not in create["outputs"][0]["facets"]  # no snapshot yet
    assert create["job"]["name"] == "db.fresh.pyiceberg"

    renamed = open_table(sql_catalog.rename_table("db.fresh", "db.renamed"))
    rename = json.loads(to_json(lifecycle_event(renamed, "RENAME", Settings().updated({"naming.primary": "table"}),
                                                previous_identifier=("db", "fresh"))))
    validate_event(rename)
    change = rename["outputs"][0]["facets"]["lifecycleStateChange"]
    assert change["previousIdentifier"] == {"namespace": sql_catalog.properties["uri"], "name": "db.fresh"}
    assert rename["outputs"][0]["name"] == "db.renamed"

    drop = lifecycle_event(renamed, "DROP", SETTINGS)
    assert drop.run.runId == lifecycle_event(renamed, "DROP", SETTINGS).run.runId  # deterministic for a scanner
    assert drop.run.runId != lifecycle_event(renamed, "RENAME", SETTINGS).run.runId
    validate_event(to_json(drop))
