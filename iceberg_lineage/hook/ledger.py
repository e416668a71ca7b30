"""The hook's side of the delivery ledger: which tagged snapshots' events got out (delivered, or durably spooled).

The ledger is a table of the scanner's state store (``state.path``): a scanner sharing that file re-sends only the
tagged snapshots it does not find there. Writes happen on the emitter's threads, after delivery, one connection per
thread (SQLite connections stay on their thread); a ledger that cannot be written is logged once and costs only
duplicates (the scanner re-sends those snapshots, same runIds), never the user's operation.
"""
from __future__ import annotations

import os
import threading
from typing import Mapping

from iceberg_lineage.delivery.emitter import log_once
from iceberg_lineage.state.store import StateStore

#: Delivery statuses after which a snapshot's events are safe: sent, or kept for ``iceberg-lineage replay``.
LEDGER_STATUSES = frozenset({"delivered", "spooled"})


class HookLedger:
    """Open state stores, per thread and path, recording the hook's delivered snapshots."""

    def __init__(self) -> None:
        self._local = threading.local()

    def _store(self, path: str) -> StateStore:
        stores: dict[tuple[int, str], StateStore] = self._local.__dict__.setdefault("stores", {})
        key = (os.getpid(), path)  # a forked child opens its own connection
        if key not in stores:
            stores[key] = StateStore(path)
        return stores[key]

    def record(self, path: str, identity: str, run_ids: Mapping[int, str]) -> None:
        """Record these snapshots of a table as delivered; never raises."""
        try:
            self._store(path).record_delivered(identity, run_ids)
        except Exception as exc:  # noqa: BLE001 - lineage never breaks the user's program
            log_once(f"recording delivered snapshots in the ledger at {path}", exc)


#: The process's ledger writer.
LEDGER = HookLedger()
