"""The on-disk spool: events the transport refused or could not reach, kept in order until a replay delivers them.

One SQLite database (``spool.db``) in the spool directory, in WAL mode with ``synchronous=FULL``: an append is
durable once it returns, and a crash mid-write leaves the database as it was before the transaction. Several
processes (a hook, a scanner, a replay) may share one spool; SQLite serialises their writes. Replays are serialised
by a file lock (``replay.lock``) held for the whole replay, so two replays never send the same events twice; writers
never take that lock, so a replay waiting on a slow server never stalls the processes that spool.
"""
from __future__ import annotations

import datetime as dt
import sqlite3
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from filelock import FileLock, Timeout

from iceberg_lineage.errors import DeliveryError

DB_NAME = "spool.db"
LOCK_NAME = "replay.lock"
#: How long a writer waits for another process's transaction before giving up.
BUSY_TIMEOUT_MS = 30_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: the delivery order
    run_id TEXT,
    event_type TEXT,
    enqueued_at TEXT NOT NULL,
    size INTEGER NOT NULL,                  -- bytes of body in UTF-8, for spool.max_bytes
    body TEXT NOT NULL                      -- the event exactly as serialised for the transport
)
"""


@dataclass(frozen=True)
class SpooledEvent:
    seq: int
    run_id: str | None
    event_type: str | None
    enqueued_at: str
    body: str


class Spool:
    """A durable FIFO of serialised events; thread-safe (one connection behind a lock)."""

    def __init__(self, path: str | Path, max_bytes: int | None = None) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.path.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            self.path / DB_NAME, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute(_SCHEMA)

    @staticmethod
    def exists(path: str | Path) -> bool:
        return (Path(path) / DB_NAME).is_file()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def append(self, body: str, run_id: str | None, event_type: str | None) -> bool:
        """Store one event durably; False (nothing stored) when it would take the spool past ``max_bytes``."""
        size = len(body.encode("utf-8"))
        now = dt.datetime.now(dt.timezone.utc).isoformat()
        with self._transaction() as db:
            if self.max_bytes is not None:
                (used,) = db.execute("SELECT COALESCE(SUM(size), 0) FROM events").fetchone()
                if used + size > self.max_bytes:
                    return False
            db.execute(
                "INSERT INTO events (run_id, event_type, enqueued_at, size, body) VALUES (?, ?, ?, ?, ?)",
                (run_id, event_type, now, size, body),
            )
        return True

    def read(self, after_seq: int = 0, limit: int = 100) -> list[SpooledEvent]:
        """The oldest ``limit`` events after ``after_seq``, in order (a replay pages through, never loading all)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, run_id, event_type, enqueued_at, body FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
                (after_seq, limit),
            ).fetchall()
        return [SpooledEvent(*row) for row in rows]

    def remove(self, seq: int) -> None:
        with self._transaction() as db:
            db.execute("DELETE FROM events WHERE seq = ?", (seq,))

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM events").fetchone()[0])

    def size_bytes(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COALESCE(SUM(size), 0) FROM events").fetchone()[0])

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
