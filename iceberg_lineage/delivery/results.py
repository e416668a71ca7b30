"""What became of an event handed to delivery, and the counts a summary prints."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Literal

Status = Literal["delivered", "spooled", "failed", "disabled"]


@dataclass(frozen=True)
class DeliveryResult:
    """``delivered``: the transport confirmed it (an HTTP 2xx, a Kafka delivery report, a written file);
    ``spooled``: it waits in the spool for ``replay``; ``failed``: lost (the spool could not keep it)."""

    status: Status
    #: Why the transport did not take the event: exception type and HTTP status, never a message (URLs and
    #: headers can carry credentials).
    error: str | None = None
    #: The server refused this very event for good (a 4xx other than 408/429): not delivered, though kept.
    rejected: bool = False


@dataclass(frozen=True)
class DeliveryStats:
    delivered: int = 0
    spooled: int = 0
    failed: int = 0
    disabled: int = 0
    #: Of the spooled, those the server refused for good (they wait in the spool, but a replay may not help).
    rejected: int = 0

    @classmethod
    def of(cls, results: Iterable[DeliveryResult]) -> DeliveryStats:
        counts = {"delivered": 0, "spooled": 0, "failed": 0, "disabled": 0, "rejected": 0}
        for result in results:
            counts[result.status] += 1
            counts["rejected"] += result.rejected
        return cls(**counts)

    @property
    def lost_or_refused(self) -> bool:
        """Something went wrong for good: an event lost, or refused by the server (exit code 1)."""
        return bool(self.failed or self.rejected)

    @property
    def waiting(self) -> bool:
        """Events wait in the spool for ``replay`` (exit code 3, unless something worse happened)."""
        return self.spooled > 0
