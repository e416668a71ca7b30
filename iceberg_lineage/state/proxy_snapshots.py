"""The proxy's part of the state file (``state.path``): the snapshots it saw committed, who reports each, and what
became of the proxy's own events.

``owner`` is ``proxy`` (the proxy sent the snapshot's COMPLETE run: ``status`` delivered or spooled) or ``hook``
(the snapshot carries the hook's ownership tag: the hook, or the scanner after it, reports it; the proxy sends
nothing). Rows never claim a delivery for the scanner: its watermarks and the hook's ledger are other tables, so a
scanner sharing this file still re-sends what it has not recorded itself, with the same runIds. Several proxy
processes write the file at once; SQLite serialises them (WAL, a busy timeout).
"""
from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Iterable, NamedTuple

from iceberg_lineage.errors import ConfigError

_DDL = """
CREATE TABLE IF NOT EXISTS bridge_snapshots (
    identity TEXT NOT NULL,
    snapshot_id INTEGER NOT NULL,
    owner TEXT NOT NULL,               -- 'proxy' or 'hook'
    run_id TEXT,
    status TEXT NOT NULL,              -- 'delivered', 'spooled', 'failed', 'disabled', or 'hook'
    recorded_at REAL NOT NULL,
    PRIMARY KEY (identity, snapshot_id)
) WITHOUT ROWID;
"""


class ProxiedSnapshot(NamedTuple):
    identity: str
    snapshot_id: int
    owner: str
    run_id: str | None
    status: str


class ProxySnapshots:
    """The proxy's table of snapshots in the state file (named ``bridge_snapshots`` in existing files); thread-safe
    (the emitter's thread writes, others may read)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_DDL)
        except (sqlite3.Error, OSError) as exc:
            raise ConfigError(f"cannot open the state file ({exc})", file=str(path)) from None

    def record(self, rows: Iterable[ProxiedSnapshot]) -> None:
        """Record snapshots; a later status of the same snapshot (spooled, then delivered) replaces the earlier."""
        now = time.time()
        with self._lock, self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO bridge_snapshots VALUES (?, ?, ?, ?, ?, ?)",
                [(r.identity, r.snapshot_id, r.owner, r.run_id, r.status, now) for r in rows])

    def snapshots(self, identity: str | None = None) -> list[ProxiedSnapshot]:
        query = "SELECT identity, snapshot_id, owner, run_id, status FROM bridge_snapshots"
        with self._lock:
            rows = (self._db.execute(query + " WHERE identity=?", (identity,)) if identity
                    else self._db.execute(query)).fetchall()
        return [ProxiedSnapshot(*row) for row in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()
