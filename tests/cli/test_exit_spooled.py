"""An outage is not green (issue 28, finding 4): with the lineage server down, ``scan``, ``events --emit`` and
``check --emit`` do their work, count what was delivered and what was spooled, and exit 3; ``replay`` with the server
up delivers what waits. A failure beats the spool (exit 1), and the scan's own COMPLETE or FAIL carries the exit
code. Everything runs against a real local HTTP server, or the port it listens on while it is stopped."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from iceberg_lineage.cli import main
from iceberg_lineage.cli.common import EXIT_OK, EXIT_SPOOLED, EXIT_TABLE_FAILED, EXIT_USAGE, most_serious
from tests.support.checks import new_table, rows
from tests.support.delivery import waiting_in
from tests.support.lineage_server import LineageServer, free_port
from tests.support.olschema import validate_event
from tests.support.userstate import USER_STATE
from tests.support.scan import catalog_env, snapshot_ids, write_table

SPOOL = USER_STATE / "spool"
SCANNER = "iceberg-lineage.scan"


@pytest.fixture
def down(monkeypatch) -> int:
    """The port of a lineage server that is not running (connection refused): the transport points there."""
    port = free_port()
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__TYPE", "http")
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__RETRY", '{"total": 0}')
    return port


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def scan_json(catalog, monkeypatch) -> tuple[int, dict]:
    for key, value in catalog_env(catalog).items():
        monkeypatch.setenv(key, value)
    result = invoke("scan", "--format", "json", "--no-progress")
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stderr.strip().splitlines()[-1])


def waiting() -> int:
    return waiting_in(SPOOL)


def replay_to(port: int) -> list[dict]:
    """``replay`` with the server up on ``port``: what it received, each event valid."""
    with LineageServer(port) as server:
        result = invoke("replay")
        assert result.exit_code == EXIT_OK, result.output
        received = server.events()
    for event in received:
        validate_event(event)
    return received


def test_precedence_is_usage_then_failure_then_spooled_then_ok():
    assert most_serious() == EXIT_OK
    assert most_serious(EXIT_OK, EXIT_SPOOLED) == EXIT_SPOOLED
    assert most_serious(EXIT_SPOOLED, EXIT_TABLE_FAILED) == EXIT_TABLE_FAILED
    assert most_serious(EXIT_TABLE_FAILED, EXIT_USAGE, EXIT_SPOOLED) == EXIT_USAGE
    assert (EXIT_OK, EXIT_TABLE_FAILED, EXIT_USAGE, EXIT_SPOOLED) == (0, 1, 2, 3)


def test_a_scan_with_the_server_down_exits_3_with_what_it_spooled_and_replay_delivers_it(sql_catalog, monkeypatch,
                                                                                        down):
    table = write_table(sql_catalog, "db.orders", 2)

    code, summary = scan_json(sql_catalog, monkeypatch)

    assert code == EXIT_SPOOLED == summary["exit_code"]
    assert summary["snapshots"] == {
        "emitted": 2, "delivered": 0, "spooled": 2, "already_emitted_by_hooks": 0, "resent_for_hooks": 0}
    # two snapshots' runs, START and COMPLETE each, and the scan's own START and COMPLETE
    assert summary["spooled_events"] == 2 * 2 + 2 == waiting()
    received = replay_to(down)
    assert len(received) == 6
    assert snapshot_ids(e for e in received if e["job"]["name"] != SCANNER) == [
        s.snapshot_id for s in sorted(table.snapshots(), key=lambda s: s.sequence_number)]
    start, end = (e for e in received if e["job"]["name"] == SCANNER)
    # the work was done: COMPLETE, carrying the exit code of the process
    assert (start["eventType"], end["eventType"]) == ("START", "COMPLETE")
    facet = end["run"]["facets"]["icebergLineageScan"]
    assert facet["exitCode"] == EXIT_SPOOLED
    assert facet["snapshots"] == {"emitted": 2, "delivered": 0, "spooled": 2, "alreadyEmittedByHooks": 0,
                                  "resentForHooks": 0}
    assert waiting() == 0


def test_the_text_summary_shows_delivered_and_spooled(sql_catalog, monkeypatch, down):
    write_table(sql_catalog, "db.orders", 2)
    for key, value in catalog_env(sql_catalog).items():
        monkeypatch.setenv(key, value)

    result = invoke("scan", "--format", "text", "--no-progress")

    assert result.exit_code == EXIT_SPOOLED, result.output
    assert "  snapshots: 2 emitted, 0 already emitted by hooks" in result.stderr.splitlines()
    assert ("  sent:      0 delivered, 2 spooled (6 event(s) wait in the spool: send them with iceberg-lineage "
            "replay)") in result.stderr.splitlines()


def test_a_scan_with_the_server_up_counts_what_it_delivered_and_exits_0(sql_catalog, monkeypatch):
    write_table(sql_catalog, "db.orders", 3)
    write_table(sql_catalog, "db.items", 1)
    with LineageServer() as server:
        monkeypatch.setenv("OPENLINEAGE_URL", server.url)
        code, summary = scan_json(sql_catalog, monkeypatch)
        received = server.accepted_events()

    assert code == EXIT_OK == summary["exit_code"]
    runs = [e for e in received if e["job"]["name"] != SCANNER and e["eventType"] == "COMPLETE"]
    assert (summary["snapshots"]["emitted"], summary["snapshots"]["delivered"], summary["snapshots"]["spooled"]) == (
        len(runs), len(runs), 0) == (4, 4, 0)
    assert summary["spooled_events"] == 0 == waiting()
    end = received[-1]
    validate_event(end)
    assert (end["eventType"], end["run"]["facets"]["icebergLineageScan"]["exitCode"]) == ("COMPLETE", EXIT_OK)


def test_a_failed_table_beats_the_spool(sql_catalog, monkeypatch, down):
    from pathlib import Path

    write_table(sql_catalog, "db.good", 2)
    bad = write_table(sql_catalog, "db.bad", 1)
    Path(bad.metadata_location.removeprefix("file://")).write_text("not metadata")

    code, summary = scan_json(sql_catalog, monkeypatch)

    assert code == EXIT_TABLE_FAILED == summary["exit_code"]
    assert [f["table"] for f in summary["failures"]] == ["db.bad"]
    assert (summary["snapshots"]["emitted"], summary["snapshots"]["spooled"]) == (2, 2)
    end = replay_to(down)[-1]
    assert (end["eventType"], end["run"]["facets"]["icebergLineageScan"]["exitCode"]) == ("FAIL", EXIT_TABLE_FAILED)


def checked_table(sql_catalog, tmp_path, *, passing: bool) -> list[str]:
    """``check`` arguments for a table of two snapshots, with a rule that passes or fails (error severity)."""
    table = new_table(sql_catalog, "orders")
    table.append(rows(0, 5))
    table.append(rows(5, 5))
    rules = tmp_path / "rules.yml"
    rules.write_text(f"- tables: '*'\n  rules:\n    snapshots: {{max: {2 if passing else 1}, severity: error}}\n")
    return ["check", "--metadata", table.metadata_location, "--rules", str(rules), "--emit", "--format", "json"]


def test_check_emit_with_the_server_down_exits_3_and_replay_delivers(sql_catalog, tmp_path, down):
    result = invoke(*checked_table(sql_catalog, tmp_path, passing=True))

    assert result.exit_code == EXIT_SPOOLED, result.output
    assert "checks runs' events (START, COMPLETE): 0 delivered, 2 spooled, 0 failed" in result.stderr
    assert [(e["eventType"], e["job"]["name"]) for e in replay_to(down)] == [
        ("START", "orders.checks"), ("COMPLETE", "orders.checks")]


def test_check_emit_a_failed_gate_stays_1_though_its_events_are_spooled(sql_catalog, tmp_path, down):
    result = invoke(*checked_table(sql_catalog, tmp_path, passing=False))

    assert result.exit_code == EXIT_TABLE_FAILED, result.output
    assert "0 delivered, 2 spooled, 0 failed" in result.stderr and waiting() == 2


def test_check_emit_delivered_exits_0(sql_catalog, tmp_path, monkeypatch):
    with LineageServer() as server:
        monkeypatch.setenv("OPENLINEAGE_URL", server.url)
        result = invoke(*checked_table(sql_catalog, tmp_path, passing=True))
        accepted = server.accepted_events()
    assert result.exit_code == EXIT_OK, result.output
    assert "2 delivered, 0 spooled, 0 failed" in result.stderr and len(accepted) == 2
