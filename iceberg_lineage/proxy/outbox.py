"""The lineage process's last stage: built events go to its emitter as a :class:`PendingBatch` (data: the events,
and per event the snapshot whose delivery it completes), and what became of each snapshot's COMPLETE is recorded in
the proxy's part of the state file."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import NamedTuple, Sequence

from openlineage.client.event_v2 import RunEvent

from iceberg_lineage.delivery.delivery import DeliveryResult
from iceberg_lineage.delivery.emitter import Emitter
from iceberg_lineage.delivery.failure_log import FailureLog
from iceberg_lineage.state.proxy_snapshots import ProxiedSnapshot, ProxySnapshots

LOG = logging.getLogger(__name__)
log_once = FailureLog(LOG)


class SnapshotRef(NamedTuple):
    identity: str
    snapshot_id: int


class Built(NamedTuple):
    """An event, and the snapshot that its delivery reports (a per-snapshot COMPLETE), else None."""

    event: RunEvent
    snapshot: SnapshotRef | None = None


@dataclass(frozen=True)
class PendingBatch:
    """The proxy's item on the emitter (its :class:`~iceberg_lineage.delivery.emitter.Pending`): events already
    built, exported as one batch; once settled, each snapshot's status is recorded."""

    built: tuple[Built, ...]
    state: ProxySnapshots | None

    def events(self) -> list[RunEvent]:
        return [b.event for b in self.built]

    def settled(self, results: Sequence[DeliveryResult]) -> None:
        rows = [ProxiedSnapshot(b.snapshot.identity, b.snapshot.snapshot_id, "proxy", b.event.run.runId, r.status)
                for b, r in zip(self.built, results) if b.snapshot is not None]
        if rows and self.state is not None:
            self.state.record(rows)


class Outbox:
    """Where the lineage process's events leave: its emitter (which never blocks), and its state for the records."""

    def __init__(self, emitter: Emitter, state: ProxySnapshots | None) -> None:
        self.emitter, self.state = emitter, state

    def send(self, built: Sequence[Built]) -> None:
        if not built:
            return
        try:
            self.emitter.submit(PendingBatch(tuple(built), self.state))
        except Exception as exc:  # noqa: BLE001 - lineage never stops the proxy
            log_once("queueing lineage events", exc)
