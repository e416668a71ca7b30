"""The byte budget (events.max_bytes): an event over it is trimmed in the declared order, step by step, only as far
as needed; it stays schema-valid and is never dropped."""
from __future__ import annotations

import json

import pytest

from iceberg_lineage.config import Settings, load_settings
from iceberg_lineage.lineage.budget import size_of, trim
from iceberg_lineage.lineage.events import dataset_event
from iceberg_lineage.lineage.serde import to_json
from tests.consumers.tables import doc, snapshot_event, stats, table
from tests.support.olschema import validate_event

COLUMNS = 300


def _out(d: dict) -> dict:
    return d["outputs"][0]["facets"]


@pytest.fixture(scope="module")
def event():
    return snapshot_event(COLUMNS, doc="what the column holds, in a few words")


def _bytes(d: dict) -> int:
    """An event document's bytes as sent (sorted keys, no nulls), computed here independently of the module."""
    return len(json.dumps(d, sort_keys=True).encode())


def _sizes(full) -> dict[str, int]:
    """Each part's bytes, computed from the untrimmed event (independently of the budget module)."""
    facets = _out(doc(full))
    return {"metrics": len(json.dumps(facets["dataQualityMetrics"]["columnMetrics"])),
            "detail": len(json.dumps(facets["icebergTableStatistics"]["columns"]))}


def test_an_event_within_budget_is_left_as_it_is(event):
    got = trim(event, size_of(event))
    assert got.event is event and got.steps == () and got.size == _bytes(doc(event))


def test_step_1_keeps_the_metrics_of_as_many_columns_as_fit_in_schema_order(event):
    budget = _bytes(doc(event)) - _sizes(event)["metrics"] // 2  # about half the metrics must go
    got = trim(event, budget)
    assert got.steps == ("columns",) and got.size <= budget
    facets = _out(doc(got.event))
    kept = list(facets["dataQualityMetrics"]["columnMetrics"])
    names = [f"c{i:04d}" for i in range(1, COLUMNS + 1)]
    assert sorted(kept) == names[:len(kept)] and 0 < len(kept) < COLUMNS
    assert facets["icebergTableStatistics"]["columnsOmitted"] == names[len(kept):]
    assert len(facets["icebergTableStatistics"]["columns"]) == COLUMNS  # step 2 not needed
    # the largest count that fits: one column more would be over
    more = doc(got.event)
    n = names[len(kept)]
    _out(more)["dataQualityMetrics"]["columnMetrics"][n] = _out(doc(event))["dataQualityMetrics"]["columnMetrics"][n]
    assert _bytes(more) > budget and got.size == _bytes(doc(got.event))
    validate_event(to_json(got.event))


def test_steps_2_and_3_drop_the_custom_column_detail_then_field_descriptions(event):
    sizes = _sizes(event)
    budget = _bytes(doc(event)) - sizes["metrics"] - sizes["detail"] + 3_000  # detail gone, descriptions stay
    got = trim(event, budget)
    assert got.steps == ("columns", "column_detail")
    facets = _out(doc(got.event))
    assert facets["dataQualityMetrics"]["columnMetrics"] == {}
    assert "columns" not in facets["icebergTableStatistics"]
    assert len(facets["icebergTableStatistics"]["columnsOmitted"]) == COLUMNS
    assert all(f["description"] for f in facets["schema"]["fields"])
    got = trim(event, got.size - 1_000)
    assert got.steps == ("columns", "column_detail", "descriptions")
    assert not any("description" in f for f in _out(doc(got.event))["schema"]["fields"])
    validate_event(to_json(got.event))


def test_step_4_keeps_identity_version_totals_and_names_and_types(event):
    got = trim(event, 20_000)
    assert got.steps == ("columns", "column_detail", "descriptions", "minimal") and got.size <= 20_000
    d = doc(got.event)
    facets = _out(d)
    assert set(facets) == {"version", "symlinks", "lifecycleStateChange", "dataQualityMetrics",
                           "icebergTableStatistics", "schema"}
    assert facets["schema"]["fields"][0] == {"name": "c0001", "type": "string"}
    assert facets["dataQualityMetrics"]["rowCount"] == 10 and facets["dataQualityMetrics"]["bytes"] == 4096
    assert facets["icebergTableStatistics"]["records"] == 10
    assert set(d["outputs"][0]["outputFacets"]) == {"outputStatistics"}
    assert d["run"] == doc(event)["run"] and d["job"] == doc(event)["job"]  # run and job facets are never trimmed
    validate_event(to_json(got.event))


def test_last_resort_leaves_the_schema_out_and_says_so(event):
    got = trim(event, 5_000)
    assert got.steps[-1] == "schema" and got.size <= 5_000
    facets = _out(doc(got.event))
    assert "schema" not in facets and facets["icebergTableStatistics"]["schemaOmitted"] is True
    validate_event(to_json(got.event))
    over = trim(event, 100)  # nothing left to trim: sent as it is, never dropped
    assert over.steps[-1] == "over" and not over.fits and over.size == got.size


def test_events_max_bytes_is_a_setting_the_builders_use(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "iceberg-lineage.yml").write_text("events:\n  max_bytes: 50000\n")
    assert load_settings(env={}).events.max_bytes == 50_000
    assert load_settings(env={"ICEBERG_LINEAGE__EVENTS__MAX_BYTES": "40000"}).events.max_bytes == 40_000
    settings = Settings().updated({"events.max_bytes": 40_000})
    loaded = table(COLUMNS)
    for built in (snapshot_event(COLUMNS, settings), dataset_event(loaded, stats(loaded), settings)):
        text = to_json(built)
        assert len(text.encode()) <= 40_000
        validate_event(text)
        facets = (json.loads(text).get("dataset") or json.loads(text)["outputs"][0])["facets"]
        assert facets["dataQualityMetrics"]["columnMetrics"] == {}
        assert len(facets["icebergTableStatistics"]["columnsOmitted"]) == COLUMNS
