"""What every facet builder shares: this project's producer and one spelling of time."""
from __future__ import annotations

import datetime as dt
import functools
from typing import Any, Mapping

from iceberg_lineage._version import __version__

PRODUCER = f"https://github.com/iceberg-lineage/iceberg-lineage/tree/{__version__}"
#: Keyword arguments every facet takes: each carries this project's producer.
PRODUCED: Mapping[str, Any] = {"producer": PRODUCER}

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def iso_time(moment: dt.datetime) -> str:
    """UTC, millisecond precision, ``Z`` suffix: one stable spelling for every timestamp we emit."""
    return moment.astimezone(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def ms_to_datetime(timestamp_ms: int) -> dt.datetime:
    """Exact (integer) conversion: run ids hash the datetime's text, so float rounding must not leak in."""
    return _EPOCH + dt.timedelta(milliseconds=timestamp_ms)


@functools.lru_cache(maxsize=4096)
def iso_ms(timestamp_ms: int) -> str:
    """:func:`iso_time` of a millisecond timestamp, remembered (a few thousand): a snapshot's time is written in its
    run's events and in their ``lastUpdated``."""
    return iso_time(ms_to_datetime(timestamp_ms))
