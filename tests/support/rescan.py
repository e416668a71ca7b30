"""Scans to a real local HTTP server, one after another on one state file, and what each sent: for the rescan suites
(a table is skipped, or sends exactly what is missing)."""
from __future__ import annotations

from typing import Any

from tests.support.delivery import FAST, LineageServer, http_client
from tests.support.olschema import validate_event
from tests.support.scan import lifecycle, spec_of

from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.delivery import Delivery
from iceberg_lineage.read.catalogs import CatalogSpec
from iceberg_lineage.scan.driver import ScanOptions, scan
from iceberg_lineage.scan.sinks import delivery_sink
from iceberg_lineage.scan.summary import ScanSummary
from iceberg_lineage.state.store import StateStore


def scan_to(server: LineageServer, catalog: Any, state_path, tmp_path, settings: dict | None = None,
            timeout: float = 2.0, **options: Any) -> ScanSummary:
    """One scan of ``catalog`` (a SQL catalog, or any :class:`CatalogSpec`) delivering to ``server`` through the
    real delivery path (spool in ``tmp_path/spool``)."""
    spec = catalog if isinstance(catalog, CatalogSpec) else spec_of(catalog)
    config = Settings().updated({"spool.path": str(tmp_path / "spool"), **(settings or {})})
    delivery = Delivery(http_client(server.url, timeout=timeout, **FAST), config)
    try:
        with StateStore(state_path) as state:
            return scan(ScanOptions(catalogs=(spec,), **options), config, state, delivery_sink(delivery))
    finally:
        delivery.close()


def snapshots_sent(server: LineageServer) -> list[int]:
    """The snapshots whose run the server got (terminal events of snapshot runs, in order; not RENAME or DROP
    runs), then forgets them."""
    events = server.events()
    server.clear()
    for e in events:
        validate_event(e)
    return [int(e["outputs"][0]["facets"]["version"]["datasetVersion"]) for e in events
            if e["eventType"] != "START" and lifecycle(e) not in ("RENAME", "DROP")]


def in_order(table) -> list[int]:
    return [s.snapshot_id for s in sorted(table.refresh().snapshots(), key=lambda s: s.sequence_number)]
