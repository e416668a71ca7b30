"""Reading event files for the ``jobs`` report: JSON Lines, plain or gzip (told by its first bytes), streamed line by
line into :class:`~iceberg_lineage.jobs.aggregate.JobsAggregator`. The file transport of openlineage-python (ours,
and OpenLineage Spark's) writes one event per line; so does the embedded default, ``events.jsonl`` beside the state
file (in the per-user state folder by default), which is read when no file is named.

A line longer than ``jobs.max_line_bytes`` is skipped as a bad line without being held whole (a gzip inflating to
one huge line included), and only regular files are read (or ``-``, the standard input): a device never ends and a
FIFO without a writer blocks at open.
"""
from __future__ import annotations

import datetime as dt
import gzip
import io
import os
import stat
import sys
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator, Sequence

from iceberg_lineage.config import load_settings
from iceberg_lineage.errors import ConfigError
from iceberg_lineage.jobs.aggregate import JobsAggregator
from iceberg_lineage.jobs.decode import is_utf8
from iceberg_lineage.jobs.model import JobsReport
from iceberg_lineage.jobs.options import parse_rate
from iceberg_lineage.times import parse_since

_GZIP_MAGIC = b"\x1f\x8b"
#: The standard input, as a file name.
STDIN = "-"
#: Bytes read at a time while skipping the rest of a line over the cap.
_SKIP_CHUNK = 1 << 20
#: Bytes read at a time from a plain file: a block of lines split, and checked for UTF-8, in one call each.
_BLOCK = 1 << 18


@contextmanager
def open_events(path: str | Path) -> Iterator[IO[bytes]]:
    """The bytes of an events file, decompressed when it is gzip; ``-`` is the standard input."""
    if str(path) == STDIN:
        raw: IO[bytes] = sys.stdin.buffer
    else:
        where = Path(path)
        if where.is_dir():
            raise ConfigError("a directory, not an events file", file=str(path))
        try:
            mode = os.stat(where).st_mode
        except FileNotFoundError:
            default = where == load_settings().state.events_path
            hint = " (no events were written here yet; give --events FILE)" if default else ""
            raise ConfigError(f"no events file{hint}", file=str(path)) from None
        except OSError as exc:
            raise ConfigError(f"cannot read the events file ({exc.strerror})", file=str(path)) from None
        if not stat.S_ISREG(mode):
            raise ConfigError("not a regular file (a device or a FIFO); give '-' to read standard input",
                              file=str(path))
        raw = open(where, "rb")  # noqa: SIM115 - closed below
    try:
        yield gzip.GzipFile(fileobj=raw) if raw.peek(2)[:2] == _GZIP_MAGIC else raw  # type: ignore[attr-defined]
    finally:
        if raw is not sys.stdin.buffer:
            raw.close()


def capped_blocks(stream: IO[bytes], max_bytes: int) -> Iterator[bytes | None]:
    """The lines of ``stream`` in blocks of whole lines (the last line of the stream may lack its newline); ``None``
    in their place for a line longer than ``max_bytes`` (its newline aside), whose rest is read and dropped a chunk
    at a time. A block may hold a line over the cap when the cap is under a chunk: :func:`fold_file` checks those.

    A gzip stream is read 8 KiB at a time, the size ``readline`` decompresses at a time: a corrupt stream loses only
    what a line-by-line reading lost before its error, so the lines counted before "unreadable" are the same."""
    size = io.DEFAULT_BUFFER_SIZE if isinstance(stream, gzip.GzipFile) else _BLOCK
    read = stream.read1
    parts: list[bytes] = []  # the start of a line whose newline is not read yet
    pending = 0
    chunk = read(size)
    while chunk:
        end = chunk.rfind(b"\n") + 1
        if end:
            if parts:
                parts.append(chunk[:end])
                yield b"".join(parts)
            else:
                yield chunk if end == len(chunk) else chunk[:end]
            chunk = chunk[end:]
            parts, pending = [], 0
        if chunk:
            parts.append(chunk)
            pending += len(chunk)
        if pending > max_bytes:
            yield None
            parts, pending = [], 0
            chunk = read(_SKIP_CHUNK)
            while chunk and b"\n" not in chunk:
                chunk = read(_SKIP_CHUNK)
            chunk = chunk[chunk.find(b"\n") + 1:]
            if chunk:
                continue
        chunk = read(size)
    if parts:
        yield b"".join(parts)


def _lines(block: bytes) -> list[bytes]:
    """The lines of a block, each with its newline (the last one may have none)."""
    pieces = block.split(b"\n")
    lines = [piece + b"\n" for piece in pieces[:-1]]
    return lines + [pieces[-1]] if pieces[-1] else lines


def fold_file(aggregator: JobsAggregator, path: str | Path, max_line_bytes: int) -> None:
    """Every line of one file into ``aggregator``, a block of lines at a time where it can; a line over
    ``max_line_bytes`` is a bad line, and a broken gzip stream ends that file as one bad line."""
    source = str(path)
    over = f"longer than jobs.max_line_bytes ({max_line_bytes:,} bytes)"
    with open_events(path) as stream:
        n = 0
        try:
            for block in capped_blocks(stream, max_line_bytes):
                if block is None:
                    n += 1
                    aggregator.bad(source, n, over)
                    continue
                if len(block) <= max_line_bytes and is_utf8(block):  # no line in it is over the cap
                    n += aggregator.add_lines(source, n + 1, block)
                    continue
                for line in _lines(block):
                    n += 1
                    if len(line) - line.endswith(b"\n") > max_line_bytes:
                        aggregator.bad(source, n, over)
                    else:
                        aggregator.add_line(source, n, line)
        except (OSError, EOFError, zlib.error) as exc:
            aggregator.bad(source, n + 1, f"unreadable from here on ({type(exc).__name__}: {exc})")


def read_jobs(events: str | Path | Sequence[str | Path] | None = None, *, since: str | dt.datetime | None = None,
              job: str | Sequence[str] = (), max_failure_rate: str | float | None = None,
              max_line_bytes: int | None = None) -> JobsReport:
    """The jobs report of event files (default: ``events.jsonl`` beside the state file); ``since`` is ``7d``, ``12h``,
    ... or a time, ``job`` globs on job names, ``max_failure_rate`` ``5%`` or ``0.05`` flags the jobs above it,
    ``max_line_bytes`` overrides the ``jobs.max_line_bytes`` setting."""
    paths = [events] if isinstance(events, (str, Path)) else list(events or [load_settings().state.events_path])
    rate = parse_rate(max_failure_rate)
    limit = max_line_bytes if max_line_bytes is not None else load_settings().jobs.max_line_bytes
    if limit < 1:
        raise ConfigError("jobs.max_line_bytes must be positive")
    aggregator = JobsAggregator(since=parse_since(since), jobs=(job,) if isinstance(job, str) else job)
    for path in paths:
        fold_file(aggregator, path, limit)
    return aggregator.report(sources=[str(p) for p in paths], max_failure_rate=rate)


__all__ = ["STDIN", "capped_blocks", "fold_file", "open_events", "read_jobs"]
