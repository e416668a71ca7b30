"""Edge sizes: 64-bit snapshot ids survive exactly, and wide tables stay under the 1 MB event limit."""
from __future__ import annotations

import dataclasses
import json
from types import MappingProxyType

from tests.support.olschema import validate_event
from iceberg_lineage.config import DEFAULT_EVENTS_MAX_BYTES as MAX_EVENT_BYTES, Settings
from iceberg_lineage.lineage.events import dataset_event, snapshot_run_event
from iceberg_lineage.lineage.serde import to_json
from iceberg_lineage.read.metadata_json import parse_metadata
from iceberg_lineage.read.source import LoadedTable, RelocatingIO
from iceberg_lineage.stats import snapshot_stats
from iceberg_lineage.stats.model import ColumnStats

BIG_PARENT = 2**63 - 25
BIG = 2**63 - 7  # far above 2**53: a double would round it


def _table(columns: int = 2) -> LoadedTable:
    fields = [{"id": i, "name": f"c{i:04d}", "type": "string" if i % 2 else "long", "required": False}
              for i in range(1, columns + 1)]
    snapshot = lambda sid, parent, seq, ts, extra: {  # noqa: E731
        "snapshot-id": sid, "parent-snapshot-id": parent, "sequence-number": seq, "timestamp-ms": ts,
        "manifest-list": f"s3://b/t/metadata/snap-{sid}.avro", "schema-id": 0,
        "summary": {"operation": "append", "engine-name": "flink", "engine-version": "1.20",
                    "flink.job-id": "f00d", **extra},
    }
    raw = {
        "format-version": 2, "table-uuid": "d5f0b2a4-3c1e-4b7a-9e0f-123456789abc", "location": "s3a://b/t",
        "last-sequence-number": 2, "last-updated-ms": 1700000001000, "last-column-id": columns,
        "current-schema-id": 0, "schemas": [{"type": "struct", "schema-id": 0, "fields": fields}],
        "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}], "last-partition-id": 999,
        "properties": {"write.format.default": "ORC"}, "current-snapshot-id": BIG,
        "snapshots": [
            snapshot(BIG_PARENT, None, 1, 1700000000000, {"added-records": "5", "total-records": "5"}),
            snapshot(BIG, BIG_PARENT, 2, 1700000001000, {"added-records": "3", "total-records": "8",
                                                         "added-files-size": "100", "added-data-files": "1"}),
        ],
        "refs": {"main": {"snapshot-id": BIG, "type": "branch"}},
    }
    return LoadedTable(metadata=parse_metadata(raw, "s3://b/t/metadata/v2.metadata.json"), io=RelocatingIO(None))


def test_snapshot_ids_above_2_to_53_survive_exactly():
    table = _table()
    text = to_json(snapshot_run_event(table, snapshot_stats(table, depth="summary"), Settings()))
    validate_event(text)
    out = json.loads(text)["outputs"][0]
    assert out["facets"]["version"]["datasetVersion"] == str(BIG)
    assert out["outputFacets"]["icebergCommitReport"]["snapshotId"] == BIG
    assert out["facets"]["icebergTableStatistics"]["snapshotId"] == BIG
    assert f'"snapshotId": {BIG}' in text  # an exact JSON integer, not a rounded float
    assert out["facets"]["storage"]["fileFormat"] == "orc"
    run = json.loads(text)["run"]["facets"]
    assert run["externalQuery"] == {**{k: v for k, v in run["externalQuery"].items() if k.startswith("_")},
                                    "externalQueryId": "f00d", "source": "flink"}
    assert json.loads(text)["job"]["name"] == "t.flink"


def _wide_stats(table: LoadedTable, columns: int, bound: str):
    stats = snapshot_stats(table, depth="summary")
    cols = {
        f"c{i:04d}": ColumnStats(field_id=i, name=f"c{i:04d}", type="string" if i % 2 else "long", value_count=8,
                                 null_count=0, nan_count=0, min=(bound if i % 2 else -i), max=(bound if i % 2 else i),
                                 has_metrics=True)
        for i in range(1, columns + 1)
    }
    return dataclasses.replace(stats, columns=MappingProxyType(cols), depth="entries")


def test_thousand_columns_fit_in_one_event():
    table = _table(1000)
    text = to_json(snapshot_run_event(table, _wide_stats(table, 1000, "x" * 16), Settings()))
    assert len(text.encode()) < MAX_EVENT_BYTES
    validate_event(text)
    facets = json.loads(text)["outputs"][0]["facets"]
    assert len(facets["icebergTableStatistics"]["columns"]) == 1000
    assert len(facets["dataQualityMetrics"]["columnMetrics"]) == 1000
    assert len(facets["schema"]["fields"]) == 1000


def test_oversized_column_detail_is_dropped_and_listed():
    table = _table(1000)
    stats = _wide_stats(table, 1000, "y" * 2000)  # untruncated long bounds (metrics mode full)
    for event in (snapshot_run_event(table, stats, Settings()), dataset_event(table, stats, Settings())):
        text = to_json(event)
        assert len(text.encode()) < MAX_EVENT_BYTES
        validate_event(text)
        data = json.loads(text)
        facets = (data.get("dataset") or data["outputs"][0])["facets"]
        assert "columns" not in facets["icebergTableStatistics"]
        assert len(facets["icebergTableStatistics"]["columnsOmitted"]) == 1000
        assert facets["dataQualityMetrics"]["columnMetrics"] == {}


def test_read_side_input_dataset_with_scan_report():
    from openlineage.client.event_v2 import InputDataset, Job, Run, RunEvent, RunState
    from openlineage.client.uuid import generate_new_uuid

    from iceberg_lineage.lineage.facets import input_statistics_facet, scan_report_facet, version_facet

    table = _table()
    report = scan_report_facet(
        BIG, "ref(name=\"c0001\") == \"x\"", 0, ["c0001", "c0002"],
        {"totalPlanningDuration": 12, "resultDataFiles": 3, "skippedDataFiles": 1, "totalFileSizeInBytes": 4096},
        {"engine-name": "pyiceberg"},
    )
    dataset = InputDataset(namespace="file", name=table.metadata.location, facets={"version": version_facet(BIG)},
                           inputFacets={"inputStatistics": input_statistics_facet(row_count=8, size=4096, file_count=3),
                                        "icebergScanReport": report})
    event = RunEvent(eventType=RunState.COMPLETE, eventTime="2026-01-01T00:00:00.000Z",
                     run=Run(runId=str(generate_new_uuid())), job=Job(namespace="n", name="read"), inputs=[dataset])
    text = to_json(event)
    validate_event(text)
    got = json.loads(text)["inputs"][0]
    assert got["inputFacets"]["icebergScanReport"]["snapshotId"] == BIG
    assert got["inputFacets"]["icebergScanReport"]["scanMetrics"]["resultDataFiles"] == 3
    assert got["facets"]["version"]["datasetVersion"] == str(BIG)
