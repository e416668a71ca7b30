"""The ``jobs`` report's options as values: ``--since 7d``, ``--max-failure-rate 5%``, ``--job GLOB``.

The same strings work in the CLI and in ``jobs(...)`` in a notebook; a bad one is a ``ValueError`` naming the
option (the CLI's exit 2)."""
from __future__ import annotations

import datetime as dt
import fnmatch
import re
from typing import Sequence

_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(s|m|min|h|d|w)\s*")
_UNIT_S = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_since(value: str | dt.datetime | None, now: dt.datetime | None = None) -> dt.datetime | None:
    """``7d``, ``12h``, ``30m``, ``90s``, ``2w`` before ``now``, or an ISO 8601 time (UTC when it has no offset)."""
    if value is None or isinstance(value, dt.datetime):
        return _utc(value) if value is not None else None
    match = _DURATION.fullmatch(value)
    if match:
        now = _utc(now) if now is not None else dt.datetime.now(dt.timezone.utc)
        return now - dt.timedelta(seconds=float(match.group(1)) * _UNIT_S[match.group(2)])
    try:
        return _utc(dt.datetime.fromisoformat(value.strip()))
    except ValueError:
        raise ValueError(f"--since: expected a duration such as 7d, 12h, 30m or an ISO 8601 time, got {value!r}") \
            from None


def _utc(moment: dt.datetime) -> dt.datetime:
    return moment.replace(tzinfo=dt.timezone.utc) if moment.tzinfo is None else moment


def parse_rate(value: str | float | None) -> float | None:
    """``5%`` or ``0.05`` (a fraction from 0 to 1) -> 0.05; ``5`` is refused rather than guessed."""
    if value is None:
        return None
    rate = value
    if isinstance(value, str):
        text = value.strip()
        try:
            rate = float(text.removesuffix("%")) / (100 if text.endswith("%") else 1)
        except ValueError:
            rate = -1.0
    if not 0 <= rate <= 1:
        raise ValueError(f"--max-failure-rate: expected a percentage such as 5% or a fraction from 0 to 1 such as "
                         f"0.05, got {value!r}")
    return float(rate)


def job_selector(globs: Sequence[str]):
    """Whether a job is reported: no globs means every job; a glob with ``/`` matches ``namespace/name``, one
    without matches the name (case-sensitive)."""
    globs = tuple(globs)

    def selected(namespace: str, name: str) -> bool:
        return not globs or any(fnmatch.fnmatchcase(f"{namespace}/{name}" if "/" in g else name, g) for g in globs)

    return selected


__all__ = ["job_selector", "parse_rate", "parse_since"]
