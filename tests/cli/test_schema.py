"""The ``schema`` command: the JSON schema of each custom facet (the statistics and the scan summary), and one line
plus exit 2 for others."""
from __future__ import annotations

import json
import subprocess
import sys

CLI = [sys.executable, "-m", "iceberg_lineage.cli"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)


def test_schema_prints_the_statistics_facet_schema():
    from iceberg_lineage.lineage.facets import statistics_schema

    proc = run("schema", "icebergTableStatistics")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == statistics_schema()
    from iceberg_lineage.lineage.facets.statistics import SCHEMA_ID

    assert json.loads(proc.stdout)["$id"] == SCHEMA_ID  # what every event's _schemaURL names
    assert "IcebergTableStatisticsDatasetFacet" in json.dumps(json.loads(proc.stdout)["$defs"])


def test_schema_prints_the_scan_summary_facet_schema():
    from iceberg_lineage.lineage.facets import scan_summary_schema

    proc = run("schema", "icebergLineageScan")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == scan_summary_schema()


def test_unknown_schema_is_one_line_and_exit_2():
    proc = run("schema", "nope")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "iceberg-lineage: error: no facet schema named 'nope'; known: icebergLineageScan, icebergTableStatistics"]
