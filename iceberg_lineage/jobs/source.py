"""Reading event files for the ``jobs`` report: JSON Lines, plain or gzip (told by its first bytes), streamed line by
line into :class:`~iceberg_lineage.jobs.aggregate.JobsAggregator`. The file transport of openlineage-python (ours,
and OpenLineage Spark's) writes one event per line; so does the embedded default,
``./.iceberg-lineage/events.jsonl``, which is read when no file is named.
"""
from __future__ import annotations

import datetime as dt
import gzip
import sys
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator, Sequence

from iceberg_lineage.config import DEFAULT_EVENTS_PATH
from iceberg_lineage.errors import ConfigError
from iceberg_lineage.jobs.aggregate import JobsAggregator
from iceberg_lineage.jobs.model import JobsReport
from iceberg_lineage.jobs.options import parse_rate
from iceberg_lineage.times import parse_since

_GZIP_MAGIC = b"\x1f\x8b"
#: The standard input, as a file name.
STDIN = "-"


@contextmanager
def open_events(path: str | Path) -> Iterator[IO[bytes]]:
    """The bytes of an events file, decompressed when it is gzip; ``-`` is the standard input."""
    if str(path) == STDIN:
        raw: IO[bytes] = sys.stdin.buffer
    else:
        where = Path(path)
        if where.is_dir():
            raise ConfigError("a directory, not an events file", file=str(path))
        if not where.exists():
            hint = " (no events were written here yet; give --events FILE)" if where == DEFAULT_EVENTS_PATH else ""
            raise ConfigError(f"no events file{hint}", file=str(path))
        raw = open(where, "rb")  # noqa: SIM115 - closed below
    try:
        yield gzip.GzipFile(fileobj=raw) if raw.peek(2)[:2] == _GZIP_MAGIC else raw  # type: ignore[attr-defined]
    finally:
        if raw is not sys.stdin.buffer:
            raw.close()


def fold_file(aggregator: JobsAggregator, path: str | Path) -> None:
    """Every line of one file into ``aggregator``; a broken gzip stream ends that file as one bad line."""
    source = str(path)
    with open_events(path) as lines:
        n = 0
        try:
            for n, line in enumerate(lines, 1):
                aggregator.add_line(source, n, line)
        except (OSError, EOFError, zlib.error) as exc:
            aggregator.bad(source, n + 1, f"unreadable from here on ({type(exc).__name__}: {exc})")


def read_jobs(events: str | Path | Sequence[str | Path] | None = None, *, since: str | dt.datetime | None = None,
              job: str | Sequence[str] = (), max_failure_rate: str | float | None = None) -> JobsReport:
    """The jobs report of event files (default: ``./.iceberg-lineage/events.jsonl``); ``since`` is ``7d``, ``12h``,
    ... or a time, ``job`` globs on job names, ``max_failure_rate`` ``5%`` or ``0.05`` flags the jobs above it."""
    paths = [events] if isinstance(events, (str, Path)) else list(events or [DEFAULT_EVENTS_PATH])
    rate = parse_rate(max_failure_rate)
    aggregator = JobsAggregator(since=parse_since(since), jobs=(job,) if isinstance(job, str) else job)
    for path in paths:
        fold_file(aggregator, path)
    return aggregator.report(sources=[str(p) for p in paths], max_failure_rate=rate)


__all__ = ["STDIN", "fold_file", "open_events", "read_jobs"]
