"""The scan's own run: job ``<job namespace>.scan`` (e.g. ``iceberg-lineage.scan``), START when a scan begins,
COMPLETE or FAIL when it ends, carrying the scan's summary (:mod:`~iceberg_lineage.lineage.facets.scan`), so that a
lineage server and ``iceberg-lineage jobs`` can report on the scanner itself.

Unlike the per-snapshot runs, a scan is not deterministic: its runId is a fresh UUIDv7 each time. It is nobody's
parent (the per-snapshot runs keep their own parents) and has none: its job type is ``JOB``, a root. It lists no
dataset: the tables are its children's. Pure builders; the scan driver sends them through its sink.
"""
from __future__ import annotations

import datetime as dt
from typing import Any, Mapping

from openlineage.client.event_v2 import RunEvent, RunState

from iceberg_lineage.config import Settings
from iceberg_lineage.lineage.facets.scan import SCAN_KEY, scan_summary_facet
from iceberg_lineage.lineage.runs import Failure, RunRef, new_run_id, run_event

#: The scanner's job name after the job namespace: ``<job namespace>.scan``.
SCANNER_JOB = "scan"


def scanner_run(settings: Settings) -> RunRef:
    """A new run of the scanner's job, in the configured job namespace (as every other job of ours)."""
    return RunRef(new_run_id(), settings.job.namespace, f"{settings.job.namespace}.{SCANNER_JOB}")


def scanner_start_event(ref: RunRef, when: dt.datetime) -> RunEvent:
    return run_event(ref, RunState.START, when=when)


def scanner_end_event(ref: RunRef, when: dt.datetime, summary: Mapping[str, Any] | None = None, *,
                      error: str | None = None) -> RunEvent:
    """The terminal event, decided by the scan's exit code (``summary["exit_code"]``, which the summary facet
    carries as ``exitCode``): COMPLETE for 0, and for 3 (the work was done; events wait in the spool for
    ``replay``); FAIL for anything else (a table, namespace or delivery failed, or the server rejected an event),
    its ``errorMessage`` counting the errors. ``error``: the scan stopped with that exception before it had a
    summary (FAIL)."""
    failed = error is not None or summary is None or summary["exit_code"] not in (0, 3)
    message = error
    if message is None and failed and summary is not None:
        message = (f"scan exit code {summary['exit_code']}: {len(summary['failures'])} error(s), "
                   f"{summary['rejected_events']} event(s) rejected")
    event = run_event(ref, RunState.FAIL if failed else RunState.COMPLETE, when=when,
                      failure=Failure(message) if message else None)
    if summary is not None:
        event.run.facets[SCAN_KEY] = scan_summary_facet(summary)
    return event
