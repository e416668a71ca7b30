"""The state file's tables and their migrations: what each schema version added (the history is in
:mod:`iceberg_lineage.state.store`'s docstring)."""
from __future__ import annotations

import sqlite3

from iceberg_lineage.errors import ConfigError

SCHEMA_VERSION = 6

DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tables (
    identity TEXT PRIMARY KEY,
    catalog TEXT NOT NULL,
    identifier TEXT NOT NULL,          -- JSON array: namespace parts may contain dots
    location TEXT NOT NULL,
    metadata_location TEXT,
    current_snapshot_id INTEGER,       -- --mode current watermark: last current snapshot sent as a DatasetEvent
    dropped INTEGER NOT NULL DEFAULT 0,
    updated_at REAL NOT NULL,
    destination TEXT,                  -- since schema version 4: where its events went (no secret); NULL: unknown
    history_complete_at TEXT,          -- since 5: the metadata location at which every snapshot was sent (history)
    current_complete_at TEXT,          -- since 5: the same for --mode current (its current snapshot was sent)
    etag TEXT                          -- since 6: the REST catalog's ETag of loadTable at metadata_location
);
CREATE INDEX IF NOT EXISTS tables_by_name ON tables (catalog, identifier);
CREATE TABLE IF NOT EXISTS snapshots (
    identity TEXT NOT NULL,
    snapshot_id INTEGER NOT NULL,
    sequence_number INTEGER,
    timestamp_ms INTEGER,
    via TEXT NOT NULL,                 -- 'scan' or 'hook'
    run_id TEXT,
    recorded_at REAL NOT NULL,
    PRIMARY KEY (identity, snapshot_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ledger (    -- since schema version 2: tagged snapshots the hook delivered or spooled
    identity TEXT NOT NULL,
    snapshot_id INTEGER NOT NULL,
    run_id TEXT NOT NULL,
    recorded_at REAL NOT NULL,
    PRIMARY KEY (identity, snapshot_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS app_runs (  -- since schema version 3: the REST bridge's open and completed applications
    run_id TEXT PRIMARY KEY,
    engine TEXT NOT NULL,
    app_id TEXT NOT NULL,
    engine_version TEXT,
    status TEXT NOT NULL,              -- 'open', then 'complete' (idle timeout, shutdown, restart)
    started_at REAL NOT NULL,
    last_activity REAL NOT NULL,
    owner TEXT NOT NULL,               -- the bridge process that completes it (host:pid:token), while its lease holds
    lease_until REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS app_reads (
    run_id TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    snapshot_id INTEGER,               -- the snapshot read last
    read_at REAL NOT NULL,
    PRIMARY KEY (run_id, namespace, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS held_commits (  -- per-snapshot COMPLETEs waiting for the engine's commit report
    table_key TEXT NOT NULL,           -- JSON [prefix, namespace..., table] as the REST path names it
    snapshot_id INTEGER NOT NULL,
    identity TEXT,
    event TEXT,                        -- the COMPLETE's JSON (kept once sent, for a late report's OTHER event)
    report TEXT,                       -- the CommitReport's JSON, when it came before the commit was relayed
    status TEXT NOT NULL,              -- 'waiting', 'sent', or 'report' (the report came first)
    due REAL NOT NULL,                 -- 'waiting': when it goes out without its report; else when the row expires
    owner TEXT NOT NULL,
    lease_until REAL NOT NULL,
    PRIMARY KEY (table_key, snapshot_id)
) WITHOUT ROWID;
"""


#: The columns added to ``tables`` after version 1 (``destination`` by version 4, the two markers by version 5, the
#: ETag by version 6).
_ADDED_COLUMNS = ("destination", "history_complete_at", "current_complete_at", "etag")


def prepare(db: sqlite3.Connection) -> None:
    """Create a writable state file's tables, or migrate an older file to :data:`SCHEMA_VERSION` in place (versions 2
    and 3 add tables, which the DDL creates; versions 4 to 6 add columns to ``tables``); refuses a newer file."""
    db.executescript(DDL)
    for column in _ADDED_COLUMNS:
        if not has_column(db, "tables", column):
            try:
                db.execute(f"ALTER TABLE tables ADD COLUMN {column} TEXT")
            except sqlite3.OperationalError:  # another process (a hook) migrated the file meanwhile
                if not has_column(db, "tables", column):
                    raise
    db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
    version = int(db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise ConfigError(f"state file has schema version {version}, expected {SCHEMA_VERSION}")
    if version < SCHEMA_VERSION:
        db.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION),))
    db.commit()


def has_column(db: sqlite3.Connection, table: str, column: str) -> bool:
    return any(row[1] == column for row in db.execute(f"PRAGMA table_info({table})"))
