"""What became of an event handed to delivery, and the counts a summary prints."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Status = Literal["delivered", "spooled", "failed", "disabled"]


@dataclass(frozen=True)
class DeliveryResult:
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
