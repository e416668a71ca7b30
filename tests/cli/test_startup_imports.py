"""Start-up: a command imports PyIceberg, pyarrow and openlineage-python only where it needs them. ``stats`` on a
local metadata file needs none of them (they were ~0.5 s of its 0.75 s; benchmarks/startup.py has the times);
``events`` needs openlineage-python's event classes, not PyIceberg's catalogs (``scan_reporters`` imports them only
at first use); ``check`` without ``--emit`` needs none; no command's ``--help`` imports any of them, nor the
scanner, nor the jobs reader's decoder."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fixture_tables import FIXTURES

HEAVY = ("pyiceberg", "pyarrow", "openlineage", "numpy", "pydantic", "scan_reporters")
#: Modules a command imports only when it uses them (matched as a module or a package prefix).
MODULES = ("pyiceberg.catalog", "pyiceberg.table", "pyarrow", "openlineage.client", "dask", "distributed", "aiohttp",
           "rich.progress", "matplotlib", "msgspec", "iceberg_lineage.jobs.aggregate", "sqlalchemy",
           "iceberg_lineage.scan.driver")
#: Runs the CLI in-process, then prints the heavy top-level packages it imported.
PROBE = """
import json, sys
from iceberg_lineage.cli import main
try:
    main(sys.argv[1:], prog_name="iceberg-lineage")
except SystemExit as exit:
    code = exit.code
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(%r))
modules = sorted(p for p in %r if any(m == p or m.startswith(p + ".") for m in sys.modules))
print(json.dumps({"code": code, "heavy": heavy, "modules": modules}), file=sys.stderr)
""" % (HEAVY, MODULES)


def probe(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> dict:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120, env=env,
                          cwd=cwd)
    result = json.loads(proc.stderr.strip().splitlines()[-1])
    assert result["code"] in (0, None), proc.stderr
    return result


def heavy_imports(*args: str) -> list[str]:
    return probe(*args)["heavy"]


def test_help_imports_nothing_heavy():
    assert heavy_imports("--help") == []


def test_stats_on_a_local_metadata_file_imports_nothing_heavy():
    metadata = FIXTURES / "duckdb_spark_lineitem_cow" / "metadata" / "v2.metadata.json"
    assert heavy_imports("stats", "--depth", "summary", "--metadata", str(metadata), "--format", "json") == []
    assert heavy_imports("stats", "--metadata", str(metadata.parent.parent), "--format", "json") == []


METADATA = FIXTURES / "duckdb_spark_lineitem_cow" / "metadata" / "v2.metadata.json"


@pytest.mark.parametrize("command", ["events", "check", "scan", "jobs", "replay", "run", "proxy", "config", "schema",
                                     "stats"])
def test_no_help_imports_a_heavy_module(command):
    assert probe(command, "--help")["modules"] == []


def test_events_imports_the_event_classes_only():
    assert probe("events", "--metadata", str(METADATA))["modules"] == ["openlineage.client"]


def test_check_without_emit_imports_nothing_heavy():
    assert probe("check", "--metadata", str(METADATA), "--format", "json") == {"code": 0, "heavy": [], "modules": []}


def test_schema_reads_the_shipped_schema_without_openlineage():
    assert probe("schema", "icebergTableStatistics") == {"code": 0, "heavy": [], "modules": []}


def _home(tmp_path: Path) -> dict[str, str]:
    """An environment whose home is ``tmp_path``, without PyIceberg's variables."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("PYICEBERG_")}
    return {**env, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_STATE_HOME": str(tmp_path / "state"), "PYTHONPATH": str(Path(__file__).resolve().parents[2])}


def test_config_without_a_pyiceberg_configuration_imports_no_pyiceberg(tmp_path):
    result = probe("config", "--format", "json", env=_home(tmp_path), cwd=tmp_path)
    assert result["code"] == 0 and "pyiceberg" not in result["heavy"] and "pydantic" not in result["heavy"]


def test_config_with_a_pyiceberg_file_or_variable_reads_it(tmp_path):
    (tmp_path / ".pyiceberg.yaml").write_text("catalog:\n  lake:\n    uri: sqlite:///lake.db\n")
    assert "pyiceberg" in probe("config", "--format", "json", env=_home(tmp_path), cwd=tmp_path)["heavy"]
    (tmp_path / ".pyiceberg.yaml").unlink()
    env = {**_home(tmp_path), "PYICEBERG_CATALOG__LAKE__URI": "sqlite:///lake.db"}
    assert "pyiceberg" in probe("config", "--format", "json", env=env, cwd=tmp_path)["heavy"]


def test_jobs_imports_its_decoder_and_nothing_heavy(tmp_path):
    events = tmp_path / "events.jsonl"
    events.write_text('{"eventType": "COMPLETE", "eventTime": "2026-03-01T00:00:00Z", "run": {"runId": "r"}, '
                      '"job": {"namespace": "ns", "name": "j"}}\n')
    result = probe("jobs", "--events", str(events), "--format", "json")
    assert result["modules"] == ["iceberg_lineage.jobs.aggregate", "msgspec"] and result["heavy"] == []


def test_scan_reporters_imports_pyiceberg_catalog_at_first_use_of_instrument():
    code = ("import sys, scan_reporters; before = 'pyiceberg.catalog' in sys.modules; "
            "from scan_reporters import ScanReport; middle = 'pyiceberg.catalog' in sys.modules; "
            "import scan_reporters.instrument; f = scan_reporters.instrument; "
            "print(before, middle, 'pyiceberg.catalog' in sys.modules, callable(f) and f.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.split() == ["False", "False", "True", "scan_reporters.instrument"]


def test_a_rescan_imports_neither_yaml_nor_the_statistics_model_nor_the_rest_loader():
    """What a scan imports before its first table (a rescan that skips every table loads none): no PyYAML without a
    configuration file, the depth names without the statistics model, the table task without its readers."""
    late = ("yaml", "iceberg_lineage.stats.model", "iceberg_lineage.read.rest_load")
    code = ("import sys\nfrom iceberg_lineage.config import Settings\nfrom iceberg_lineage.scan.driver import scan\n"
            "Settings()\nprint(sorted(m for m in %r if m in sys.modules))" % (late,))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.split() == ["[]"]


def test_a_command_imports_only_its_own_command_module():
    """The group imports a command's module when that command runs: ``schema`` does not import ``stats``' walker,
    ``check``'s rules or the other commands; ``--help`` imports them all (it lists each one's short help)."""
    import iceberg_lineage.cli as cli

    listed = [f"iceberg_lineage.cli.{name}" for name in cli.COMMANDS]
    script = PROBE.replace("modules = sorted(p for p in %r" % (MODULES,), "modules = sorted(p for p in %r" % (
        tuple(listed) + ("iceberg_lineage.stats.walker", "iceberg_lineage.quality.rules"),))
    run = subprocess.run([sys.executable, "-c", script, "schema", "icebergTableStatistics"], capture_output=True,
                         text=True, timeout=120)
    assert json.loads(run.stderr.strip().splitlines()[-1])["modules"] == ["iceberg_lineage.cli.schema"]
    run = subprocess.run([sys.executable, "-c", script, "--help"], capture_output=True, text=True, timeout=120)
    assert set(listed) <= set(json.loads(run.stderr.strip().splitlines()[-1])["modules"])
