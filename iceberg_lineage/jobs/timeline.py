"""Runs over time in bounded memory: counts per time bin and state, in at most :data:`MAX_BINS` bins aligned on the
epoch; when a new bin would exceed them, every bin widens to the next width of :data:`BIN_WIDTHS_S` (each a multiple
of the one before, so bins merge whole), then doubles."""
from __future__ import annotations

import datetime as dt

from iceberg_lineage.jobs.model import TimeBin
from iceberg_lineage.jobs.text import STATES

MAX_BINS = 200
BIN_WIDTHS_S = (1, 5, 10, 30, 60, 300, 600, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 7 * 86400, 28 * 86400)


#: The earliest instant a datetime holds, in milliseconds since the epoch.
EARLIEST_MS = round(dt.datetime.min.replace(tzinfo=dt.timezone.utc).timestamp() * 1000)


def moment(ms: int) -> dt.datetime:
    """Milliseconds since the epoch as an aware UTC datetime."""
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc)


class Timeline:
    """Runs per time bin and state, in at most :data:`MAX_BINS` bins aligned on the epoch."""

    def __init__(self) -> None:
        self.level = 0
        self.width_ms = 1000
        self.bins: dict[int, list[int]] = {}

    def copy(self) -> Timeline:
        other = Timeline()
        other.level, other.width_ms = self.level, self.width_ms
        other.bins = {k: list(v) for k, v in self.bins.items()}
        return other

    def add(self, ms: int, state: int) -> None:
        counts = self.bins.get(ms // self.width_ms)
        if counts is None:
            counts = self.bins[ms // self.width_ms] = [0] * len(STATES)
        counts[state] += 1
        while len(self.bins) > MAX_BINS:
            self._widen()

    def _widen(self) -> None:
        self.level += 1
        width = BIN_WIDTHS_S[self.level] * 1000 if self.level < len(BIN_WIDTHS_S) else 2 * self.width_ms
        factor, self.width_ms = width // self.width_ms, width
        merged: dict[int, list[int]] = {}
        for key, counts in self.bins.items():
            into = merged.setdefault(key // factor, [0] * len(STATES))
            for i, n in enumerate(counts):
                into[i] += n
        self.bins = merged

    def frozen(self) -> tuple[TimeBin, ...]:
        # a bin's start is floored: the first bin of events in year 1 would start before it
        return tuple(TimeBin(moment(max(key * self.width_ms, EARLIEST_MS)), self.width_ms / 1000, *counts)
                     for key, counts in sorted(self.bins.items()))


__all__ = ["BIN_WIDTHS_S", "MAX_BINS", "Timeline", "moment"]
