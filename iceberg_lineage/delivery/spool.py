"""The on-disk spool: events the transport refused or could not reach, kept in order until a replay delivers them.

One SQLite database (``spool.db``) in the spool directory, in WAL mode with ``synchronous=FULL``: an append is
durable once it returns, and a crash mid-write leaves the database as it was before the transaction. Several
processes (a hook, a scanner, a replay) may share one spool; SQLite serialises their writes. Replays are serialised
by a file lock (``replay.lock``) held for the whole replay, so two replays never send the same events twice; writers
never take that lock, so a replay waiting on a slow server never stalls the processes that spool.

Each event keeps the keys that order it (its runId and the namespace/name of its datasets), how often the server
rejected it for good, the last error and the transport it was meant for. An event rejected ``spool.max_rejections``
times moves to the ``quarantine`` table, keeping its ``seq``, so that ``replay --retry-quarantined`` can put it back
at its place. Spools of schema 0 (before these columns) are migrated in place, tracked by ``PRAGMA user_version``.
"""
from __future__ import annotations

import datetime as dt
import errno
import json
import sqlite3
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from filelock import FileLock, Timeout

from iceberg_lineage.errors import DeliveryError
from iceberg_lineage.jsontypes import Json

DB_NAME = "spool.db"
LOCK_NAME = "replay.lock"
#: How long a writer waits for another process's transaction before giving up.
BUSY_TIMEOUT_MS = 30_000
SCHEMA_VERSION = 1

#: The columns added by schema 1, with their definitions (old rows get the defaults, then their dataset keys).
_ADDED = (
    ("datasets", "TEXT NOT NULL DEFAULT '[]'"),  # JSON [[namespace, name], ...] of every input, output or dataset
    ("attempts", "INTEGER NOT NULL DEFAULT 0"),  # times rejected for good (a 4xx other than 408/429)
    ("last_error", "TEXT"),                      # exception type and HTTP status, never a message
    ("destination", "TEXT"),                     # the transport it was meant for, without credentials
)
_BASE = (
    ("run_id", "TEXT"),
    ("event_type", "TEXT"),
    ("enqueued_at", "TEXT NOT NULL"),
    ("size", "INTEGER NOT NULL"),                # bytes of body in UTF-8, for spool.max_bytes
    ("body", "TEXT NOT NULL"),                   # the event exactly as serialised for the transport
)
_COLUMNS = ", ".join(f"{name} {kind}" for name, kind in (*_BASE, *_ADDED))
_EVENTS_DDL = f"CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY AUTOINCREMENT, {_COLUMNS})"
_QUARANTINE_DDL = (
    f"CREATE TABLE IF NOT EXISTS quarantine (seq INTEGER PRIMARY KEY, {_COLUMNS}, quarantined_at TEXT NOT NULL)"
)
_STORED = "seq, " + ", ".join(name for name, _ in (*_BASE, *_ADDED))
_READ = "seq, run_id, event_type, enqueued_at, body, datasets, attempts, last_error, destination"

_ERRNO_REASONS = {
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.ENOTDIR: "not a directory",
    errno.EEXIST: "not a directory",
}
#: SQLite's primary result codes (an extended code's low byte) as what they mean for a spool.
_SQLITE_REASONS = {
    3: "permission denied",
    5: "locked by another process for too long",
    8: "read-only (the file or its directory cannot be written)",
    10: "I/O error",
    11: "corrupt database",
    13: "no space left on device",
    14: "cannot open the database file",
    26: "not a SQLite database (garbage, or another kind of file)",
}


class SpoolError(DeliveryError):
    """The spool cannot be opened, read or written; ``reason`` says why in words, ``file`` names the path."""


def spool_reason(exc: BaseException) -> str:
    """What an OS or SQLite error means for the spool, from its errno or SQLite result code, not its message."""
    if isinstance(exc, OSError):
        return _ERRNO_REASONS.get(exc.errno or 0) or exc.strerror or type(exc).__name__
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in _SQLITE_REASONS:
        return _SQLITE_REASONS[code & 0xFF]
    return f"SQLite error: {exc}"


def dataset_keys(doc: Mapping[str, Json]) -> list[tuple[str, str]]:
    """(namespace, name) of every input and output of a run or job event, or of a DatasetEvent's dataset."""
    found = [*(doc.get("inputs") or ()), *(doc.get("outputs") or ())]
    if isinstance(doc.get("dataset"), Mapping):
        found.append(doc["dataset"])
    keys: list[tuple[str, str]] = []
    for dataset in found:
        if isinstance(dataset, Mapping) and "namespace" in dataset and "name" in dataset:
            pair = (str(dataset["namespace"]), str(dataset["name"]))
            if pair not in keys:
                keys.append(pair)
    return keys


def _keys_of(body: str) -> str:
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        return "[]"
    return json.dumps(dataset_keys(doc) if isinstance(doc, Mapping) else [])


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat()


@dataclass(frozen=True)
class SpooledEvent:
    seq: int
    run_id: str | None
    event_type: str | None
    enqueued_at: str
    body: str
    datasets: tuple[tuple[str, str], ...] = ()
    attempts: int = 0
    last_error: str | None = None
    destination: str | None = None
    quarantined_at: str | None = None

    @classmethod
    def of(cls, row: tuple) -> SpooledEvent:
        seq, run_id, event_type, enqueued_at, body, datasets, *rest = row
        return cls(seq, run_id, event_type, enqueued_at, body, tuple(tuple(k) for k in json.loads(datasets)), *rest)


class HeldBack:
    """The runIds and dataset keys of events a replay leaves in the spool: a later event sharing one must stay too,
    so that nothing overtakes."""

    def __init__(self) -> None:
        self.runs: set[str] = set()
        self.datasets: set[tuple[str, str]] = set()

    def holds(self, item: SpooledEvent) -> bool:
        return item.run_id in self.runs or not self.datasets.isdisjoint(item.datasets)

    def add(self, item: SpooledEvent) -> None:
        if item.run_id is not None:
            self.runs.add(item.run_id)
        self.datasets.update(item.datasets)


@contextmanager
def _guard(file: Path) -> Iterator[None]:
    """OS and SQLite errors as a :class:`SpoolError` naming ``file`` and what the error means."""
    try:
        yield
    except (OSError, sqlite3.Error) as exc:
        raise SpoolError(spool_reason(exc), file=str(file)) from None


class Spool:
    """A durable FIFO of serialised events, with its quarantine; thread-safe (one connection behind a lock).

    Every failure to open, read or write it is a :class:`SpoolError`."""

    def __init__(self, path: str | Path, max_bytes: int | None = None) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        with _guard(self.path):
            if self.path.exists() and not self.path.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, "not a directory")
            self.path.mkdir(parents=True, exist_ok=True)
        self.file = self.path / DB_NAME
        with _guard(self.file):
            self._db = sqlite3.connect(
                self.file, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
            )
        try:
            with _guard(self.file):
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=FULL")
            self._migrate()
        except SpoolError:
            self._db.close()
            raise

    @staticmethod
    def exists(path: str | Path) -> bool:
        return (Path(path) / DB_NAME).is_file()

    def _version(self) -> int:
        with self._lock, _guard(self.file):
            return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self) -> None:
        """Bring a new or schema-0 spool to :data:`SCHEMA_VERSION`, in one transaction (other processes wait)."""
        if self._version() == SCHEMA_VERSION:
            return
        with self._transaction() as db:
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
            if version > SCHEMA_VERSION:
                raise SpoolError(f"spool schema {version} is newer than this iceberg-lineage knows ({SCHEMA_VERSION})",
                                 file=str(self.file))
            if version == SCHEMA_VERSION:
                return
            columns = {row[1] for row in db.execute("PRAGMA table_info(events)")}
            db.execute(_EVENTS_DDL)
            for name, kind in _ADDED:
                if columns and name not in columns:
                    db.execute(f"ALTER TABLE events ADD COLUMN {name} {kind}")
            if columns and "datasets" not in columns:
                for seq, body in db.execute("SELECT seq, body FROM events").fetchall():
                    db.execute("UPDATE events SET datasets = ? WHERE seq = ?", (_keys_of(body), seq))
            db.execute(_QUARANTINE_DDL)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock, _guard(self.file):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _query(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._lock, _guard(self.file):
            return self._db.execute(sql, args).fetchall()

    def append(self, body: str, run_id: str | None = None, event_type: str | None = None, *, attempts: int = 0,
               last_error: str | None = None, destination: str | None = None, quarantined: bool = False) -> bool:
        """Store one event durably (straight into the quarantine if ``quarantined``); False (nothing stored) when it
        would take the spool, quarantine included, past ``max_bytes``."""
        size = len(body.encode("utf-8"))
        with self._transaction() as db:
            if self.max_bytes is not None:
                (used,) = db.execute(
                    "SELECT (SELECT COALESCE(SUM(size), 0) FROM events) "
                    "+ (SELECT COALESCE(SUM(size), 0) FROM quarantine)"
                ).fetchone()
                if used + size > self.max_bytes:
                    return False
            cursor = db.execute(
                "INSERT INTO events (run_id, event_type, enqueued_at, size, body, datasets, attempts, last_error, "
                "destination) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, event_type, _now(), size, body, _keys_of(body), attempts, last_error, destination),
            )
            if quarantined:
                self._move(db, int(cursor.lastrowid or 0))
        return True

    @staticmethod
    def _move(db: sqlite3.Connection, seq: int) -> None:
        db.execute(f"INSERT INTO quarantine ({_STORED}, quarantined_at) SELECT {_STORED}, ? FROM events WHERE seq = ?",
                   (_now(), seq))
        db.execute("DELETE FROM events WHERE seq = ?", (seq,))

    def read(self, after_seq: int = 0, limit: int = 100) -> list[SpooledEvent]:
        """The oldest ``limit`` events after ``after_seq``, in order (a replay pages through, never loading all)."""
        rows = self._query(f"SELECT {_READ} FROM events WHERE seq > ? ORDER BY seq LIMIT ?", (after_seq, limit))
        return [SpooledEvent.of(row) for row in rows]

    def holds(self, run_id: str | None, datasets: Iterable[tuple[str, str]]) -> bool:
        """Whether an event waiting here (not in the quarantine) has this runId or one of these datasets: a new
        event that does must be spooled behind it, so that nothing overtakes."""
        keys = list(datasets)
        shared = " OR ".join(["(json_extract(d.value, '$[0]') = ? AND json_extract(d.value, '$[1]') = ?)"] * len(keys))
        sql = "SELECT EXISTS (SELECT 1 FROM events WHERE run_id = ?)"
        if keys:
            sql += f" OR EXISTS (SELECT 1 FROM events, json_each(events.datasets) AS d WHERE {shared})"
        return bool(self._query(sql, (run_id, *(part for key in keys for part in key)))[0][0])

    def remove(self, seq: int) -> None:
        with self._transaction() as db:
            db.execute("DELETE FROM events WHERE seq = ?", (seq,))

    def reject(self, seq: int, error: str, max_rejections: int, destination: str | None = None) -> bool:
        """Count one rejection for good of a waiting event (by ``destination``, if given); True when that makes
        ``max_rejections`` and the event moved to the quarantine."""
        with self._transaction() as db:
            db.execute("UPDATE events SET attempts = attempts + 1, last_error = ?, "
                       "destination = COALESCE(?, destination) WHERE seq = ?", (error, destination, seq))
            row = db.execute("SELECT attempts FROM events WHERE seq = ?", (seq,)).fetchone()
            if row is None or row[0] < max_rejections:
                return False
            self._move(db, seq)
        return True

    def quarantined(self) -> list[SpooledEvent]:
        rows = self._query(f"SELECT {_READ}, quarantined_at FROM quarantine ORDER BY seq")
        return [SpooledEvent.of(row) for row in rows]

    def retry_quarantined(self) -> int:
        """Put every quarantined event back in the queue at its original place (its seq), attempts reset."""
        with self._transaction() as db:
            back = _STORED.replace("attempts", "0")
            moved = db.execute(f"INSERT INTO events ({_STORED}) SELECT {back} FROM quarantine").rowcount
            db.execute("DELETE FROM quarantine")
        return int(moved)

    def drop(self, seq: int) -> bool:
        """Delete one quarantined event; False if the quarantine has no such seq."""
        with self._transaction() as db:
            return db.execute("DELETE FROM quarantine WHERE seq = ?", (seq,)).rowcount > 0

    def count(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM events")[0][0])

    def quarantine_count(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM quarantine")[0][0])

    def size_bytes(self) -> int:
        return int(self._query("SELECT COALESCE(SUM(size), 0) FROM events")[0][0])

    @contextmanager
    def replay_lock(self) -> Iterator[None]:
        """Exclusive right to replay this spool; fails at once if another replay holds it."""
        lock = FileLock(str(self.path / LOCK_NAME), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            raise DeliveryError("another replay is running on this spool", file=str(self.path)) from None
        try:
            yield
        finally:
            lock.release()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Spool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
