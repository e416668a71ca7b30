"""Helpers of the scanner tests: small real tables, a recording sink, the scan CLI in a subprocess."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterable, Sequence

import pyarrow as pa

from iceberg_lineage.config import Settings
from iceberg_lineage.read.catalogs import CatalogSpec
from iceberg_lineage.scan.driver import ScanOptions, scan
from iceberg_lineage.scan.sinks import event_sink
from iceberg_lineage.scan.summary import ScanSummary
from iceberg_lineage.state.store import StateStore

SCAN_CLI = "import sys; from iceberg_lineage.cli import main; main(['scan', *sys.argv[1:]], prog_name='iceberg-lineage')"


def rows(start: int, n: int = 3) -> pa.Table:
    return pa.table({
        "id": pa.array(range(start, start + n), pa.int64()),
        "name": pa.array([f"row {i}" for i in range(start, start + n)], pa.string()),
    })


def write_table(catalog: Any, identifier: str, commits: int, start: int = 0):
    """Create the table if needed and append ``commits`` small batches (one snapshot each)."""
    from pyiceberg.exceptions import NamespaceAlreadyExistsError

    namespace = identifier.rsplit(".", 1)[0]
    try:
        catalog.create_namespace(namespace)
    except NamespaceAlreadyExistsError:
        pass
    table = catalog.load_table(identifier) if catalog.table_exists(identifier) else catalog.create_table(
        identifier, schema=rows(0).schema)
    for i in range(commits):
        table.append(rows(start + 10 * i))
    return table


def spec_of(catalog: Any) -> CatalogSpec:
    return CatalogSpec.of(catalog.name, {"type": "sql", **catalog.properties})


class Recorder:
    """A sink that keeps every event and answers with the given statuses (then "delivered"); like every sink made
    with ``event_sink``, it takes nothing after the first event it did not take."""

    def __init__(self, statuses: Iterable[str] = ()) -> None:
        self.events: list[str] = []
        self._statuses = list(statuses)
        self._sink = event_sink(self._one)

    def _one(self, text: str) -> str:
        self.events.append(text)
        return self._statuses.pop(0) if self._statuses else "delivered"

    def __call__(self, texts: Sequence[str]) -> Sequence[str]:
        return self._sink(texts)

    @property
    def parsed(self) -> list[dict]:
        return [json.loads(e) for e in self.events]

    @property
    def terminal(self) -> list[dict]:
        """The events without the STARTs (each run we start has one, before its terminal event)."""
        return [e for e in self.parsed if e["eventType"] != "START"]


def run_scan(catalog: Any, state_path: Path, sink: Recorder | None = None, *, readonly: bool = False,
             **options: Any) -> tuple[ScanSummary, Recorder]:
    sink = sink or Recorder()
    with StateStore(state_path, readonly=readonly) as state:
        summary = scan(ScanOptions(catalogs=(spec_of(catalog),), **options), Settings(), state, sink)
    return summary, sink


def snapshot_ids(events: Iterable[dict]) -> list[int]:
    """The snapshot each run is about (the output dataset's version facet), once per run: a START names no output,
    its terminal event counts."""
    return [int(e["outputs"][0]["facets"]["version"]["datasetVersion"]) for e in events if e["eventType"] != "START"]


def lifecycle(event: dict) -> str | None:
    outputs = event.get("outputs") or ()  # a START names no output
    facet = outputs[0]["facets"].get("lifecycleStateChange") if outputs else None
    return facet["lifecycleStateChange"] if facet else None


def catalog_env(catalog: Any) -> dict[str, str]:
    """PyIceberg environment configuration naming ``catalog`` (what a user's shell would have)."""
    name = catalog.name.upper()
    return {f"PYICEBERG_CATALOG__{name}__{k.upper().replace('-', '_').replace('.', '__')}": v
            for k, v in catalog.properties.items()} | {f"PYICEBERG_CATALOG__{name}__TYPE": "sql"}


def cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
        **popen: Any) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SCAN_CLI, *args], env={**os.environ, **(env or {})}, cwd=cwd,
                          capture_output=True, text=True, timeout=120, **popen)
