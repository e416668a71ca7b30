"""The delivery ledger in the state store, and the migration of state files written before it existed."""
from __future__ import annotations

import sqlite3

from iceberg_lineage.state.schema import SCHEMA_VERSION
from iceberg_lineage.state.store import EmittedSnapshot, StateStore, TrackedTable

#: The DDL of schema version 1, as state files were written before the ledger.
OLD_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE tables (identity TEXT PRIMARY KEY, catalog TEXT NOT NULL, identifier TEXT NOT NULL,
    location TEXT NOT NULL, metadata_location TEXT, current_snapshot_id INTEGER, dropped INTEGER NOT NULL DEFAULT 0,
    updated_at REAL NOT NULL);
CREATE INDEX tables_by_name ON tables (catalog, identifier);
CREATE TABLE snapshots (identity TEXT NOT NULL, snapshot_id INTEGER NOT NULL, sequence_number INTEGER,
    timestamp_ms INTEGER, via TEXT NOT NULL, run_id TEXT, recorded_at REAL NOT NULL,
    PRIMARY KEY (identity, snapshot_id)) WITHOUT ROWID;
INSERT INTO meta VALUES ('schema_version', '1');
INSERT INTO tables VALUES ('uuid-1', 'lake', '["db", "t"]', '/w/t', '/w/t/metadata/1.json', NULL, 0, 0);
INSERT INTO snapshots VALUES ('uuid-1', 11, 1, 1000, 'scan', 'run-11', 0);
INSERT INTO snapshots VALUES ('uuid-1', 12, 2, 2000, 'hook', 'run-12', 0);
"""


def old_state(path) -> None:
    db = sqlite3.connect(path)
    db.executescript(OLD_DDL)
    db.commit()
    db.close()


def test_an_old_state_file_reads_as_an_empty_ledger_then_is_migrated_in_place(tmp_path):
    path = tmp_path / "state.db"
    old_state(path)

    with StateStore(path, readonly=True) as state:  # a dry run changes nothing, not even the version
        assert state.watermark("uuid-1").emitted == {11, 12} and state.hook_delivered("uuid-1") == frozenset()
    assert sqlite3.connect(path).execute("SELECT value FROM meta").fetchone() == ("1",)

    with StateStore(path) as state:
        watermark = state.watermark("uuid-1")
        assert (watermark.emitted, watermark.last_sequence_number, watermark.hook_delivered) == ({11, 12}, 2, frozenset())
        assert state.find("lake", ("db", "t")).metadata_location == "/w/t/metadata/1.json"
        state.record_delivered("uuid-1", {13: "run-13"})
        state.record(TrackedTable("uuid-1", "lake", ("db", "t"), "/w/t", "/w/t/metadata/2.json"),
                     (EmittedSnapshot(13, 3, 3000, "hook", "run-13"),))
    # 2: the ledger; 3: the proxy's applications (tests/proxy/test_tracker.py); 4: destinations (test_destination.py);
    # 5: the markers of a table fully emitted, 6: a REST catalog's ETag (both tests/state/test_complete_marker.py)
    assert SCHEMA_VERSION == 6
    assert sqlite3.connect(path).execute("SELECT value FROM meta").fetchone() == ("6",)

    with StateStore(path) as state:  # the migrated file opens again as it is
        assert state.hook_delivered("uuid-1") == {13}
        assert [s.snapshot_id for s in state.emitted("uuid-1")] == [11, 12, 13]


def test_the_ledger_keeps_the_first_record_of_a_snapshot(tmp_path):
    with StateStore(tmp_path / "s" / "state.db") as state:
        state.record_delivered("uuid-1", {1: "a", 2: "b"})
        state.record_delivered("uuid-1", {2: "c"})
        state.record_delivered("uuid-2", {1: "d"})
        assert (state.hook_delivered("uuid-1"), state.hook_delivered("uuid-2")) == ({1, 2}, {1})
        assert state.watermark("uuid-1").hook_delivered == {1, 2} and state.watermark("uuid-1").emitted == frozenset()
