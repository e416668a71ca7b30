"""The scan's progress bar on a terminal (issue 29): tables done of tables listed, with the total once discovery has
listed every table."""
from __future__ import annotations

import io
import json
import re
import sys

from iceberg_lineage.config import load_settings
from iceberg_lineage.scan import ScanOptions, scan_catalogs
from iceberg_lineage.scan.progress import Progress

from tests.support.scan import spec_of, write_table

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Terminal(io.StringIO):
    """A buffer that says it is a terminal, as stderr does in an interactive shell."""

    def isatty(self) -> bool:
        return True


def test_a_scan_on_a_terminal_shows_tables_done_of_the_total(sql_catalog, state_path, monkeypatch, capsys):
    for name, commits in (("db.a", 2), ("db.b", 1), ("db.c", 3)):
        write_table(sql_catalog, name, commits)
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)

    summary, _ = scan_catalogs(ScanOptions(catalogs=(spec_of(sql_catalog),), dry_run=True),
                               load_settings({"state.path": str(state_path)}), progress=True)

    shown = ANSI.sub("", terminal.getvalue())
    assert summary.tables_scanned == 3
    assert "3/3 tables" in shown, shown
    # each updated table's line is printed above the bar, its snapshots counted
    assert {line for line in shown.splitlines() if "emitted" in line} >= {
        "test.db.a: 2 snapshot(s) emitted", "test.db.b: 1 snapshot(s) emitted",
        "test.db.c: 3 snapshot(s) emitted"}, shown
    # a dry run's events stay on stdout, never drawn through the bar's console
    assert '"eventType"' not in shown
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len([e for e in events if e["eventType"] == "COMPLETE"]) == 2 + 1 + 3 + 1  # and the scan's own run


def test_the_total_is_unknown_until_every_table_is_listed():
    terminal = Terminal()
    with Progress(True, terminal) as shown:
        shown.rich.refresh()
        assert "0/? tables" in ANSI.sub("", terminal.getvalue())
        shown.listed(2)
        shown.rich.refresh()
        assert "0/2 tables" in ANSI.sub("", terminal.getvalue())


def test_no_bar_off_a_terminal_nor_when_disabled():
    plain, disabled = io.StringIO(), Terminal()
    for stream, enabled in ((plain, True), (disabled, False)):
        with Progress(enabled, stream) as shown:
            shown.listed(5)
            assert shown.rich is None
    assert plain.getvalue() == disabled.getvalue() == ""
