"""Load workloads shared by the CI-sized tests and ``benchmarks/load.py`` (full size): the commit hook under
concurrent writers, and a scan of many tables; both deliver over HTTP to a server failing 10 % of requests."""
from __future__ import annotations

import concurrent.futures as cf
import resource
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.faults import (
    failing_server,
    every_tenth_fails,
    small_rows,
    snapshot_of,
    write_tables,
)


@dataclass(frozen=True)
class LoadResult:
    """What a workload produced and what reached the server."""

    snapshots: int  # snapshots committed (hook) or found (scan)
    delivered: int  # distinct snapshots whose event the server accepted
    events_accepted: int  # every event the server accepted (duplicates and non-snapshot events included)
    requests: int
    failed_requests: int
    replayed: int  # events that needed `replay` of the spool
    seconds: float
    peak_rss_mb: float
    wrong_run_ids: int | None = None  # snapshots delivered under a runId other than their hook tag (hook only)
    second_scan_emitted: int | None = None  # a rescan right after (scan only): must be 0

    def lines(self) -> list[str]:
        return [f"{k}: {v}" for k, v in self.__dict__.items() if v is not None]


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _catalog(root: Path, name: str) -> Any:
    from pyiceberg.catalog.sql import SqlCatalog

    (root / "warehouse").mkdir(parents=True, exist_ok=True)
    catalog = SqlCatalog(name, uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}/warehouse")
    catalog.create_namespace("db")
    return catalog


def _client(url: str) -> Any:
    from openlineage.client import OpenLineageClient
    from openlineage.client.transport.http import HttpConfig, HttpTransport

    return OpenLineageClient(transport=HttpTransport(HttpConfig(url=url, timeout=10)))


def _replay(spool: Path, client: Any) -> int:
    from iceberg_lineage.delivery.replay import replay

    result = replay(spool, client)
    assert result.remaining == 0, result
    return result.delivered


def hook_load(root: Path, threads: int, commits: int) -> LoadResult:
    """``threads`` writers, each appending ``commits`` times to its own table of one observed catalog.

    The hook's spool is ``spool.path``'s default, in the per-user state folder (``XDG_STATE_HOME``, which the
    tests and the benchmark point into their temporary folder).
    """
    from iceberg_lineage.config import load_settings
    from iceberg_lineage.delivery.emitter import EMITTERS
    from iceberg_lineage.hook import observe
    from iceberg_lineage.lineage.tags import RUN_ID_PROPERTY

    EMITTERS.shutdown()
    server = failing_server(every_tenth_fails)
    client = _client(server.url)
    started = time.monotonic()
    try:
        catalog = observe(_catalog(root, "load"), client=client)

        def writer(n: int) -> Any:
            table = catalog.create_table(f"db.w{n}", schema=small_rows(0).schema)
            for i in range(commits):
                table.append(small_rows(10 * i))
            return table

        with cf.ThreadPoolExecutor(threads) as pool:
            tables = list(pool.map(writer, range(threads)))
        assert EMITTERS.flush_all(300)
        EMITTERS.shutdown()
        spool = Path(load_settings().spool.path)
        replayed = _replay(spool, client) if spool.exists() else 0
        elapsed = time.monotonic() - started
    finally:
        server.stop()
    tags = {s.snapshot_id: s.summary[RUN_ID_PROPERTY] for t in tables for s in t.refresh().snapshots()}
    delivered = {snapshot_of(e): e["run"]["runId"] for e in server.accepted_events() if snapshot_of(e) in tags}
    return LoadResult(
        snapshots=len(tags), delivered=len(delivered), events_accepted=len(server.accepted),
        requests=len(server.requests), failed_requests=len(server.requests) - len(server.accepted), replayed=replayed,
        seconds=round(elapsed, 1), peak_rss_mb=round(peak_rss_mb(), 1),
        wrong_run_ids=sum(1 for sid, run_id in delivered.items() if tags[sid] != run_id),
    )


def scan_load(root: Path, tables: int, workers: int = 4) -> LoadResult:
    """``tables`` one-snapshot tables, scanned once (everything new) and once more (nothing new)."""
    from iceberg_lineage.config import Settings
    from iceberg_lineage.delivery.delivery import Delivery
    from iceberg_lineage.read.catalogs import CatalogSpec
    from iceberg_lineage.scan.driver import ScanOptions, scan
    from iceberg_lineage.scan.sinks import delivery_sink
    from iceberg_lineage.state.store import StateStore

    catalog = _catalog(root, "many")
    write_tables(catalog, tables, 1)
    spec = CatalogSpec.of(catalog.name, {"type": "sql", **catalog.properties})
    settings = Settings().updated({"spool.path": str(root / "spool"), "state.path": str(root / "state.db")})
    server = failing_server(every_tenth_fails)
    client = _client(server.url)
    delivery = Delivery(client, settings)
    started = time.monotonic()
    try:
        with StateStore(settings.state.path) as state:
            first = scan(ScanOptions(catalogs=(spec,), workers=workers), settings, state, delivery_sink(delivery))
            second = scan(ScanOptions(catalogs=(spec,), workers=workers), settings, state, delivery_sink(delivery))
        delivery.close()
        replayed = _replay(root / "spool", client) if (root / "spool").exists() else 0
        elapsed = time.monotonic() - started
    finally:
        server.stop()
    assert first.failed == 0, first.failures
    snapshots = {s.snapshot_id for t in catalog.list_tables("db") for s in catalog.load_table(t).snapshots()}
    delivered = {snapshot_of(e) for e in server.accepted_events()} & snapshots
    return LoadResult(
        snapshots=len(snapshots), delivered=len(delivered), events_accepted=len(server.accepted),
        requests=len(server.requests), failed_requests=len(server.requests) - len(server.accepted), replayed=replayed,
        seconds=round(elapsed, 1), peak_rss_mb=round(peak_rss_mb(), 1),
        second_scan_emitted=second.snapshots_emitted,
    )
