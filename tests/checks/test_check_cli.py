"""``iceberg-lineage check``: one line per assertion (JSON or a table), and the gate's exit codes: 0 every
error-severity assertion passed, 1 one failed or was unknown or a table could not be read, 2 usage/configuration."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from iceberg_lineage.cli import main
from tests.support.checks import new_table, rows
from tests.support.lineage_server import LineageServer
from tests.support.olschema import validate_event


def run(*args: str):
    return CliRunner().invoke(main, ["check", *args])


@pytest.fixture
def table(sql_catalog):
    t = new_table(sql_catalog, "orders")
    t.append(rows(0, 4, null_every=2))
    t.append(rows(4, 4))
    return t


def _rules(tmp_path, text: str) -> str:
    path = tmp_path / "rules.yml"
    path.write_text(text)
    return str(path)


def _lines(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_passing_gate_prints_one_json_object_per_assertion(table, tmp_path):
    rules = _rules(tmp_path, "checks:\n  - tables: '*'\n    rules:\n      row_count: {min: 1, severity: error}\n"
                             "      snapshots: {max: 2, severity: error}\n      manifests: {max: 1}\n")
    result = run("--metadata", table.metadata_location, "--rules", rules, "--format", "json")
    assert result.exit_code == 0, result.output
    lines = _lines(result)
    assert [(x["assertion"], x["status"], x["actual"]) for x in lines] == [
        ("row_count", "pass", "8"), ("snapshots", "pass", "2"), ("manifests", "warn", "2")]
    assert lines[0]["table"] == "orders" and lines[0]["snapshot_id"] == table.metadata.current_snapshot_id
    assert lines[2]["severity"] == "warn"  # a warning does not fail the gate


def test_failed_error_assertion_exits_1(table, tmp_path):
    rules = _rules(tmp_path, "- tables: orders\n  rules:\n    snapshots: {max: 1, severity: error}\n")
    result = run("--metadata", table.metadata_location, "--rules", rules, "--format", "json")
    assert result.exit_code == 1
    assert [(x["status"], x["actual"], x["expected"]) for x in _lines(result)] == [("fail", "2", "<= 1")]


def test_unknown_input_under_error_severity_exits_1(sql_catalog, tmp_path):
    t = new_table(sql_catalog, "no_counts", {"write.metadata.metrics.default": "none"})
    t.append(rows(0, 4, null_every=2))
    for severity, code in (("error", 1), ("warn", 0)):
        rules = _rules(tmp_path, f"- tables: '*'\n  rules:\n    null_fraction: {{columns: [customer_id], max: 0.5, "
                                 f"severity: {severity}}}\n")
        result = run("--metadata", t.metadata_location, "--rules", rules, "--format", "json")
        assert result.exit_code == code
        [line] = _lines(result)
        assert (line["success"], line["actual"], line["status"]) == (False, "unknown", "unknown")


@pytest.mark.parametrize(("args", "message"), [
    (["--rules", "{rules}"], "checks: unknown rule 'nonsense'"),
    (["--rules", "/nowhere/rules.yml"], "cannot read the rules"),
    (["--catalog", "x"], "use either --metadata or --catalog, not both"),
    (["--snapshot", "1", "--namespace", "db"], "use either --metadata or --catalog"),
])
def test_usage_and_configuration_errors_exit_2(table, tmp_path, args, message):
    rules = _rules(tmp_path, "- tables: '*'\n  rules: {nonsense: {}}\n")
    result = run("--metadata", table.metadata_location, *[a.replace("{rules}", rules) for a in args])
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.output


def test_no_table_at_all_is_a_usage_error():
    result = run()
    assert result.exit_code == 2 and "give --metadata PATH" in result.stderr


def test_unreadable_table_exits_1(tmp_path):
    result = run("--metadata", str(tmp_path / "missing"), "--format", "json")
    assert result.exit_code == 1
    assert result.stderr.startswith("iceberg-lineage: error:") and len(result.stderr.splitlines()) == 1


def test_catalog_walk_with_the_default_set(sql_catalog, monkeypatch, table):
    other = new_table(sql_catalog, "events")
    other.append(rows(0, 1))
    sql_catalog.create_namespace("empty")
    for key, value in sql_catalog.properties.items():
        monkeypatch.setenv(f"PYICEBERG_CATALOG__TEST__{key.upper().replace('-', '_')}", value)
    monkeypatch.setenv("PYICEBERG_CATALOG__TEST__TYPE", "sql")
    result = run("--catalog", "test", "--namespace", "db", "--format", "json")
    assert result.exit_code == 0, result.output
    lines = _lines(result)
    assert sorted({x["table"] for x in lines}) == ["db.events", "db.orders"]
    per_table = {t: [x["assertion"] for x in lines if x["table"] == t] for t in ("db.events", "db.orders")}
    assert per_table["db.orders"] == ["row_count", "small_files", "delete_ratio", "equality_deletes", "snapshots",
                                      "manifests", "schema"]
    one = run("--catalog", "test", "--table", "db.orders", "--format", "json")
    assert one.exit_code == 0 and {x["table"] for x in _lines(one)} == {"db.orders"}


def test_text_output_is_a_table(table, tmp_path):
    result = run("--metadata", table.metadata_location, "--format", "text")
    assert result.exit_code == 0
    assert "row_count" in result.stdout and "WARN" in result.stdout  # small files: every file is below 32 MiB
    rules = _rules(tmp_path, "- tables: orders\n  rules:\n    snapshots: {max: 1, severity: error}\n")
    gate = run("--metadata", table.metadata_location, "--rules", rules, "--format", "text")
    assert gate.exit_code == 1
    assert [line.split("│")[4].strip() for line in gate.stdout.splitlines() if "snapshots" in line] == ["FAIL"]


def test_a_failed_warning_is_warn_and_its_event_still_says_it_failed(table, monkeypatch):
    """The default small_files rule (severity warn) fails on a table of small files: WARN in the table, status
    "warn" in JSON, the gate open (exit 0); the OpenLineage assertion, which has only a boolean, is not a success."""
    text = run("--metadata", table.metadata_location, "--format", "text")
    assert text.exit_code == 0, text.output
    cells = {row[0]: row for row in ([c.strip() for c in line.split("│")[1:-1]] for line in text.stdout.splitlines()
                                     if line.startswith("│"))}
    assert (cells["small_files"][2], cells["small_files"][3]) == ("warn", "WARN")
    assert "FAIL" not in text.stdout
    with LineageServer() as server:
        monkeypatch.setenv("OPENLINEAGE_URL", server.url)
        emitted = run("--metadata", table.metadata_location, "--format", "json", "--emit")
        [event] = [e for e in server.events() if e["eventType"] == "COMPLETE"]
    assert emitted.exit_code == 0, emitted.output
    [small] = [x for x in _lines(emitted) if x["assertion"] == "small_files"]
    assert (small["status"], small["severity"], small["success"], small["actual"]) == (
        "warn", "warn", False, "1 (2 of 2)")
    validate_event(event)
    [sent] = [a for a in event["inputs"][0]["inputFacets"]["dataQualityAssertions"]["assertions"]
              if a["assertion"] == "small_files"]
    assert (sent["success"], sent["severity"]) == (False, "warn") and "status" not in sent


def test_a_table_without_snapshots(sql_catalog, tmp_path):
    """Nothing to measure is not applicable; a freshness gate on a table never committed is unknown: it fails."""
    empty = new_table(sql_catalog, "empty")
    result = run("--metadata", empty.metadata_location, "--format", "json")
    assert result.exit_code == 0
    assert {(x["assertion"], x["actual"]) for x in _lines(result)} == {
        ("row_count", "not applicable"), ("small_files", "not applicable"), ("delete_ratio", "not applicable"),
        ("equality_deletes", "not applicable"), ("snapshots", "0"), ("manifests", "not applicable"),
        ("schema", "not applicable")}
    rules = _rules(tmp_path, "- tables: '*'\n  rules:\n    freshness: {max_age: 1h, severity: error}\n")
    gate = run("--metadata", empty.metadata_location, "--rules", rules, "--format", "json")
    assert gate.exit_code == 1
    assert [(x["success"], x["actual"], x["description"]) for x in _lines(gate)] == [
        (False, "unknown", "no commit on main")]
