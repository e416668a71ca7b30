"""What waits in a spool, for ``iceberg-lineage replay --list``: the queue's length and the quarantine (events the
server rejected ``spool.max_rejections`` times), read without sending anything and without creating a spool."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iceberg_lineage.delivery.spool import Spool, SpooledEvent
from iceberg_lineage.printable import printable


@dataclass(frozen=True)
class SpoolListing:
    path: Path
    waiting: int
    quarantined: tuple[SpooledEvent, ...]

    @property
    def empty(self) -> bool:
        """Nothing waits and nothing is quarantined (``replay --list`` exits 0)."""
        return self.waiting == 0 and not self.quarantined

    def to_json(self) -> dict[str, Any]:
        return {"spool": str(self.path.expanduser().resolve()), "waiting": self.waiting,
                "quarantined": [_entry(event) for event in self.quarantined]}

    def text_lines(self) -> list[str]:
        """A heading, then three lines per quarantined event; control characters shown, not sent to the terminal."""
        lines = [f"{printable(self.path)}: {len(self.quarantined)} quarantined, {self.waiting} waiting"]
        for event in self.quarantined:
            datasets = ", ".join(f"{ns}/{name}" for ns, name in event.datasets) or "-"
            lines += [printable(f"  {event.seq}  run {event.run_id}  {event.event_type}  attempts {event.attempts}"
                                f"  -> {event.destination}"),
                      printable(f"      datasets: {datasets}"),
                      printable(f"      last error: {event.last_error}")]
        return lines


def list_spool(path: Path) -> SpoolListing:
    """The spool at ``path`` as it is; a missing one lists as empty."""
    if not Spool.exists(path):
        return SpoolListing(path, 0, ())
    with Spool(path) as spool:
        return SpoolListing(path, spool.count(), tuple(spool.quarantined()))


def _entry(event: SpooledEvent) -> dict[str, Any]:
    return {
        "seq": event.seq, "run_id": event.run_id, "event_type": event.event_type,
        "datasets": [{"namespace": ns, "name": name} for ns, name in event.datasets],
        "attempts": event.attempts, "last_error": event.last_error, "destination": event.destination,
        "enqueued_at": event.enqueued_at, "quarantined_at": event.quarantined_at,
    }
