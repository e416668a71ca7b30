"""Column bounds can be personal data: the statistics of columns the ``column_stats`` policy leaves out never
appear in events, logs or the spool, while the ``schema`` facet still lists the columns."""
from __future__ import annotations

import json
import logging

import pytest
import yaml
from click.testing import CliRunner
from tests.support.security import (
    EMAIL_FRAGMENTS,
    dead_port,
    files_under,
    leaks,
    openlineage_config,
    personal_rows,
    run_cli,
    write_pyiceberg_config,
)

from iceberg_lineage.cli import main

#: (CLI flags, iceberg-lineage.yml content, columns whose statistics may appear, whether bounds may appear)
POLICIES = {
    "exclude-flag": (["--exclude-columns", "email"], None, {"id", "score"}, True),
    "include-flags": (["--include-columns", "id", "--include-columns", "sc*"], None, {"id", "score"}, True),
    "exclude-config": ([], {"column_stats": {"exclude": ["em*"]}}, {"id", "score"}, True),
    "counts-only": (["--column-stats", "counts"], None, {"id", "email", "score"}, False),
    "none": (["--column-stats", "none"], None, set(), False),
}


@pytest.fixture
def personal_table(sql_catalog, tmp_path, monkeypatch):
    table = sql_catalog.create_table("db.people", schema=personal_rows().schema)
    table.append(personal_rows(0))
    table.append(personal_rows(10))
    home = tmp_path / "pyiceberg-home"
    write_pyiceberg_config(home, sql_catalog)
    monkeypatch.setenv("PYICEBERG_HOME", str(home))
    return table


def column_stats_of(event: dict) -> dict[str, dict]:
    """Per-column statistics of both facets that carry them, by facet."""
    facets = event["outputs"][0]["facets"]
    return {
        "dataQualityMetrics": facets.get("dataQualityMetrics", {}).get("columnMetrics") or {},
        "icebergTableStatistics": facets.get("icebergTableStatistics", {}).get("columns") or {},
    }


def check_event(event: dict, allowed: set[str], bounds: bool) -> None:
    assert [f["name"] for f in event["outputs"][0]["facets"]["schema"]["fields"]] == ["id", "email", "score"]
    for facet, columns in column_stats_of(event).items():
        assert set(columns) == allowed, facet
        for name, figures in columns.items():
            assert ("min" in figures or "max" in figures) == bounds, (facet, name)


def personal_leaks(text: str | bytes) -> list[str]:
    return leaks(text, EMAIL_FRAGMENTS)


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_events_cli_honours_column_policy(policy, personal_table, tmp_path):
    flags, config, allowed, bounds = POLICIES[policy]
    if config is not None:
        (tmp_path / "iceberg-lineage.yml").write_text(yaml.safe_dump(config))
    done = run_cli("events", "--catalog", "test", "--table", "db.people", "--all-snapshots", *flags)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"] * 2  # two snapshots' runs
    for event in events[1::2]:  # a START carries no schema nor statistics
        check_event(event, allowed, bounds)
    if "email" not in allowed or not bounds:
        assert personal_leaks(done.stdout + done.stderr) == []


@pytest.mark.parametrize("policy", ["exclude-flag", "exclude-config", "counts-only"])
def test_spooled_scan_and_its_logs_honour_column_policy(policy, personal_table, tmp_path, monkeypatch, caplog):
    """A scan whose server is down: the spooled events and every log record keep the policy."""
    flags, config, _, _ = POLICIES[policy]
    if config is not None:
        (tmp_path / "iceberg-lineage.yml").write_text(yaml.safe_dump(config))
    transport = {"type": "http", "url": f"http://127.0.0.1:{dead_port()}", "retry": {"total": 0}}
    for key, value in openlineage_config(tmp_path, transport).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("ICEBERG_LINEAGE__SPOOL__PATH", str(tmp_path / "spool"))
    caplog.set_level(logging.DEBUG)
    result = CliRunner().invoke(main, ["scan", "--catalog", "test", "--no-progress", "--state",
                                       str(tmp_path / "state" / "s.db"), *flags])
    assert result.exit_code == 3, result.output  # done, the events wait in the spool
    assert json.loads(result.output.splitlines()[-1])["snapshots"]["emitted"] == 2
    spool = files_under(tmp_path / "spool")
    bodies = b"".join(spool.values())
    assert bodies.count(b'"icebergTableStatistics"') >= 2  # both events are in there
    assert personal_leaks(bodies) == []
    assert personal_leaks(caplog.text + result.output) == []
