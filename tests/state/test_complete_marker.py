"""The mark of a table fully emitted at a metadata location, per mode (state schema version 5, issue 32), and the ETag
a REST catalog sent at that location (version 6): migrated into older files as unknown, written as given, forgotten
with the watermarks for a new destination."""
from __future__ import annotations

import sqlite3

from tests.state.test_ledger import old_state

from iceberg_lineage.state.store import StateStore, TrackedTable


def test_an_old_state_file_reads_as_never_fully_emitted_then_gains_the_marks(tmp_path):
    path = tmp_path / "state.db"
    old_state(path)
    with StateStore(path, readonly=True) as state:  # a dry run on the old file: no mark, nothing changed
        known = state.find("lake", ("db", "t"))
        assert (known.history_complete_at, known.current_complete_at) == (None, None)
    assert "history_complete_at" not in [r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(tables)")]
    with StateStore(path) as state:
        assert state.find("lake", ("db", "t")).complete_at("history") is None
        state.record(TrackedTable("uuid-1", "lake", ("db", "t"), "/w/t", "/w/t/metadata/2.json",
                                  history_complete_at="/w/t/metadata/2.json"))
    with StateStore(path, readonly=True) as state:
        known = state.find("lake", ("db", "t"))
        assert (known.complete_at("history"), known.complete_at("current")) == ("/w/t/metadata/2.json", None)


def test_the_marks_are_written_as_given_and_forgotten_for_a_new_destination(tmp_path):
    with StateStore(tmp_path / "state.db") as state:
        table = TrackedTable("u", "lake", ("db", "t"), "/w/t", "/w/t/m/1.json", history_complete_at="/w/t/m/1.json",
                             current_complete_at="/w/t/m/1.json")
        state.record(table)
        assert state.get("u") == table
        state.record(TrackedTable("u", "lake", ("db", "t"), "/w/t", "/w/t/m/2.json",
                                  current_complete_at="/w/t/m/1.json"))
        assert (state.get("u").history_complete_at, state.get("u").current_complete_at) == (None, "/w/t/m/1.json")
        state.send_to("http http://a", ["u"])
        state.send_to("http http://b", ["u"], reset=["u"])
        assert (state.get("u").history_complete_at, state.get("u").current_complete_at) == (None, None)


def test_a_name_finds_the_table_recorded_last_under_it(tmp_path):
    with StateStore(tmp_path / "state.db") as state:
        for identity in ("first", "second"):  # a table replaced under its name: both on record, neither dropped
            state.record(TrackedTable(identity, "lake", ("db", "t"), "/w/t", f"/w/{identity}.json"))
        assert state.find("lake", ("db", "t")).identity == "second"
        state.record(TrackedTable("first", "lake", ("db", "t"), "/w/t", "/w/first-2.json"))
        assert state.find("lake", ("db", "t")).identity == "first"


def test_a_namespace_s_tables_are_read_at_once_as_find_reads_each(tmp_path):
    names = [("db", "a"), ("db", "b"), ("db", "inner", "c"), ("db2", "d"), ("d", "b", "x"), ("db", "é")]
    with StateStore(tmp_path / "state.db") as state:
        for i, name in enumerate(names):
            state.record(TrackedTable(f"u{i}", "lake", name, "/w", f"/w/{i}.json"))
        state.record(TrackedTable("other", "elsewhere", ("db", "a"), "/w", "/w/x.json"))
        state.record(TrackedTable("u9", "lake", ("db", "gone"), "/w", "/w/9.json"))
        state.mark_dropped("u9")
        state.record(TrackedTable("again", "lake", ("db", "b"), "/w", "/w/again.json"))  # replaced under its name
        for namespace in (("db",), ("db", "inner"), ("db2",), ("d", "b"), ("nowhere",)):
            expected = {n: state.find("lake", n) for n in names + [("db", "gone")] if n[:-1] == namespace}
            assert state.live_in("lake", namespace) == {n: t for n, t in expected.items() if t is not None}
        assert sorted(state.live_in("lake", ("db",))) == [("db", "a"), ("db", "b"), ("db", "é")]
        assert state.live_in("lake", ("db",))[("db", "b")].identity == "again"


def test_an_old_state_file_has_no_etag_then_keeps_the_one_recorded(tmp_path):
    path = tmp_path / "state.db"
    old_state(path)
    with StateStore(path, readonly=True) as state:
        assert state.find("lake", ("db", "t")).etag is None
    assert "etag" not in [r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(tables)")]
    with StateStore(path) as state:
        state.record(TrackedTable("uuid-1", "lake", ("db", "t"), "/w/t", "/w/t/metadata/2.json", etag="e2"))
    with StateStore(path, readonly=True) as state:
        assert state.find("lake", ("db", "t")).etag == "e2"


def test_the_etag_is_asked_only_where_the_table_was_fully_emitted_in_that_mode(tmp_path):
    with StateStore(tmp_path / "state.db") as state:
        state.record(TrackedTable("u", "lake", ("db", "t"), "/w/t", "/w/t/m/2.json", etag="e2",
                                  history_complete_at="/w/t/m/2.json", current_complete_at="/w/t/m/1.json"))
        table = state.get("u")
        assert (table.etag_if_complete("history"), table.etag_if_complete("current")) == ("e2", None)
        state.send_to("http http://a", ["u"])
        state.send_to("http http://b", ["u"], reset=["u"])
        assert state.get("u").etag_if_complete("history") is None
        state.record(TrackedTable("u", "lake", ("db", "t"), "/w/t", "/w/t/m/3.json",
                                  history_complete_at="/w/t/m/3.json"))  # a load that sent no ETag forgets it
        assert (state.get("u").etag, state.get("u").etag_if_complete("history")) == (None, None)
