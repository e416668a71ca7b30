"""Names from metadata never control the terminal: control characters are shown as escapes, markup is escaped."""
from __future__ import annotations

import logging

import pytest
from rich.console import Console

from iceberg_lineage.printable import markup_safe, printable, printable_lines
from iceberg_lineage.redact import SecretFilter

HOSTILE = {
    "clear screen": ("orders\x1b[2J\x1b[H", "orders\\x1b[2J\\x1b[H"),
    "window title": ("t\x1b]0;pwned\x07", "t\\x1b]0;pwned\\x07"),
    "forged line": ("x\nscan: lake.db.orders: 99 snapshot(s) emitted", "x\\nscan: lake.db.orders: 99 snapshot(s) emitted"),
    "carriage return": ("ok\rtables: ALL OK", "ok\\rtables: ALL OK"),
    "rtl override": ("abc\u202egnp.exe", "abc\\u202egnp.exe"),
    "isolate": ("a\u2066b\u2069", "a\\u2066b\\u2069"),
    "c1 csi": ("a\x9b2J", "a\\x9b2J"),
    "line separator": ("a\u2028b", "a\\u2028b"),
    "nul and del": ("a\x00b\x7f", "a\\x00b\\x7f"),
}


@pytest.mark.parametrize("raw, shown", HOSTILE.values(), ids=HOSTILE.keys())
def test_control_characters_are_shown_not_obeyed(raw, shown):
    assert printable(raw) == shown
    assert all(ch.isprintable() for ch in printable(raw))


def test_ordinary_text_is_unchanged():
    text = "sales.orders_2026 · Zürich 東京 – [ok] 100%"
    assert printable(text) == text


def test_printable_lines_keeps_our_own_line_breaks():
    assert printable_lines("Traceback:\n  name 'a\x1bb'\n") == "Traceback:\n  name 'a\\x1bb'\n"


@pytest.mark.parametrize("name", ["[/bold]", "[link=https://evil.example]click[/link]", "[red]x", "\\[x]"])
def test_markup_from_data_renders_literally(name):
    console = Console(record=True, width=200, color_system=None)
    console.print(f"column {markup_safe(name)}")  # would raise MarkupError or hide a link without escaping
    assert console.export_text().rstrip("\n") == f"column {name}"


def test_log_records_show_control_characters(caplog):
    log = logging.getLogger("iceberg_lineage.test_escapes")
    record = log.makeRecord(log.name, logging.WARNING, __file__, 1, "table %s failed", ("t\x1b[2J\nforged",), None)
    SecretFilter().filter(record)
    assert record.getMessage() == "table t\\x1b[2J\\nforged failed"
