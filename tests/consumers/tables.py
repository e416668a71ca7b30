"""Tables for the consumer-profile tests, built in memory: any number of columns (with docs), statistics for each,
a REST catalog (so datasets carry a TABLE symlink), and run events with many input -> output links."""
from __future__ import annotations

import dataclasses
import json
from types import MappingProxyType
from typing import Any

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState

from iceberg_lineage.config import Settings
from iceberg_lineage.lineage.events import snapshot_run_event
from iceberg_lineage.lineage.serde import to_json
from iceberg_lineage.read.metadata_json import parse_metadata
from iceberg_lineage.read.source import LoadedTable, RelocatingIO
from iceberg_lineage.stats import snapshot_stats
from iceberg_lineage.stats.model import ColumnStats

SNAPSHOT = 8_000_000_000_000_000_001
CATALOG_URI = "http://rest.example:8181"


def table(columns: int = 3, *, doc: str | None = None, name: str = "orders", namespace: str = "mart",
          location: str = "s3://lake/warehouse/mart/orders") -> LoadedTable:
    fields = [{"id": i, "name": f"c{i:04d}", "type": "string" if i % 2 else "long", "required": False,
               **({"doc": doc} if doc else {})} for i in range(1, columns + 1)]
    raw = {
        "format-version": 2, "table-uuid": "0e5f63a4-2b1c-4c8d-9e0f-abcdef012345", "location": location,
        "last-sequence-number": 1, "last-updated-ms": 1764590400000, "last-column-id": columns,
        "current-schema-id": 0, "schemas": [{"type": "struct", "schema-id": 0, "fields": fields}],
        "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}], "last-partition-id": 999,
        "properties": {}, "current-snapshot-id": SNAPSHOT,
        "snapshots": [{"snapshot-id": SNAPSHOT, "sequence-number": 1, "timestamp-ms": 1764590400000,
                       "manifest-list": f"{location}/metadata/snap-1.avro", "schema-id": 0,
                       "summary": {"operation": "append", "engine-name": "spark", "added-records": "10",
                                   "total-records": "10", "total-data-files": "1", "total-files-size": "4096"}}],
        "refs": {"main": {"snapshot-id": SNAPSHOT, "type": "branch"}},
    }
    return LoadedTable(metadata=parse_metadata(raw, f"{location}/metadata/v1.metadata.json"), io=RelocatingIO(None),
                       catalog_name="lake", catalog_type="rest", catalog_properties={"uri": CATALOG_URI},
                       identifier=(namespace, name))


def stats(loaded: LoadedTable, *, bound: str = "abcdefgh"):
    """Entries-depth statistics with every column's counts and bounds (strings ``bound``, longs -i..i)."""
    base = snapshot_stats(loaded, depth="summary")
    columns = {
        f.name: ColumnStats(field_id=f.id, name=f.name, type=f.type, value_count=10, null_count=1, nan_count=None,
                            min=bound if f.type == "string" else -f.id,
                            max=bound if f.type == "string" else f.id, has_metrics=True)
        for f in loaded.metadata.current_schema.fields
    }
    return dataclasses.replace(base, columns=MappingProxyType(columns), depth="entries")


def snapshot_event(columns: int, settings: Settings | None = None, **kwargs: Any) -> RunEvent:
    loaded = table(columns, **kwargs)
    return snapshot_run_event(loaded, stats(loaded), settings or Settings())


def linked_run(inputs: int, outputs: int, event_type: RunState = RunState.COMPLETE) -> RunEvent:
    """A run reading ``inputs`` tables and writing ``outputs`` ones: inputs x outputs links."""
    def dataset(kind: Any, prefix: str, i: int) -> Any:
        return kind(namespace="s3://lake", name=f"warehouse/{prefix}/t{i:04d}")

    return RunEvent(
        eventType=event_type, eventTime="2026-12-01T12:00:00.000Z",
        run=Run(runId="01930f5e-7c00-7000-8000-000000000001"),
        job=Job(namespace="iceberg-lineage", name="etl"),
        inputs=[dataset(InputDataset, "in", i) for i in range(inputs)],
        outputs=[dataset(OutputDataset, "out", i) for i in range(outputs)],
        producer="https://github.com/iceberg-lineage/iceberg-lineage/tree/0.1.0",
    )


def doc(event: Any) -> dict[str, Any]:
    return json.loads(to_json(event))


def size(event: Any) -> int:
    return len(to_json(event).encode())
