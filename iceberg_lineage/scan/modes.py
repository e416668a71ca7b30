"""What a scan sends of each table: ``history`` (every snapshot not sent yet) or ``current`` (its current snapshot).
A module of its own so that what only names a mode (the scan options, the API) does not import the table task."""
from __future__ import annotations

from typing import Literal

Mode = Literal["history", "current"]
MODES: tuple[Mode, ...] = ("history", "current")

__all__ = ["MODES", "Mode"]
