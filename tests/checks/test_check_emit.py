"""``check --emit``: one COMPLETE run of job ``<ns>.<table>.checks`` per table, through the one delivery path, the
table as input at the snapshot checked with ``dataQualityAssertions`` (1-1-0) and ``dataQualityMetrics``; valid
against the OpenLineage schemas, and COMPLETE even when assertions fail."""
from __future__ import annotations

import json

from click.testing import CliRunner

from iceberg_lineage.cli import main
from tests.support.checks import new_table, rows
from tests.support.lineage_server import LineageServer
from tests.support.olschema import validate_event


def test_emit_sends_one_checks_run_per_table(sql_catalog, monkeypatch, tmp_path):
    table = new_table(sql_catalog, "orders")
    table.append(rows(0, 5))
    table.append(rows(5, 5))
    rules = tmp_path / "rules.yml"
    rules.write_text("- tables: '*'\n  rules:\n    snapshots: {max: 1, severity: error}\n    row_count: {min: 1}\n")
    with LineageServer() as server:
        monkeypatch.setenv("OPENLINEAGE_URL", server.url)
        result = CliRunner().invoke(main, ["check", "--metadata", table.metadata_location, "--rules", str(rules),
                                           "--emit", "--format", "json"])
        events = server.events()
    assert result.exit_code == 1  # snapshots failed: the gate fails, the run is still COMPLETE
    assert "checks runs' events (START, COMPLETE): 2 delivered, 0 spooled, 0 failed" in result.stderr
    start, event = events
    assert (start["eventType"], start["run"]["runId"]) == ("START", event["run"]["runId"])
    assert start["inputs"][0]["inputFacets"] == {} and "version" not in start["inputs"][0]["facets"]
    validate_event(start)
    validate_event(event)
    assert (event["eventType"], event["job"]["name"], event["job"]["namespace"]) == (
        "COMPLETE", "orders.checks", "iceberg-lineage")
    [dataset] = event["inputs"]
    assert dataset["facets"]["version"]["datasetVersion"] == str(table.metadata.current_snapshot_id)
    assertions = dataset["inputFacets"]["dataQualityAssertions"]["assertions"]
    printed = [json.loads(line) for line in result.stdout.splitlines()]
    assert assertions == [{k: v for k, v in p.items() if k not in ("table", "snapshot_id", "status")} for p in printed]
    assert [(a["assertion"], a["success"], a["actual"], a["severity"]) for a in assertions] == [
        ("snapshots", False, "2", "error"), ("row_count", True, "10", "warn")]
    assert (assertions[0]["params"], assertions[1]["params"]) == ({"max": 1}, {"min": 1})
    metrics = dataset["inputFacets"]["dataQualityMetrics"]
    assert (metrics["rowCount"], metrics["fileCount"]) == (10, 2)


def test_catalog_tables_as_their_own_runs(sql_catalog, monkeypatch):
    for name in ("a", "b"):
        new_table(sql_catalog, name).append(rows(0, 2))
    monkeypatch.setenv("PYICEBERG_CATALOG__TEST__TYPE", "sql")
    for key, value in sql_catalog.properties.items():
        monkeypatch.setenv(f"PYICEBERG_CATALOG__TEST__{key.upper().replace('-', '_')}", value)
    with LineageServer() as server:
        monkeypatch.setenv("OPENLINEAGE_URL", server.url)
        result = CliRunner().invoke(main, ["check", "--catalog", "test", "--emit", "--format", "json"])
        events = server.events()
    assert result.exit_code == 0, result.output
    assert [(e["eventType"], e["job"]["name"]) for e in events] == [
        ("START", "db.a.checks"), ("COMPLETE", "db.a.checks"), ("START", "db.b.checks"), ("COMPLETE", "db.b.checks")]
    assert len({e["run"]["runId"] for e in events}) == 2
    for event in events[1::2]:
        validate_event(event)
        assert [a["assertion"] for a in event["inputs"][0]["inputFacets"]["dataQualityAssertions"]["assertions"]] == [
            "row_count", "small_files", "delete_ratio", "equality_deletes", "snapshots", "manifests", "schema"]


def test_the_profile_flag_shapes_the_checks_runs(sql_catalog, monkeypatch):
    """``check --emit --profile atlan``: the runs in the job namespace of Atlan's connection (``consumer.connection``),
    the flag beating the configuration's ``generic``."""
    table = new_table(sql_catalog, "shaped")
    table.append(rows(0, 3))
    with LineageServer() as server:
        monkeypatch.setenv("OPENLINEAGE_URL", server.url)
        monkeypatch.setenv("ICEBERG_LINEAGE__CONSUMER__PROFILE", "generic")
        monkeypatch.setenv("ICEBERG_LINEAGE__CONSUMER__CONNECTION", "atlan-conn")
        result = CliRunner().invoke(main, ["check", "--metadata", table.metadata_location, "--emit",
                                           "--format", "json", "--profile", "atlan"])
        events = server.events()
    assert result.exit_code == 0, result.output
    assert [(e["eventType"], e["job"]["namespace"], e["job"]["name"]) for e in events] == [
        ("START", "atlan-conn", "shaped.checks"), ("COMPLETE", "atlan-conn", "shaped.checks")]
    for event in events:
        validate_event(event)
