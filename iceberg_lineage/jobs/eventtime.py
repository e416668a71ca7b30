"""An event's ``eventTime`` in milliseconds since the epoch, as ``jobs`` counts it: ``round(timestamp * 1000)`` of the
standard library's ISO 8601 reading, UTC when the time has no offset.

Most producers write one format, OpenLineage's own: ``2026-03-05T12:34:56.789Z``. A time in exactly that shape is
three table lookups, not a parse: its hour (``2026-03-05T12:``, learnt from the first time of that hour that the
standard library read), its minute and second (``34:56.``) and its milliseconds (``789Z``). Any other text misses
a table and is parsed; so is a first time of an hour, from which that hour is learnt only when the whole text is of
that shape (an hour from 00 to 23, ASCII digits). Both ways give the same number: for such a time the parse is
exact (``timestamp`` divides whole microseconds, correctly rounded, and multiplying back errs by far less than half
a millisecond in years 1 to 9999), so an hour's start plus its minutes, seconds and milliseconds is what the parse
of any time in that hour answers.
"""
from __future__ import annotations

import datetime as dt

from iceberg_lineage.jobs.timeline import EARLIEST_MS
from iceberg_lineage.jsontypes import Json

_MIN_MS = EARLIEST_MS
_MAX_MS = round(dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=dt.timezone.utc).timestamp() * 1000) + 999
_fromisoformat = dt.datetime.fromisoformat
_UTC = dt.timezone.utc
_TWO_DIGITS = [f"{n:02d}" for n in range(60)]
#: ``MM:SS.`` and ``fffZ``, the rest of a time after its hour, in milliseconds.
_MINUTE_SECOND = {f"{m}:{s}.": (60 * i + j) * 1000
                  for i, m in enumerate(_TWO_DIGITS) for j, s in enumerate(_TWO_DIGITS)}
_MILLISECOND = {f"{ms:03d}Z": ms for ms in range(1000)}
#: Hours learnt (``2026-03-05T12:`` -> its start in ms); emptied at this size, so a log of many years stays small.
MAX_HOURS = 4096
_hours: dict[str, int] = {}


class BadEvent(ValueError):
    """JSON that is not an OpenLineage run event we can count."""


def event_ms(value: Json) -> int:
    """An ``eventTime`` in milliseconds since the epoch; UTC when it has no offset."""
    millis = _MILLISECOND.get(value[20:]) if type(value) is str else None
    if millis is None:  # another format (one lookup lost), or no string at all
        return parsed_ms(value)
    rest = _MINUTE_SECOND.get(value[14:20])
    hour = _hours.get(value[:14])
    if hour is not None and rest is not None:
        return hour + rest + millis
    ms = parsed_ms(value)
    if rest is not None and _an_hour(value[:14]):  # the whole text is of the one shape
        if len(_hours) >= MAX_HOURS:
            _hours.clear()
        _hours[value[:14]] = ms - rest - millis
    return ms


def _an_hour(text: str) -> bool:
    """``YYYY-MM-DDTHH:`` in ASCII digits, the hour from 00 to 23."""
    digits = text[:4] + text[5:7] + text[8:10] + text[11:13]
    return digits.isascii() and digits.isdigit() and text[4] + text[7] + text[10] + text[13] == "--T:" \
        and text[11:13] <= "23"


def parsed_ms(value: Json) -> int:
    """:func:`event_ms` by the standard library's parse, whatever the format."""
    if not isinstance(value, str):
        raise BadEvent("run event without an eventTime")
    try:
        parsed = _fromisoformat(value)
    except ValueError:
        raise BadEvent(f"eventTime {value[:40]!r} is not ISO 8601") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=_UTC)
    ms = round(parsed.timestamp() * 1000)
    if not _MIN_MS <= ms <= _MAX_MS:  # an offset can move a time at either end out of years 1..9999 in UTC
        raise BadEvent(f"eventTime {value[:40]!r} is outside years 1 to 9999 in UTC")
    return ms


__all__ = ["MAX_HOURS", "BadEvent", "event_ms", "parsed_ms"]
