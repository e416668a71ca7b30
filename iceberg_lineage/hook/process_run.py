"""The run of a whole process: every commit and scan of the process belongs to it, whatever the thread.

Two ways make one. The child of ``iceberg-lineage run`` joins its parent's run (:mod:`iceberg_lineage.hook.process`:
the parent sends START and the final event). A catalog whose reporter configuration names a job
(``metrics-reporter.openlineage.job-name`` beside ``metrics-reporter-impl: openlineage``) opens one here, in the
process itself (:func:`configured_run`): START at its first commit or scan, COMPLETE at exit, or FAIL when an
uncaught exception ends the program.
"""
from __future__ import annotations

import atexit
import sys
import threading
from types import TracebackType
from typing import TYPE_CHECKING, Callable

from openlineage.client.event_v2 import RunState

from iceberg_lineage.config import Settings
from iceberg_lineage.hook.context import RUNS, OpenRun, PendingRunEnd
from iceberg_lineage.lineage.runs import Failure, RunRef, new_run_id, run_event

if TYPE_CHECKING:
    from openlineage.client import OpenLineageClient

_OPENING = threading.Lock()


def adopt(opened: OpenRun, on_failure: Callable[[Failure], None]) -> OpenRun:
    """Make ``opened`` the process's run; an uncaught exception is handed to ``on_failure`` before the previous
    ``sys.excepthook`` (the user's, or Python's, which prints the traceback) runs as before."""
    RUNS.process = opened
    previous = sys.excepthook

    def excepthook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        try:
            on_failure(Failure.of(value))
        finally:
            previous(kind, value, tb)

    sys.excepthook = excepthook
    return opened


def configured_run(job_name: str, client: OpenLineageClient | None, settings: Settings) -> OpenRun:
    """The process's run, opened on the first call (which sends its START) under ``job_name``; later calls, from
    any catalog or thread, get the same run, whatever job they name.

    Its final event is queued at exit, after everything the program queued (the exit handler is registered after
    the emitter's flush, so it runs before it): COMPLETE, or FAIL with the uncaught exception. A ``sys.exit(n)`` is
    not an exception Python reports, nor is a killed process: ``iceberg-lineage run`` sees those.
    """
    with _OPENING:
        if RUNS.process is not None:
            return RUNS.process
        opened = OpenRun(RunRef(new_run_id(), settings.job.namespace, job_name, attached="configuration"),
                         client, settings)
        # the emitter is made first, so the exit flush it registers runs after the handler registered below
        opened.emitter.submit(run_event(opened.ref, RunState.START, when=opened.started))
        failures: list[Failure] = []
        adopt(opened, failures.append)
        atexit.register(lambda: opened.emitter.submit(PendingRunEnd(opened, failures[-1] if failures else None)))
        return opened
