"""The ``events`` command: JSON Lines on stdout and nothing else, --emit through the client, exit codes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import iceberg_lineage.delivery.client as client_module
from tests.support.fixture_tables import FIXTURES, fixture_relocation
from tests.support.olschema import validate_event
from iceberg_lineage.cli import main
from tests.support.userstate import USER_STATE

DV = "impala_spark_v3_deletion_vectors"


def _relocate(name: str) -> list[str]:
    return [arg for old, new in fixture_relocation(name).items() for arg in ("--relocate", f"{old}={new}")]


def events(*args: str):
    return CliRunner().invoke(main, ["events", *args], catch_exceptions=False)


def test_all_snapshots_as_json_lines():
    result = events("--metadata", str(FIXTURES / DV), "--all-snapshots", *_relocate(DV))
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 4
    for line in lines:
        validate_event(line)
    assert [json.loads(x)["eventType"] for x in lines] == ["START", "COMPLETE"] * 2
    assert [json.loads(x)["outputs"][0]["facets"]["version"]["datasetVersion"] for x in lines[1::2]] == [
        "2700858159721908397", "3685752423136077685"
    ]


def test_one_snapshot_dataset_events_and_column_options():
    result = events("--metadata", str(FIXTURES / DV), "--snapshot", "2700858159721908397", "--dataset-events",
                    "--column-stats", "counts", *_relocate(DV))
    assert result.exit_code == 0, result.stderr
    (line,) = result.stdout.splitlines()
    validate_event(line)
    facets = json.loads(line)["dataset"]["facets"]
    assert facets["version"]["datasetVersion"] == "2700858159721908397"
    assert "min" not in facets["icebergTableStatistics"]["columns"]["i"]
    excluded = events("--metadata", str(FIXTURES / DV), "--exclude-columns", "i", *_relocate(DV))
    stat = json.loads(excluded.stdout.splitlines()[-1])["outputs"][0]["facets"]["icebergTableStatistics"]
    assert stat["columnsOmitted"] == ["i"] and "columns" not in stat


def test_emit_uses_the_client_default_and_reports_on_stderr(monkeypatch):
    monkeypatch.setattr(client_module, "_announced", False)
    result = events("--metadata", str(FIXTURES / DV), "--all-snapshots", "--emit", *_relocate(DV))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    # 2 runs: START, COMPLETE
    assert f"sent 4 event(s) to file {Path.cwd() / USER_STATE / 'events.jsonl'}" in result.stderr
    written = (USER_STATE / "events.jsonl").read_text().splitlines()
    assert len(written) == 4
    for line in written:
        validate_event(line)


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--metadata", "/nonexistent/t"], 1, "metadata file not found"),
        (["--metadata", str(FIXTURES / DV), "--snapshot", "42"], 1, "no snapshot 42"),
        ([], 2, "give --metadata PATH"),
        (["--metadata", str(FIXTURES / DV), "--snapshot", "1", "--all-snapshots"], 2, "either --snapshot"),
        (["--metadata", str(FIXTURES / DV), "--catalog", "x", "--table", "a.b"], 2, "not both"),
    ],
)
def test_errors_are_one_line_with_exit_codes(args, code, message):
    result = events(*args)
    assert result.exit_code == code
    assert result.stdout == ""
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_empty_table_has_no_runs_but_a_dataset_state(sql_catalog):
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    table = sql_catalog.create_table("db.empty", Schema(NestedField(1, "id", LongType(), required=False)))
    runs = events("--metadata", table.metadata_location)
    assert runs.exit_code == 0 and runs.stdout == ""
    state = events("--metadata", table.metadata_location, "--dataset-events")
    assert state.exit_code == 0, state.stderr
    (line,) = state.stdout.splitlines()
    validate_event(line)
    assert "version" not in json.loads(line)["dataset"]["facets"]
