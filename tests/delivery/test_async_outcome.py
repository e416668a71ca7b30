"""``async_http`` only queues events: they count as delivered once its flush confirmed them (issue 28). With the
server up, a scan's snapshots are delivered after the flush and it exits 0; with the server down, the transport
gives up on them (it keeps nothing for the spool): they are lost, counted, and the command exits 1."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from iceberg_lineage.cli import main
from iceberg_lineage.cli.common import EXIT_OK, EXIT_TABLE_FAILED
from tests.support.lineage_server import LineageServer, free_port
from tests.support.olschema import validate_event
from tests.support.scan import catalog_env, write_table


def use_async(monkeypatch, url: str) -> None:
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__TYPE", "async_http")
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__URL", url)
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__RETRY", '{"total": 0}')


@pytest.mark.parametrize("up", [True, False], ids=["server", "no server"])
def test_an_async_scan_counts_what_the_flush_confirmed(sql_catalog, monkeypatch, up):
    write_table(sql_catalog, "db.orders", 3)
    for key, value in catalog_env(sql_catalog).items():
        monkeypatch.setenv(key, value)
    with LineageServer(0 if up else free_port()) as server:
        if not up:
            server.stop()  # the port of a server that is gone: connection refused
        use_async(monkeypatch, server.url)
        result = CliRunner().invoke(main, ["scan", "--format", "json", "--no-progress"])
        accepted = server.accepted_events() if up else []
    summary = json.loads(result.stderr.strip().splitlines()[-1])

    # three snapshots' runs, START and COMPLETE each, and the scan's own START and COMPLETE
    events = 3 * 2 + 2
    assert summary["snapshots"]["emitted"] == 3 and summary["spooled_events"] == 0
    if up:
        assert (result.exit_code, summary["exit_code"]) == (EXIT_OK, EXIT_OK), result.output
        assert (summary["snapshots"]["delivered"], summary["unconfirmed_events"], len(accepted)) == (3, 0, events)
        for event in accepted:
            validate_event(event)
    else:
        assert (result.exit_code, summary["exit_code"]) == (EXIT_TABLE_FAILED, EXIT_TABLE_FAILED), result.output
        assert (summary["snapshots"]["delivered"], summary["unconfirmed_events"]) == (None, events)


def test_events_emit_over_async_with_the_server_down_exits_1(sql_catalog, monkeypatch):
    table = write_table(sql_catalog, "db.orders", 2)
    use_async(monkeypatch, f"http://127.0.0.1:{free_port()}")

    result = CliRunner().invoke(main, ["events", "--metadata", table.metadata_location, "--all-snapshots", "--emit"])

    assert result.exit_code == EXIT_TABLE_FAILED, result.output
    assert "0 of 4 event(s) delivered" in result.stderr and "0 spooled" in result.stderr and "4 failed" in result.stderr
