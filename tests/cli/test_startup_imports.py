"""Start-up: a command imports PyIceberg, pyarrow and openlineage-python only where it needs them. ``stats`` on a
local metadata file needs none of them (they were ~0.5 s of its 0.75 s; benchmarks/startup.py has the times)."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.support.fixture_tables import FIXTURES

HEAVY = ("pyiceberg", "pyarrow", "openlineage", "numpy", "pydantic", "scan_reporters")
#: Runs the CLI in-process, then prints the heavy top-level packages it imported.
PROBE = """
import json, sys
from iceberg_lineage.cli import main
try:
    main(sys.argv[1:], prog_name="iceberg-lineage")
except SystemExit as exit:
    code = exit.code
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(%r))
print(json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
""" % (HEAVY,)


def heavy_imports(*args: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=60)
    result = json.loads(proc.stderr.strip().splitlines()[-1])
    assert result["code"] in (0, None), proc.stderr
    return result["heavy"]


def test_help_imports_nothing_heavy():
    assert heavy_imports("--help") == []


def test_stats_on_a_local_metadata_file_imports_nothing_heavy():
    metadata = FIXTURES / "duckdb_spark_lineitem_cow" / "metadata" / "v2.metadata.json"
    assert heavy_imports("stats", "--depth", "summary", "--metadata", str(metadata), "--format", "json") == []
    assert heavy_imports("stats", "--metadata", str(metadata.parent.parent), "--format", "json") == []
