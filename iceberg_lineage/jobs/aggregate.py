"""Job statistics from a stream of OpenLineage run events: a fold without I/O, in memory bounded by the open runs
plus a fixed amount per job.

Events are paired by ``runId``. A run's outcome is its terminal event (COMPLETE, FAIL or ABORT); a run without one
is ``open``. A finished run is folded into its job's counts, duration sketch and written totals, then forgotten,
except for a fixed window of the :data:`RECENT_RUNS` latest finished runs, which catches what arrives after the
terminal event: a duplicate (same runId and eventType, or a second terminal event, counted once) and a START
written after its end (the duration is still measured). Events of a run arriving after it left the window count
as a new run.

Rows and bytes written come from ``outputStatistics`` (``rowCount``, ``size``) on the run's outputs: each distinct
dataset version (the ``version`` facet) a run wrote counts once, so a run's RUNNING events and its terminal event
repeating the last snapshot are not added twice; without a version, the run's latest statistics of the dataset count.
"""
from __future__ import annotations

import datetime as dt
import json
import sys
from typing import Any, Iterable, Mapping, Sequence, Union

from msgspec import UNSET, DecodeError, Struct

from iceberg_lineage.jobs.decode import EventKeys, decode_keys, decode_utf8, keys_of_dict
from iceberg_lineage.jobs.eventtime import BadEvent, event_ms
from iceberg_lineage.jobs.model import BadLine, JobsReport, JobStats, LastFailure
from iceberg_lineage.jsontypes import Json
from iceberg_lineage.jobs.options import job_selector, parse_rate
from iceberg_lineage.jobs.sketch import DurationSketch
from iceberg_lineage.jobs.text import STATES
from iceberg_lineage.jobs.timeline import EARLIEST_MS, Timeline, moment
from iceberg_lineage.times import parse_since

#: Distinct tables kept per job and direction (read, written); more sets ``tables_truncated``.
MAX_TABLES = 100
#: Bad lines kept with their place (all are counted).
MAX_BAD_LINES = 20
#: Characters of an ``errorMessage`` kept for the last failure.
MAX_MESSAGE = 2000
#: Finished runs remembered for duplicates and late STARTs.
RECENT_RUNS = 32768
TERMINAL = {"COMPLETE": "completed", "FAIL": "failed", "ABORT": "aborted"}
#: Terminal kinds by code (the code is also the slot of ``_Job.counts`` and of the timeline's states).
_ENDS = tuple(TERMINAL)
_START, _RUNNING = len(_ENDS), len(_ENDS) + 1
#: Each kind's code; a kind in another case is looked up upper-cased, any other kind is a RUNNING.
_CODES = {**{kind: code for code, kind in enumerate(_ENDS)}, "START": _START, "RUNNING": _RUNNING}
assert [STATES.index(TERMINAL[kind]) for kind in _ENDS] == list(range(len(_ENDS)))
_OPEN_SLOT = STATES.index("open")
_EMPTY: Mapping[str, Any] = {}
_Written = dict  # (namespace, name, version) -> (rowCount, size), either None when unknown


def _written(outputs: Sequence[Any]) -> _Written | None:
    """The ``outputStatistics`` of an event's outputs, by dataset version."""
    found = None
    for out in outputs:
        facets = out.outputFacets
        stats = facets.outputStatistics if facets is not None else None
        if stats is None or (stats.rowCount is None and stats.size is None) or out.namespace is None \
                or out.name is None:
            continue
        version = out.facets.version if out.facets is not UNSET else UNSET
        found = found if found is not None else {}
        found[(out.namespace, out.name, version.datasetVersion if version is not UNSET else None)] = (
            stats.rowCount, stats.size)
    return found


def _message(event: EventKeys) -> str | None:
    facets = event.run.facets if event.run is not None else None
    error = facets.errorMessage if facets is not None else None
    return error.message if error is not None else None


def _merge(a: _Written | None, b: _Written | None) -> _Written | None:
    if not b:
        return a
    if not a:
        return b
    a.update(b)
    return a


def _add_written(rows: int | None, size: int | None, written: _Written | None) -> tuple[int | None, int | None]:
    for r, s in (written or _EMPTY).values():
        rows = rows if r is None else (rows or 0) + r
        size = size if s is None else (size or 0) + s
    return rows, size


class _Job:
    """One job's running totals: a fixed amount of memory whatever the number of its runs."""

    __slots__ = ("namespace", "name", "counts", "durations", "rows", "bytes", "inputs", "outputs", "truncated",
                 "last_failure", "first_ms", "last_ms")

    def __init__(self, namespace: str, name: str) -> None:
        self.namespace, self.name = namespace, name
        self.counts = [0, 0, 0]  # completed, failed, aborted: a list, 150 bytes less than a dict a job
        self.durations = DurationSketch()
        self.rows: int | None = None
        self.bytes: int | None = None
        # tuples, not sets: most jobs touch a table or two, and a set costs 216 bytes empty (at most MAX_TABLES)
        self.inputs: tuple[tuple[str, str], ...] = ()
        self.outputs: tuple[tuple[str, str], ...] = ()
        self.truncated = False
        self.last_failure: LastFailure | None = None
        self.first_ms: int | None = None
        self.last_ms: int | None = None

    def tables(self, kept: tuple[tuple[str, str], ...], datasets: Sequence[Any]) -> tuple[tuple[str, str], ...]:
        """``kept`` and the named datasets not in it yet, up to :data:`MAX_TABLES` (the fold calls this only when
        an event names more than one dataset or a new one)."""
        for d in datasets:
            if d.namespace is None or d.name is None:
                continue
            key = (d.namespace, d.name)
            if key not in kept:
                if len(kept) < MAX_TABLES:
                    kept += ((sys.intern(key[0]), key[1]),)
                else:
                    self.truncated = True
        return kept

    def failure(self, ms: int, kind: str, run_id: str, message: str | None) -> None:
        if self.last_failure is not None and moment(ms) < self.last_failure.time:
            return
        if message is not None and len(message) > MAX_MESSAGE:
            message = message[:MAX_MESSAGE] + "…"
        self.last_failure = LastFailure(moment(ms), kind, run_id, message)

    def stats(self, open_runs: Sequence[_Run], max_rate: float | None) -> JobStats:
        """The frozen statistics, with what the job's ``open_runs`` wrote so far."""
        completed, failed, aborted = self.counts
        finished = completed + failed + aborted
        rate = (failed + aborted) / finished if finished else None
        rows, size = self.rows, self.bytes
        for run in open_runs:
            rows, size = _add_written(rows, size, run.written)
        return JobStats(
            namespace=self.namespace, name=self.name, completed=completed, failed=failed, aborted=aborted,
            open=len(open_runs), failure_rate=rate,
            flagged=rate is not None and max_rate is not None and rate > max_rate,
            timed_runs=self.durations.count, duration_p50_s=self.durations.percentile(50),
            duration_p95_s=self.durations.percentile(95), rows_written=rows, bytes_written=size,
            inputs=tuple(sorted(self.inputs)), outputs=tuple(sorted(self.outputs)), tables_truncated=self.truncated,
            first_event=moment(self.first_ms) if self.first_ms is not None else None,
            last_event=moment(self.last_ms) if self.last_ms is not None else None, last_failure=self.last_failure,
        )


class _Run(Struct, gc=False):
    """An open run: what is needed to finish it. Runs and finished runs are most of what the fold allocates and
    hold no cycles: untracked by the garbage collector, they cost it nothing to scan."""

    job: _Job
    start_ms: Union[int, None]
    first_ms: int
    written: Union[_Written, None]


class _Finished(Struct, gc=False):
    job: _Job
    end_ms: int
    started: bool


class JobsAggregator:
    """Folds run events (parsed JSON, or JSON text with ``add_line``) into per-job statistics; ``report()`` any
    time. ``since`` drops older events; ``jobs`` are globs (see :func:`~iceberg_lineage.jobs.options.job_selector`).

    The latest finished runs are two dicts, generations of half of ``recent_runs``: O(1) a run, no per-entry
    bookkeeping."""

    def __init__(self, *, since: dt.datetime | None = None, jobs: Sequence[str] = (),
                 recent_runs: int = RECENT_RUNS) -> None:
        self.since = since
        # every counted time is at least EARLIEST_MS: no "since" is one comparison that never drops an event
        self._since_ms = round(since.timestamp() * 1000) if since is not None else EARLIEST_MS
        self._selected = job_selector(jobs)
        self._jobs: dict[tuple[str, str], _Job | None] = {}
        self._open: dict[str, _Run] = {}
        self._recent_half = max(1, recent_runs // 2)
        self._recent: dict[str, _Finished] = {}
        self._recent_old: dict[str, _Finished] = {}
        self._timeline = Timeline()
        self.events = self.ignored = self.duplicates = self.bad_lines = 0
        self._bad: list[BadLine] = []

    def add_line(self, source: str, line: int, raw: str | bytes | Mapping[str, Any]) -> None:
        """One line of JSON Lines (or an already parsed event); a bad one is counted with its place, not raised.
        A line msgspec cannot decode into the keys counted is read by the standard library, which decides."""
        try:
            keys = decode_keys(raw) if isinstance(raw, (str, bytes)) else None
            if keys is not None:
                self._fold(keys)
            else:
                self.add(json.loads(raw) if isinstance(raw, (str, bytes, bytearray)) else raw)
        except UnicodeDecodeError:
            self.bad(source, line, "not UTF-8")
        except json.JSONDecodeError as exc:
            if raw.strip():
                self.bad(source, line, f"not JSON ({exc.msg} at column {exc.colno})")
        except BadEvent as exc:
            self.bad(source, line, str(exc))
        except RecursionError:
            self.bad(source, line, "JSON nested too deeply")

    def add_lines(self, source: str, first: int, block: bytes) -> int:
        """Lines ``first``, ``first + 1``, ... of a file: a block of UTF-8 lines each ending with a newline (the
        file's last may lack it). The hot loop of ``jobs``: each line decoded straight into its keys and folded; a
        line of another shape goes through :meth:`add_line`. Answers the number of lines."""
        pieces = block.split(b"\n")
        last = pieces.pop()  # empty when the block ends with a newline
        fold = self._fold
        n = first - 1
        for n, line in enumerate(pieces, first):
            try:
                fold(decode_utf8(line))
            except BadEvent as exc:
                self.bad(source, n, str(exc))
            except (DecodeError, RecursionError):
                self.add_line(source, n, line + b"\n")
        if last:
            n += 1
            self.add_line(source, n, last)
        return n - first + 1

    def bad(self, source: str, line: int, reason: str) -> None:
        self.bad_lines += 1
        if len(self._bad) < MAX_BAD_LINES:
            self._bad.append(BadLine(source, line, reason))

    def add(self, event: Json) -> None:
        """Count one parsed event; raises :class:`BadEvent` for JSON that is no run event we can place."""
        if not isinstance(event, dict):
            raise BadEvent("not a JSON object")
        self._fold(keys_of_dict(event))

    def _fold(self, event: EventKeys) -> None:
        """One event's keys; those of the standard library's reading may be of any type, so each is checked. The
        hot path of ``jobs``: one dict lookup for the job, one for the kind, one for the run (the finished window
        only for a run that is not open)."""
        kind = event.eventType
        if kind is None:  # a DatasetEvent or JobEvent: no run to count
            self.ignored += 1
            return
        run = event.run
        run_id = run.runId if run is not None else None
        if not isinstance(kind, str) or not isinstance(run_id, str) or not run_id:
            raise BadEvent("run event without a string eventType and run.runId")
        job_keys = event.job
        key = (job_keys.namespace, job_keys.name) if job_keys is not None else (None, None)
        try:
            job = self._jobs[key]
        except (KeyError, TypeError):  # a new job, or no job: keys of any type are checked here
            job = self._new_job(*key)
        ms = event_ms(event.eventTime)
        if job is None or ms < self._since_ms:
            self.ignored += 1
            return
        self.events += 1
        first = job.first_ms
        if first is None:
            job.first_ms = job.last_ms = ms
        elif ms < first:
            job.first_ms = ms
        elif ms > job.last_ms:
            job.last_ms = ms
        inputs, outputs = event.inputs, event.outputs
        if inputs and (len(inputs) > 1 or (inputs[0].namespace, inputs[0].name) not in job.inputs):
            job.inputs = job.tables(job.inputs, inputs)
        written = None
        if outputs:
            out = outputs[0]
            if len(outputs) > 1 or (out.namespace, out.name) not in job.outputs:
                job.outputs = job.tables(job.outputs, outputs)
            if len(outputs) > 1 or out.outputFacets is not None and out.outputFacets.outputStatistics is not None:
                written = _written(outputs)
        code = _CODES.get(kind)
        if code is None:
            code = _CODES.get(kind.upper(), _RUNNING)
        # an open run is never in the finished window (a run leaves the open runs as it enters the window and
        # never comes back while there): the window is looked up only for a run that is not open
        if code < _START:  # a run's end, folded into its job then remembered in the window
            run = self._open.pop(run_id, None)
            started = False
            if run is None:
                if self._finished(run_id) is not None:
                    self.duplicates += 1
                    return
            else:
                if run.start_ms is not None:
                    started = True
                    job.durations.add((ms - run.start_ms) / 1000)
                if run.written:
                    written = _merge(run.written, written)
            job.counts[code] += 1
            if code:  # not COMPLETE
                job.failure(ms, _ENDS[code], run_id, _message(event))
            if written:
                job.rows, job.bytes = _add_written(job.rows, job.bytes, written)
            self._timeline.add(ms, code)
            recent = self._recent
            recent[run_id] = _Finished(job, ms, started)
            if len(recent) >= self._recent_half:
                self._recent_old, self._recent = recent, {}
            return
        run = self._open.get(run_id)
        if run is None:
            finished = self._finished(run_id)
            if finished is None:
                self._open[run_id] = _Run(job, ms if code == _START else None, ms, written)
            elif code == _START:  # the terminal event came first
                if finished.started:
                    self.duplicates += 1
                else:
                    finished.started = True
                    finished.job.durations.add((finished.end_ms - ms) / 1000)
            # a RUNNING after its end: its tables are counted, its statistics not
        elif code == _START and run.start_ms is not None:
            self.duplicates += 1
        else:
            if code == _START:
                run.start_ms = ms
            if ms < run.first_ms:
                run.first_ms = ms
            if written:
                run.written = _merge(run.written, written)

    def _finished(self, run_id: str) -> _Finished | None:
        return self._recent.get(run_id) or self._recent_old.get(run_id)

    def _new_job(self, namespace: Any, name: Any) -> _Job | None:
        if not isinstance(namespace, str) or not isinstance(name, str) or not name:
            raise BadEvent("run event without a job.namespace and job.name")
        job = self._jobs[namespace, name] = _Job(namespace, name) if self._selected(namespace, name) else None
        return job

    def report(self, *, sources: Sequence[str] = (), max_failure_rate: float | None = None) -> JobsReport:
        """The statistics so far; open runs count as ``open`` (at their first event on the timeline)."""
        open_runs: dict[_Job, list[_Run]] = {}
        timeline = self._timeline.copy()
        for run in self._open.values():
            open_runs.setdefault(run.job, []).append(run)
            timeline.add(run.first_ms, _OPEN_SLOT)
        seen = (job for job in self._jobs.values() if job is not None and job.first_ms is not None)
        jobs = sorted(seen, key=lambda j: (j.namespace, j.name))
        return JobsReport(
            jobs=tuple(job.stats(open_runs.get(job, ()), max_failure_rate) for job in jobs),
            sources=tuple(sources), events=self.events, ignored=self.ignored, duplicates=self.duplicates,
            bad_lines=self.bad_lines, bad_line_samples=tuple(self._bad), since=self.since,
            max_failure_rate=max_failure_rate, timeline=timeline.frozen(),
        )


def jobs_of_events(events: Iterable[str | bytes | Mapping[str, Any]], *, source: str = "events",
                   since: str | dt.datetime | None = None, job: str | Sequence[str] = (),
                   max_failure_rate: str | float | None = None) -> JobsReport:
    """The report of events in memory (JSON texts or parsed dicts), e.g. a notebook session's; a bad one is
    named ``source:N`` (N from 1)."""
    aggregator = JobsAggregator(since=parse_since(since), jobs=(job,) if isinstance(job, str) else job)
    for n, raw in enumerate(events, 1):
        aggregator.add_line(source, n, raw)
    return aggregator.report(sources=(source,), max_failure_rate=parse_rate(max_failure_rate))


__all__ = ["MAX_BAD_LINES", "MAX_MESSAGE", "MAX_TABLES", "RECENT_RUNS", "TERMINAL", "BadEvent", "JobsAggregator",
           "event_ms", "jobs_of_events"]
