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
none until their next complete scan. Version 6 adds the ETag a REST catalog sent with the table at its recorded
metadata location (``etag``): a scan asks the catalog whether the table changed since, and skips it on a 304.
"""
from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Container, Iterable, Iterator, Mapping

from iceberg_lineage.errors import ConfigError, IcebergLineageError
from iceberg_lineage.state.schema import DDL, SCHEMA_VERSION, has_column, prepare

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
    #: the ETag a REST catalog sent with the table at ``metadata_location`` (``None``: none sent, or not REST)
    etag: str | None = None

    def complete_at(self, mode: str) -> str | None:
        """The location at which this table was fully emitted in ``mode`` (``history`` or ``current``)."""
        return self.history_complete_at if mode == "history" else self.current_complete_at

    def etag_if_complete(self, mode: str) -> str | None:
        """The ETag to ask the catalog with: only when the table was fully emitted in ``mode`` at the location the
        ETag was sent for, so that a 304 means nothing is left to send."""
        return self.etag if self.metadata_location is not None \
            and self.complete_at(mode) == self.metadata_location else None


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
                self._db.executescript(DDL)
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
        # a file older than version 5 (6), opened read-only, has no markers (ETags): its tables read as never fully
        # emitted (with no ETag)
        markers = _MARKER_COLUMNS if has_column(self._db, "tables", "history_complete_at") else "NULL, NULL"
        etag = "etag" if has_column(self._db, "tables", "etag") else "NULL"
        self._columns = f"{_COLUMNS}, {markers}, {etag}"
        #: where this run's events go, written with each table it records (:meth:`send_to`)
        self.destination: str | None = None
        #: inside :meth:`batch`: the advances to write at its end
        self._batched: list[tuple[TrackedTable, tuple[EmittedSnapshot, ...]]] | None = None
        #: inside a :meth:`batch` with limits: its tables and seconds, and when it writes next at the latest
        self._limits: tuple[int, float] | None = None
        self._write_by = 0.0

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

    def tables(self, catalog: str, *, besides: Container[str] = ()) -> Iterator[TrackedTable]:
        """Live (not dropped) tables of a catalog, streamed; not those whose identity is in ``besides``, which are
        skipped undecoded (a scan looking for dropped tables skips the thousands it saw)."""
        cursor = self._db.execute(f"SELECT {self._columns} FROM tables WHERE catalog=? AND dropped=0", (catalog,))
        for row in cursor:
            if row[0] not in besides:
                yield _tracked_table(row)

    def destinations(self) -> Iterator[tuple[TrackedTable, str | None]]:
        """Every live table with the destination its events went to (``None``: not recorded, as in files before
        schema version 4)."""
        column = "destination" if has_column(self._db, "tables", "destination") else "NULL"
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
        if self._batched is None:
            self._write([(table, tuple(snapshots))])
            return
        self._batched.append((table, tuple(snapshots)))
        if self._limits is not None and (len(self._batched) >= self._limits[0] or time.monotonic() >= self._write_by):
            self._write(self._batched)
            self._batched, self._write_by = [], time.monotonic() + self._limits[1]

    @contextlib.contextmanager
    def batch(self, *, tables: int | None = None, seconds: float = 1.0) -> Iterator[None]:
        """:meth:`record` calls inside are written together at the end, in one transaction (also when the block
        raises: they record what was delivered). One commit per batch of tables instead of one per table, and the
        write lock is held for the writes only, never while the events are sent (hooks write the ledger meanwhile).
        A crash before the end forgets the batch: its snapshots are sent again (same runIds), never lost.

        With ``tables``, a long batch (a whole scan) is also written as it goes: at the record that makes ``tables``
        of them, or that comes ``seconds`` after its last write. A batch inside a batch is part of the outer one."""
        if self.readonly or self._batched is not None:
            yield
            return
        self._batched = []
        self._limits = (tables, seconds) if tables is not None else None
        self._write_by = time.monotonic() + seconds
        try:
            yield
        finally:
            batched, self._batched, self._limits = self._batched, None, None
            if batched:
                self._write(batched)

    def _write(self, advances: list[tuple[TrackedTable, tuple[EmittedSnapshot, ...]]]) -> None:
        now = time.time()
        with self._db:
            self._db.executemany(
                "INSERT INTO tables (identity, catalog, identifier, location, metadata_location, current_snapshot_id,"
                " dropped, updated_at, destination, history_complete_at, current_complete_at, etag)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(identity) DO UPDATE SET"
                " catalog=excluded.catalog, identifier=excluded.identifier, location=excluded.location,"
                " metadata_location=excluded.metadata_location,"
                " current_snapshot_id=COALESCE(excluded.current_snapshot_id, tables.current_snapshot_id),"
                " dropped=excluded.dropped, updated_at=excluded.updated_at,"
                " destination=COALESCE(excluded.destination, tables.destination),"
                " history_complete_at=excluded.history_complete_at, current_complete_at=excluded.current_complete_at,"
                " etag=excluded.etag",
                [(table.identity, table.catalog, _ident(table.identifier), table.location, table.metadata_location,
                  table.current_snapshot_id, int(table.dropped), now, self.destination, table.history_complete_at,
                  table.current_complete_at, table.etag) for table, _ in advances],
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
                        row[8], row[9])


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
