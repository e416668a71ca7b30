"""Run durations in bounded memory: a fixed log-scale histogram with a stated relative error.

A job may have millions of runs; keeping every duration to sort them is what the ``jobs`` report must not do. Bucket
``i`` holds the durations in ``(MIN_S * GAMMA**(i-1), MIN_S * GAMMA**i]`` with ``GAMMA = (1 + a) / (1 - a)``; a
quantile answers the bucket's point ``2 * MIN_S * GAMMA**i / (GAMMA + 1)``, which is within ``a = RELATIVE_ERROR`` of
every value in the bucket (the DDSketch construction, with a fixed range instead of a collapsing one). Durations
of 0 are kept exactly; those under ``MIN_S`` answer 0 (absolute error under 1 ms); those over ``MAX_S`` answer
``MAX_S``. The counts are kept sparse, per bucket used: a job of one run costs a few hundred bytes, not the 9 KiB
of a dense array (100,000 jobs of one run each made 900 MB of them).

Quantiles are nearest-rank: the p-th percentile of n durations is the ``ceil(p * n / 100)``-th smallest.
"""
from __future__ import annotations

from math import ceil, log

#: The bound on |estimate - exact| / exact of every percentile between MIN_S and MAX_S.
RELATIVE_ERROR = 0.01
#: The smallest duration told apart from 0, in seconds (1 ms: OpenLineage event times are rarely finer).
MIN_S = 1e-3
#: The largest duration measured, in seconds (about 115 days); longer ones count as this.
MAX_S = 1e7
GAMMA = (1 + RELATIVE_ERROR) / (1 - RELATIVE_ERROR)
_LOG_GAMMA = log(GAMMA)
#: Slot 0: zero and sub-millisecond durations; slot i + 1: bucket i of the docstring.
_SLOTS = ceil(log(MAX_S / MIN_S) / _LOG_GAMMA) + 2


def _value(slot: int) -> float:
    if slot == 0:
        return 0.0
    return min(2 * MIN_S * GAMMA ** (slot - 1) / (GAMMA + 1), MAX_S)


class DurationSketch:
    """Counts of durations per log-scale bucket; ``percentile`` answers within :data:`RELATIVE_ERROR`."""

    __slots__ = ("count", "_counts")

    def __init__(self) -> None:
        self.count = 0
        self._counts: dict[int, int] | None = None

    def add(self, seconds: float) -> None:
        """One duration; a negative one (a clock going back) counts as 0. Called once a timed run: no helper call."""
        counts = self._counts
        if counts is None:
            counts = self._counts = {}
        if seconds < MIN_S:
            slot = 0
        elif seconds >= MAX_S:
            slot = _SLOTS - 1
        else:
            slot = ceil(log(seconds / MIN_S) / _LOG_GAMMA) + 1
        counts[slot] = counts.get(slot, 0) + 1
        self.count += 1

    def percentile(self, p: int) -> float | None:
        """The nearest-rank ``p``-th percentile (``p`` in 1..100), or ``None`` without durations."""
        if self._counts is None or not self.count:
            return None
        rank = max(1, -(-self.count * p // 100))
        seen = 0
        for slot in sorted(self._counts):
            seen += self._counts[slot]
            if seen >= rank:
                return _value(slot)
        raise AssertionError("the counts add up to count")


__all__ = ["GAMMA", "MAX_S", "MIN_S", "RELATIVE_ERROR", "DurationSketch"]
