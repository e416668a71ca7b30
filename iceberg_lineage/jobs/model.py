"""The ``jobs`` report as frozen values: per-job run statistics, the runs over time, and what could not be read.

Unknown stays unknown: a job whose events carry no ``outputStatistics`` has ``rows_written = None``, never 0; a job
without a finished run has no failure rate. The JSON form (``to_json``) is the CLI's ``--format json``.
"""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator

from iceberg_lineage.jobs.html import report_html
from iceberg_lineage.jobs.plots import runs_plot
from iceberg_lineage.jobs.text import STATES, iso

if TYPE_CHECKING:
    from matplotlib.figure import Figure


@dataclass(frozen=True)
class LastFailure:
    """The latest FAIL or ABORT of a job (by event time) and its ``errorMessage`` facet's message, if any."""

    time: dt.datetime
    state: str
    run_id: str
    message: str | None

    def to_json(self) -> dict[str, Any]:
        return {"time": iso(self.time), "state": self.state, "run_id": self.run_id, "message": self.message}


@dataclass(frozen=True, slots=True)
class JobStats:
    """One job's runs (by their terminal event), failure rate, durations and what it read and wrote."""

    namespace: str
    name: str
    completed: int
    failed: int
    aborted: int
    open: int
    #: (failed + aborted) / (completed + failed + aborted); ``None`` before a run finished.
    failure_rate: float | None
    #: Above the report's ``max_failure_rate``.
    flagged: bool
    #: Runs whose START and terminal event were both seen: the durations behind the percentiles.
    timed_runs: int
    duration_p50_s: float | None
    duration_p95_s: float | None
    rows_written: int | None
    bytes_written: int | None
    inputs: tuple[tuple[str, str], ...]
    outputs: tuple[tuple[str, str], ...]
    #: More distinct tables were seen than are kept per job (``aggregate.MAX_TABLES``).
    tables_truncated: bool
    first_event: dt.datetime | None
    last_event: dt.datetime | None
    last_failure: LastFailure | None

    @property
    def runs(self) -> int:
        return self.completed + self.failed + self.aborted + self.open

    @property
    def label(self) -> str:
        return f"{self.namespace}/{self.name}"

    def to_json(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace, "name": self.name, "runs": self.runs,
            "completed": self.completed, "failed": self.failed, "aborted": self.aborted, "open": self.open,
            "failure_rate": self.failure_rate, "flagged": self.flagged, "timed_runs": self.timed_runs,
            "duration_p50_s": self.duration_p50_s, "duration_p95_s": self.duration_p95_s,
            "rows_written": self.rows_written, "bytes_written": self.bytes_written,
            "inputs": [{"namespace": ns, "name": n} for ns, n in self.inputs],
            "outputs": [{"namespace": ns, "name": n} for ns, n in self.outputs],
            "tables_truncated": self.tables_truncated,
            "first_event": iso(self.first_event), "last_event": iso(self.last_event),
            "last_failure": self.last_failure.to_json() if self.last_failure else None,
        }


@dataclass(frozen=True)
class BadLine:
    """A line that is no OpenLineage run event (not JSON, no runId, ...): skipped, counted and named."""

    file: str
    line: int
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "reason": self.reason}


@dataclass(frozen=True)
class TimeBin:
    """Runs in one interval, by state: finished ones at their terminal event, open ones at their first event."""

    start: dt.datetime
    width_s: float
    completed: int
    failed: int
    aborted: int
    open: int

    def to_json(self) -> dict[str, Any]:
        return {"start": iso(self.start), "width_s": self.width_s, **{s: getattr(self, s) for s in STATES}}


@dataclass(frozen=True)
class JobsReport:
    """Every job seen in the events read, sorted by namespace and name, and how the reading went."""

    jobs: tuple[JobStats, ...]
    sources: tuple[str, ...]
    #: Run events counted (after ``--since`` and ``--job``).
    events: int
    #: Dataset and job events, run events before ``since`` or of other jobs.
    ignored: int
    #: Events dropped because their runId and eventType were already seen (START, COMPLETE, FAIL, ABORT).
    duplicates: int
    bad_lines: int
    #: The first bad lines (``aggregate.MAX_BAD_LINES`` at most); ``bad_lines`` counts them all.
    bad_line_samples: tuple[BadLine, ...]
    since: dt.datetime | None
    max_failure_rate: float | None
    timeline: tuple[TimeBin, ...]

    @property
    def flagged(self) -> tuple[JobStats, ...]:
        return tuple(job for job in self.jobs if job.flagged)

    def _head(self) -> dict[str, Any]:
        return {
            "sources": list(self.sources), "since": iso(self.since), "max_failure_rate": self.max_failure_rate,
            "events": self.events, "ignored": self.ignored, "duplicates": self.duplicates,
            "bad_lines": self.bad_lines, "bad_line_samples": [b.to_json() for b in self.bad_line_samples],
            "flagged": [job.label for job in self.flagged],
        }

    def to_json(self) -> dict[str, Any]:
        return {**self._head(), "jobs": [job.to_json() for job in self.jobs],
                "timeline": [b.to_json() for b in self.timeline]}

    def json_chunks(self) -> Iterator[str]:
        """The text of ``json.dumps(self.to_json())``, a job at a time: 100,000 jobs as one dict, then as one
        string, more than doubled the command's peak memory."""
        yield json.dumps(self._head())[:-1] + ', "jobs": ['
        for i, job in enumerate(self.jobs):
            yield (", " if i else "") + json.dumps(job.to_json())
        yield '], "timeline": ' + json.dumps([b.to_json() for b in self.timeline]) + "}"

    def _repr_html_(self) -> str:
        return report_html(self)

    def plot(self) -> Figure:
        """Runs over time by state (stacked bars); a matplotlib Figure."""
        return runs_plot(self)

    def __repr__(self) -> str:
        flagged = f", {len(self.flagged)} flagged" if self.max_failure_rate is not None else ""
        return f"<JobsReport: {len(self.jobs)} job(s), {self.events} event(s){flagged}>"


__all__ = ["BadLine", "JobStats", "JobsReport", "LastFailure", "TimeBin"]
