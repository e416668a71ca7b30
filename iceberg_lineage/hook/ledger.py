"""The hook's side of the delivery ledger: which tagged snapshots' events got out (delivered, or durably spooled).

The ledger is a table of the scanner's state store (``state.path``): a scanner sharing that file re-sends only the
tagged snapshots it does not find there. Writes happen on the emitter's threads, after delivery: the rows of the
commits an emitter settles in one go are buffered and written in one transaction when it has drained its queue
(:class:`~iceberg_lineage.delivery.emitter.Settlement`), one connection per thread (SQLite connections stay on their
thread). A ledger that cannot be written is logged once and costs only duplicates (the scanner re-sends those
snapshots, same runIds), never the user's operation; so does a process ended before a batch was written.
"""
from __future__ import annotations

import os
import threading
from typing import Mapping

from iceberg_lineage.delivery.emitter import log_once
from iceberg_lineage.state.store import StateStore

#: Delivery statuses after which a snapshot's events are safe: sent, or kept for ``iceberg-lineage replay``.
LEDGER_STATUSES = frozenset({"delivered", "spooled"})


class LedgerBatch:
    """The ledger rows of one state file waiting on one thread, written by :meth:`write` (the emitter's
    :class:`~iceberg_lineage.delivery.emitter.Settlement`)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.rows: list[tuple[str, int, str]] = []
        self._store: StateStore | None = None

    def write(self) -> None:
        """Write the waiting rows in one transaction; never raises."""
        rows, self.rows = self.rows, []
        if not rows:
            return
        try:
            if self._store is None:
                self._store = StateStore(self.path)
            self._store.record_ledger(rows)
        except Exception as exc:  # noqa: BLE001 - lineage never breaks the user's program
            log_once(f"recording delivered snapshots in the ledger at {self.path}", exc)


class HookLedger:
    """The waiting rows and open state store of each thread and state file."""

    def __init__(self) -> None:
        self._local = threading.local()

    def record(self, path: str, identity: str, run_ids: Mapping[int, str]) -> LedgerBatch:
        """Add these snapshots of a table to this thread's batch for ``path``, which the caller then writes."""
        batches: dict[tuple[int, str], LedgerBatch] = self._local.__dict__.setdefault("batches", {})
        key = (os.getpid(), path)  # a forked child opens its own connection
        batch = batches.get(key)
        if batch is None:
            batch = batches[key] = LedgerBatch(path)
        batch.rows += [(identity, sid, run_id) for sid, run_id in run_ids.items()]
        return batch


#: The process's ledger writer.
LEDGER = HookLedger()
