"""Reports shaped as Iceberg Java posts them (``ReportMetricsRequest``: ``report-type`` and the report inline), and a
REST table made from a fixture's metadata, for the proxy's unit tests."""
from __future__ import annotations

import json
import uuid
from typing import Any

from iceberg_lineage.config import Settings
from iceberg_lineage.proxy.interpreter import Interpreter
from iceberg_lineage.proxy.tables import LoadResult, RelayedTables, TableLoader
from tests.support.fixture_tables import FIXTURES

TABLE = "duckdb_spark_partition_evolution"
APP_ID = "local-1770000000001"
SPARK = {"engine-name": "spark", "engine-version": "3.5.9", "iceberg-version": "Apache Iceberg 1.10.2", "app-id": APP_ID}


def metadata() -> dict[str, Any]:
    return json.loads((FIXTURES / TABLE / "metadata" / "v4.metadata.json").read_text())


PUBLIC_URI = "http://proxy.example:8181"


def relayed(identifier: tuple[str, ...] = ("db", "a"), md: dict[str, Any] | None = None) -> LoadResult:
    """The fixture's metadata as the table ``identifier`` (its own location and uuid), as if relayed."""
    md = md or metadata()
    return LoadResult(None, {**md, "location": f"s3://warehouse/{'/'.join(identifier)}",
                             "table-uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, ".".join(identifier)))})


def rest_table(identifier: tuple[str, ...] = ("db", "a"), md: dict[str, Any] | None = None):
    """The fixture's metadata as the table ``identifier`` of a REST catalog (its own location and uuid)."""
    from iceberg_lineage.read.rest import rest_table as build

    return build(relayed(identifier, md).metadata, None, identifier, catalog_name="warehouse", uri=PUBLIC_URI)


def tables(upstream: str = "http://127.0.0.1:9", public_uri: str = PUBLIC_URI,
           io_properties: dict[str, str] | None = None, own_load_timeout_s: float = 30.0) -> RelayedTables:
    return RelayedTables(TableLoader(upstream, io_properties or {}, own_load_timeout_s), 100, public_uri=public_uri,
                         io_properties=io_properties or {})


def interpreter(settings: Settings, *, upstream: str = "http://127.0.0.1:9", public_uri: str = PUBLIC_URI,
                io_properties: dict[str, str] | None = None, depth: str = "summary", state: Any = None) -> Interpreter:
    """An interpreter whose :meth:`~Interpreter.build` a test calls (it hands nothing on: no tracker)."""
    return Interpreter(settings, tables(upstream, public_uri, io_properties, settings.proxy.own_load_timeout_s),
                       None, state, depth=depth)  # type: ignore[arg-type]


def lineage_end(settings: Settings, path: Any, *, upstream: str = "http://127.0.0.1:9", clock: Any = None,
                state: Any = None) -> tuple[Interpreter, Queued]:
    """The lineage process's objects as the proxy builds them, in one pass (tables -> tracker -> interpreter), with
    the state file ``path``; what reaches the emitter is kept in the returned :class:`Queued`."""
    from iceberg_lineage.proxy.outbox import Outbox
    from iceberg_lineage.proxy.tracker import ApplicationTracker
    from iceberg_lineage.state.proxy_runs import ApplicationStore

    known, queued = tables(upstream, own_load_timeout_s=settings.proxy.own_load_timeout_s), Queued()
    outbox = Outbox(queued, state)  # type: ignore[arg-type]
    tracker = ApplicationTracker(ApplicationStore(path), settings, known, outbox,
                                 **({"clock": clock} if clock is not None else {}))
    return Interpreter(settings, known, tracker, state, depth="summary"), queued


def events_of(items: list) -> list:
    """The events of an interpreter's items, in order."""
    return [item.event for item in items]


class Queued:
    """An emitter that keeps what is submitted (the test builds and settles it)."""

    def __init__(self) -> None:
        self.items: list = []

    def submit(self, item: Any) -> None:
        self.items.append(item)


def scan_report(snapshot_id: int, *, metadata: dict[str, str] | None = None, table: str = "rest.db.a",
                planning_ns: int = 600_000_000_000) -> dict[str, Any]:
    """Java's canonical ScanReportParser example (TestScanReportParser), for a snapshot of ours."""
    return {
        "report-type": "scan-report", "table-name": table, "snapshot-id": snapshot_id,
        "filter": {"type": "eq", "term": "id", "value": "(hash-3e5c6e7d)"}, "schema-id": 0,
        "projected-field-ids": [1, 2], "projected-field-names": ["id", "v"],
        "metrics": {
            "total-planning-duration": {"count": 1, "time-unit": "nanoseconds", "total-duration": planning_ns},
            "result-data-files": {"unit": "count", "value": 5},
            "result-delete-files": {"unit": "count", "value": 1},
            "total-data-manifests": {"unit": "count", "value": 5},
            "scanned-data-manifests": {"unit": "count", "value": 4},
            "skipped-data-manifests": {"unit": "count", "value": 1},
            "total-file-size-in-bytes": {"unit": "bytes", "value": 1069},
            "skipped-data-files": {"unit": "count", "value": 3},
            "dvs": {"unit": "count", "value": 0},
        },
        **({"metadata": metadata} if metadata else {}),
    }


def commit_report(snapshot_id: int, sequence_number: int, *, metadata: dict[str, str] | None = None,
                  duration_ns: int = 1_234_567_890, attempts: int = 2) -> dict[str, Any]:
    return {
        "report-type": "commit-report", "table-name": "rest.db.b", "snapshot-id": snapshot_id,
        "sequence-number": sequence_number, "operation": "append",
        "metrics": {
            "total-duration": {"count": 1, "time-unit": "nanoseconds", "total-duration": duration_ns},
            "attempts": {"unit": "count", "value": attempts},
            "added-data-files": {"unit": "count", "value": 4},
            "added-records": {"unit": "count", "value": 4},
            "added-files-size-bytes": {"unit": "bytes", "value": 3718},
            "added-dvs": {"unit": "count", "value": 1},
        },
        **({"metadata": metadata} if metadata else {}),
    }
