"""The offline validator itself: it accepts a real event, rejects broken facets, and never goes to the network."""
from __future__ import annotations

import copy
import json
import socket

import pytest

from tests.support.fixture_tables import fixture_table
from tests.support.olschema import validate_event
from iceberg_lineage.config import Settings
from iceberg_lineage.lineage.events import snapshot_run_event
from iceberg_lineage.lineage.serde import to_json
from iceberg_lineage.stats import snapshot_stats


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("network access during schema validation")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


@pytest.fixture(scope="module")
def event() -> dict:
    table = fixture_table("impala_spark_v3_deletion_vectors")
    return json.loads(to_json(snapshot_run_event(table, snapshot_stats(table), Settings())))


def test_valid_event_passes(event):
    validate_event(event)
    assert {"icebergTableStatistics", "dataQualityMetrics", "schema", "catalog"} <= set(event["outputs"][0]["facets"])


def _broken(event: dict, path: list, value) -> dict:
    out = copy.deepcopy(event)
    target = out
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return out


FACETS = ["outputs", 0, "facets"]
OUTPUT_FACETS = ["outputs", 0, "outputFacets"]


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ([*FACETS, "version", "datasetVersion"], 3685752423136077685, "is not of type 'string'"),
        ([*FACETS, "dataQualityMetrics", "columnMetrics"], KeyError, "'columnMetrics' is a required property"),
        ([*FACETS, "dataQualityMetrics", "rowCount"], "5", "is not of type 'integer'"),
        ([*FACETS, "icebergTableStatistics", "snapshotId"], "3685752423136077685", "is not of type 'integer'"),
        ([*FACETS, "icebergTableStatistics", "deleteFiles", "dv"], -1, "less than the minimum"),
        ([*OUTPUT_FACETS, "icebergCommitReport", "snapshotId"], "x", "is not of type 'number'"),
        ([*FACETS, "catalog", "framework"], KeyError, "'framework' is a required property"),
        ([*FACETS, "version", "_schemaURL"], "https://example.com/Unknown.json", "unknown _schemaURL"),
        (["eventTime"], "yesterday", "is not a 'date-time'"),
        (["run", "runId"], "not-a-uuid", "is not a 'uuid'"),
    ],
)
def test_broken_event_fails(event, path, value, message):
    with pytest.raises(AssertionError, match=message.replace("(", r"\(")):
        validate_event(_broken(event, path, value))


def test_facet_under_wrong_key_or_container_fails(event):
    moved = copy.deepcopy(event)
    moved["outputs"][0]["facets"]["datasetVersion"] = moved["outputs"][0]["facets"].pop("version")
    with pytest.raises(AssertionError, match="not the schema's facet key"):
        validate_event(moved)
    misplaced = copy.deepcopy(event)
    misplaced["outputs"][0]["facets"]["icebergCommitReport"] = misplaced["outputs"][0]["outputFacets"].pop(
        "icebergCommitReport"
    )
    with pytest.raises(AssertionError, match="does not belong in facets"):
        validate_event(misplaced)
