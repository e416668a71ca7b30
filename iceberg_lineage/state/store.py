"""The scanner's watermark store: which snapshots of which table were already emitted, in one SQLite file.

Tables are keyed by identity (``table-uuid``, or the walker's stable id), not by name, so a renamed table keeps its
history. A snapshot is written here only after its event was delivered or spooled; a crash in between re-emits
it (same runId) next time, never loses it. A file lock next to the database keeps overlapping runs apart.

The same file holds the delivery ledger (``ledger``): the snapshots whose events the hook delivered or spooled. It
is written by hooked processes without the lock (SQLite serialises writers). Schema version 1 files (before the
ledger) are migrated in place on first writable open; read-only, they read as an empty ledger. Version 3 adds the
proxy's engine applications (:mod:`iceberg_lineage.state.proxy_runs`). Version 4 records, per table, the destination
its events went to (the transport's type and URL or path, no secret): a scan that would send them elsewhere stops
(:mod:`iceberg_lineage.scan.destination`); older tables have none until their next scan. Version 5 adds, per table
and mode, the metadata location at which every snapshot was delivered or spooled (``history_complete_at``,
``current_complete_at``): a scan that lists the same location skips the table without loading it; older tables have
none until their next complete scan.
"""
from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping

from iceberg_lineage.errors import ConfigError, IcebergLineageError

SCHEMA_VERSION = 5

_DDL = """
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
    current_complete_at TEXT           -- since 5: the same for --mode current (its current snapshot was sent)
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


#: The columns added to ``tables`` after version 1 (``destination`` by version 4, the two markers by version 5).
_ADDED_COLUMNS = ("destination", "history_complete_at", "current_complete_at")


def prepare(db: sqlite3.Connection) -> None:
    """Create a writable state file's tables, or migrate an older file to :data:`SCHEMA_VERSION` in place (versions 2
    and 3 add tables, which the DDL creates; versions 4 and 5 add columns to ``tables``); refuses a newer file."""
    db.executescript(_DDL)
    for column in _ADDED_COLUMNS:
        if not _has_column(db, "tables", column):
            try:
                db.execute(f"ALTER TABLE tables ADD COLUMN {column} TEXT")
            except sqlite3.OperationalError:  # another process (a hook) migrated the file meanwhile
                if not _has_column(db, "tables", column):
                    raise
    db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
    version = int(db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise ConfigError(f"state file has schema version {version}, expected {SCHEMA_VERSION}")
    if version < SCHEMA_VERSION:
        db.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION),))
    db.commit()


def _has_column(db: sqlite3.Connection, table: str, column: str) -> bool:
    return any(row[1] == column for row in db.execute(f"PRAGMA table_info({table})"))


class StateLockedError(IcebergLineageError):
    """Another run holds the state lock (CLI exit code 2)."""

    kind = "lock"


@dataclass(frozen=True)
class TrackedTable:
    """A table's row in the state: its identity, the name and metadata file recorded last, whether it was dropped."""

    identity: str
    catalog: str
    identifier: tuple[str, ...]
    location: str
    metadata_location: str | None
    current_snapshot_id: int | None = None
    dropped: bool = False
    #: the metadata location at which every snapshot was delivered or spooled by a history scan (``None``: not yet)
    history_complete_at: str | None = None
    #: the same for ``--mode current``: its current snapshot's event was delivered or spooled
    current_complete_at: str | None = None

    def complete_at(self, mode: str) -> str | None:
        """The location at which this table was fully emitted in ``mode`` (``history`` or ``current``)."""
        return self.history_complete_at if mode == "history" else self.current_complete_at


@dataclass(frozen=True)
class Watermark:
    """What a table task needs to know about a table's past: the emitted ids and the newest emitted commit."""

    emitted: frozenset[int] = frozenset()
    last_sequence_number: int | None = None
    last_timestamp_ms: int | None = None
    current_snapshot_id: int | None = None
    #: tagged snapshots the ledger knows as delivered by the hook
    hook_delivered: frozenset[int] = frozenset()


@dataclass(frozen=True)
class EmittedSnapshot:
    snapshot_id: int
    sequence_number: int | None
    timestamp_ms: int | None
    via: str  # "scan" | "hook"
    run_id: str | None


class StateStore:
    """The SQLite watermark store. ``readonly`` (dry runs) never creates nor changes the file."""

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        try:
            self._open(path, readonly)
        except (sqlite3.Error, OSError) as exc:
            if getattr(self, "_db", None) is not None:
                self._db.close()
            directory = Path(path).is_dir()
            reason = "is a directory, not a state file" if directory else f"cannot open the state file ({exc})"
            raise ConfigError(reason, file=str(path)) from None

    def _open(self, path: str | Path, readonly: bool) -> None:
        """Connect (creating or migrating the file unless ``readonly``); sqlite3 and OS errors reach the caller."""
        self.path = Path(path)
        self.readonly = readonly
        if readonly:
            self._db = sqlite3.connect(":memory:") if not self.path.exists() else sqlite3.connect(
                f"file:{self.path.resolve()}?mode=ro", uri=True
            )
            if not self.path.exists():
                self._db.executescript(_DDL)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path)
            # WAL + synchronous=NORMAL: a power cut may forget the last commits, which only re-emits their
            # snapshots (same runIds); it can never record an event that was not delivered.
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            try:
                prepare(self._db)
            except ConfigError as exc:
                raise ConfigError(exc.reason, file=str(path)) from None
        version = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if version is not None and int(version[0]) > SCHEMA_VERSION:
            raise ConfigError(f"state file has schema version {version[0]}, expected {SCHEMA_VERSION}", file=str(path))
        self._has_ledger = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='ledger'").fetchone() is not None
        # a file older than version 5, opened read-only, has no markers: its tables read as never fully emitted
        markers = _MARKER_COLUMNS if _has_column(self._db, "tables", "history_complete_at") else "NULL, NULL"
        self._columns = f"{_COLUMNS}, {markers}"
        #: where this run's events go, written with each table it records (:meth:`send_to`)
        self.destination: str | None = None
        #: inside :meth:`batch`: the advances to write at its end
        self._batched: list[tuple[TrackedTable, tuple[EmittedSnapshot, ...]]] | None = None

    # -- reads -------------------------------------------------------------------------------------------------------
    def get(self, identity: str) -> TrackedTable | None:
        row = self._db.execute(f"SELECT {self._columns} FROM tables WHERE identity=?", (identity,)).fetchone()
        return _tracked_table(row) if row else None

    def find(self, catalog: str, identifier: tuple[str, ...]) -> TrackedTable | None:
        """The live table recorded under a name; the one recorded last when a table was replaced under it (drop and
        create, ``register_table``), whose predecessor is still on record."""
        row = self._db.execute(
            f"SELECT {self._columns} FROM tables WHERE catalog=? AND identifier=? AND dropped=0"
            " ORDER BY updated_at DESC LIMIT 1",
            (catalog, _ident(identifier)),
        ).fetchone()
        return _tracked_table(row) if row else None

    def live_in(self, catalog: str, namespace: tuple[str, ...]) -> dict[tuple[str, ...], TrackedTable]:
        """The live tables recorded directly in ``namespace``, by name (as :meth:`find` reads each), in one query:
        a scan reads them once per namespace listed, not once per table."""
        if not namespace:
            return {}
        prefix = _ident(namespace)[:-1] + ", "  # '["db", ' starts the names in db and below it (JSON, sorted)
        rows = self._db.execute(
            f"SELECT {self._columns} FROM tables WHERE catalog=? AND identifier >= ? AND identifier < ?"
            " AND dropped=0 ORDER BY updated_at", (catalog, prefix, prefix[:-1] + "!"),
        ).fetchall()
        tables = (_tracked_table(row) for row in rows)
        return {t.identifier: t for t in tables if len(t.identifier) == len(namespace) + 1}

    def watermark(self, identity: str) -> Watermark:
        rows = self._db.execute(
            "SELECT snapshot_id, sequence_number, timestamp_ms FROM snapshots WHERE identity=?", (identity,)
        ).fetchall()
        table = self.get(identity)
        seqs = [r[1] for r in rows if r[1] is not None]
        times = [r[2] for r in rows if r[2] is not None]
        return Watermark(
            emitted=frozenset(r[0] for r in rows),
            last_sequence_number=max(seqs) if seqs else None,
            last_timestamp_ms=max(times) if times else None,
            current_snapshot_id=table.current_snapshot_id if table else None,
            hook_delivered=self.hook_delivered(identity),
        )

    def hook_delivered(self, identity: str) -> frozenset[int]:
        """The table's snapshots the hook recorded in the ledger as delivered (or spooled)."""
        if not self._has_ledger:
            return frozenset()
        rows = self._db.execute("SELECT snapshot_id FROM ledger WHERE identity=?", (identity,)).fetchall()
        return frozenset(r[0] for r in rows)

    def tables(self, catalog: str) -> Iterator[TrackedTable]:
        """Live (not dropped) tables of a catalog, streamed."""
        cursor = self._db.execute(f"SELECT {self._columns} FROM tables WHERE catalog=? AND dropped=0", (catalog,))
        for row in cursor:
            yield _tracked_table(row)

    def destinations(self) -> Iterator[tuple[TrackedTable, str | None]]:
        """Every live table with the destination its events went to (``None``: not recorded, as in files before
        schema version 4)."""
        column = "destination" if _has_column(self._db, "tables", "destination") else "NULL"
        for row in self._db.execute(f"SELECT {self._columns}, {column} FROM tables WHERE dropped=0").fetchall():
            yield _tracked_table(row), row[-1]

    def emitted(self, identity: str) -> list[EmittedSnapshot]:
        rows = self._db.execute(
            "SELECT snapshot_id, sequence_number, timestamp_ms, via, run_id FROM snapshots WHERE identity=? "
            "ORDER BY sequence_number, timestamp_ms, snapshot_id",
            (identity,),
        ).fetchall()
        return [EmittedSnapshot(*r) for r in rows]

    # -- writes ------------------------------------------------------------------------------------------------------
    def send_to(self, destination: str, identities: Iterable[str], *, reset: Iterable[str] = ()) -> None:
        """This run's events go to ``destination``: record it for the tables ``identities`` now (each table recorded
        later gets it too), in one transaction. The tables in ``reset`` forget what was sent before (their emitted
        snapshots, their current-mode watermark, their markers of being fully emitted, and their ledger rows), so their
        history goes to the new place."""
        self._check_writable()
        self.destination = destination
        forget = [(identity,) for identity in reset]
        with self._db:
            self._db.executemany("DELETE FROM snapshots WHERE identity=?", forget)
            self._db.executemany("DELETE FROM ledger WHERE identity=?", forget)
            self._db.executemany("UPDATE tables SET current_snapshot_id=NULL, history_complete_at=NULL,"
                                 " current_complete_at=NULL WHERE identity=?", forget)
            self._db.executemany("UPDATE tables SET destination=? WHERE identity=?",
                                 [(destination, identity) for identity in identities])

    def record(self, table: TrackedTable, snapshots: Iterable[EmittedSnapshot] = ()) -> None:
        """One table's advance, in one transaction: upsert its row (a ``current_snapshot_id`` of ``None`` keeps the
        recorded one; its markers of being fully emitted are written as given) and add its newly emitted snapshots.
        Inside :meth:`batch`, at the batch's end."""
        self._check_writable()
        if self._batched is not None:
            self._batched.append((table, tuple(snapshots)))
        else:
            self._write([(table, tuple(snapshots))])

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """:meth:`record` calls inside are written together at the end, in one transaction (also when the block
        raises: they record what was delivered). One commit per batch of tables instead of one per table, and the
        write lock is held for the writes only, never while the events are sent (hooks write the ledger meanwhile).
        A crash before the end forgets the batch: its snapshots are sent again (same runIds), never lost."""
        if self.readonly or self._batched is not None:
            yield
            return
        self._batched = []
        try:
            yield
        finally:
            batched, self._batched = self._batched, None
            if batched:
                self._write(batched)

    def _write(self, advances: list[tuple[TrackedTable, tuple[EmittedSnapshot, ...]]]) -> None:
        now = time.time()
        with self._db:
            self._db.executemany(
                "INSERT INTO tables (identity, catalog, identifier, location, metadata_location, current_snapshot_id,"
                " dropped, updated_at, destination, history_complete_at, current_complete_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(identity) DO UPDATE SET"
                " catalog=excluded.catalog, identifier=excluded.identifier, location=excluded.location,"
                " metadata_location=excluded.metadata_location,"
                " current_snapshot_id=COALESCE(excluded.current_snapshot_id, tables.current_snapshot_id),"
                " dropped=excluded.dropped, updated_at=excluded.updated_at,"
                " destination=COALESCE(excluded.destination, tables.destination),"
                " history_complete_at=excluded.history_complete_at, current_complete_at=excluded.current_complete_at",
                [(table.identity, table.catalog, _ident(table.identifier), table.location, table.metadata_location,
                  table.current_snapshot_id, int(table.dropped), now, self.destination, table.history_complete_at,
                  table.current_complete_at) for table, _ in advances],
            )
            self._db.executemany(
                "INSERT OR IGNORE INTO snapshots VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(table.identity, s.snapshot_id, s.sequence_number, s.timestamp_ms, s.via, s.run_id, now)
                 for table, snapshots in advances for s in snapshots],
            )

    def record_delivered(self, identity: str, run_ids: Mapping[int, str]) -> None:
        """Add snapshots (id -> runId) the hook delivered or spooled to the ledger, atomically."""
        self.record_ledger((identity, sid, run_id) for sid, run_id in run_ids.items())

    def record_ledger(self, rows: Iterable[tuple[str, int, str]]) -> None:
        """Add (identity, snapshot id, runId) rows to the ledger in one transaction (the hook writes a batch)."""
        self._check_writable()
        now = time.time()
        with self._db:
            self._db.executemany("INSERT OR IGNORE INTO ledger VALUES (?, ?, ?, ?)",
                                 [(identity, sid, run_id, now) for identity, sid, run_id in rows])

    def mark_dropped(self, identity: str) -> None:
        self._check_writable()
        with self._db:
            self._db.execute("UPDATE tables SET dropped=1, updated_at=? WHERE identity=?", (time.time(), identity))

    def rename(self, identity: str, identifier: tuple[str, ...]) -> None:
        self._check_writable()
        with self._db:
            self._db.execute("UPDATE tables SET identifier=?, updated_at=? WHERE identity=?",
                             (_ident(identifier), time.time(), identity))

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "StateStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_writable(self) -> None:
        if self.readonly:
            raise RuntimeError("state store opened read-only")


_COLUMNS = "identity, catalog, identifier, location, metadata_location, current_snapshot_id, dropped"
_MARKER_COLUMNS = "history_complete_at, current_complete_at"


def _ident(identifier: tuple[str, ...]) -> str:
    return json.dumps(list(identifier))


def _tracked_table(row: tuple) -> TrackedTable:
    return TrackedTable(row[0], row[1], tuple(json.loads(row[2])), row[3], row[4], row[5], bool(row[6]), row[7],
                        row[8])


def lock_path(state_path: str | Path) -> Path:
    return Path(f"{state_path}.lock")


def acquire_lock(state_path: str | Path, *, wait: bool, on_wait: Callable[[str], None] | None = None):
    """Take the run lock that guards the state (held for the whole run, so two runs never interleave their
    deliveries and watermark updates).

    Returns the held :class:`filelock.FileLock`. When another run holds it: raises :class:`StateLockedError`, or
    with ``wait`` says so through ``on_wait`` and blocks until it is free.
    """
    from filelock import FileLock, Timeout

    path = lock_path(state_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if not wait:
            raise StateLockedError(
                "another scan is running (it holds the state lock); retry later or pass --wait", file=str(path)
            ) from None
        if on_wait is not None:
            on_wait(f"another scan holds {path}; waiting for it to finish")
        lock.acquire()
    return lock
