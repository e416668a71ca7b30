"""``--since`` as every command and notebook call reads it: an age before now (``7d``) or an ISO 8601 time.

One parser, so ``scan --since`` and ``jobs --since`` (and ``jobs(since=...)``) accept the same strings; a bad one is
a ``ValueError`` naming the option (the CLI's exit 2)."""
from __future__ import annotations

import datetime as dt
import re

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
    try:  # Python 3.10's fromisoformat does not read a trailing Z
        return _utc(dt.datetime.fromisoformat(re.sub(r"[zZ]$", "+00:00", value.strip())))
    except ValueError:
        raise ValueError(f"--since: expected a duration such as 7d, 12h, 30m or an ISO 8601 time, got {value!r}") \
            from None


def epoch_ms(moment: dt.datetime | None) -> int | None:
    """A time as epoch milliseconds, the unit of Iceberg's snapshot timestamps."""
    return None if moment is None else int(moment.timestamp() * 1000)


def _utc(moment: dt.datetime) -> dt.datetime:
    return moment.replace(tzinfo=dt.timezone.utc) if moment.tzinfo is None else moment
