"""Run contexts: a job that reads table A and writes table B shows up as one run with A as input and B as output.

A run is opened by ``with iceberg_lineage.run("job"):`` (or as a decorator) or, for a whole process, by
``iceberg-lineage run`` or a reporter configured with a job name (:mod:`iceberg_lineage.hook.process_run`).
Inside it, every commit and scan of an observed catalog is a RUNNING event of that run and is remembered; the
run's final event (COMPLETE, or FAIL with an ``errorMessage``) lists every table read and written once, at the
last snapshot seen. Nested runs carry a ``parent`` facet.

Which run is current: the context variable set by ``run()``; in a thread without one (threads do not inherit
context variables), the run of the whole process when there is one, else the only open outermost run.
"""
from __future__ import annotations

import contextvars
import os
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Sequence

from openlineage.client.event_v2 import InputDataset, OutputDataset, RunEvent, RunState

from iceberg_lineage.config import Settings, load_settings
from iceberg_lineage.delivery.emitter import EMITTERS, Emitter
from iceberg_lineage.hook.journal import Journal
from iceberg_lineage.lineage.runs import Failure, RunRef, dataset_key, new_run_id, now, run_event

if TYPE_CHECKING:
    from openlineage.client import OpenLineageClient


def default_job_name(argv: Sequence[str] | None = None) -> str:
    """The script's name without extension (``etl.py`` -> ``etl``); ``python`` for ``-c`` and interactive use."""
    args = sys.argv if argv is None else argv
    script = args[0] if args else ""
    if not script or script in ("-c", "-"):
        return "python"
    base = os.path.basename(script.rstrip("/"))
    return (os.path.splitext(base)[0] if base.endswith(".py") else base) or "python"


class OpenRun:
    """An open run: its identity, where its events go, and the datasets it read and wrote so far.

    ``record`` is called by the emitter's thread as events are built, so the final event, submitted last, sees
    every dataset. With a ``journal`` (the child of ``iceberg-lineage run``) datasets are also appended to a file,
    from which the parent process builds the final event once it knows the exit code.
    """

    def __init__(self, ref: RunRef, client: OpenLineageClient | None, settings: Settings,
                 journal: Journal | None = None) -> None:
        self.ref = ref
        self.client = client
        self.settings = settings
        self.journal = journal
        self.started = now()
        self._lock = threading.Lock()
        self._inputs: dict[tuple[str, str], InputDataset] = {}
        self._outputs: dict[tuple[str, str], OutputDataset] = {}

    @property
    def run_id(self) -> str:
        return self.ref.run_id

    @property
    def emitter(self) -> Emitter:
        """Where the run's events go: the emitter of its client (the default client when ``None``)."""
        return EMITTERS.emitter_for(self.client, self.settings)

    def record(self, inputs: Sequence[InputDataset] = (), outputs: Sequence[OutputDataset] = ()) -> None:
        """Remember datasets; a table seen again replaces its earlier entry (its last snapshot wins)."""
        with self._lock:
            for d in inputs:
                self._inputs[dataset_key(d)] = d
            for o in outputs:
                self._outputs[dataset_key(o)] = o
        if self.journal is not None:
            self.journal.datasets(inputs, outputs)

    def running(self, inputs: Sequence[InputDataset] = (), outputs: Sequence[OutputDataset] = ()) -> RunEvent:
        """A RUNNING event carrying these datasets, which the run also remembers."""
        self.record(inputs, outputs)
        return run_event(self.ref, RunState.RUNNING, when=now(), inputs=inputs, outputs=outputs)

    def final_event(self, failure: Failure | None) -> RunEvent:
        with self._lock:
            inputs, outputs = list(self._inputs.values()), list(self._outputs.values())
        state = RunState.FAIL if failure is not None else RunState.COMPLETE
        return run_event(self.ref, state, when=now(), inputs=inputs, outputs=outputs, failure=failure)


@dataclass(frozen=True)
class PendingRunEnd:
    """The queued end of a run: its final event is built on the emitter's thread after every item queued before
    it, so it lists every dataset they recorded."""

    run: OpenRun
    failure: Failure | None

    def events(self) -> list[RunEvent]:
        return [self.run.final_event(self.failure)]


class OpenRuns:
    """The runs that can be current: the run of this context, the process's run, and the open outermost runs."""

    def __init__(self) -> None:
        self.context: contextvars.ContextVar[OpenRun | None] = contextvars.ContextVar("iceberg_lineage_run",
                                                                                       default=None)
        #: The run of the whole process (:mod:`iceberg_lineage.hook.process_run`).
        self.process: OpenRun | None = None
        self._roots: list[OpenRun] = []

    def current(self) -> OpenRun | None:
        """The run that commits and scans on this thread belong to, if any (see the module docstring)."""
        found = self.context.get()
        if found is not None:
            return found
        if self.process is not None:
            return self.process
        roots = list(self._roots)
        return roots[0] if len(roots) == 1 else None

    @contextmanager
    def entered(self, opened: OpenRun, *, root: bool) -> Iterator[None]:
        """``opened`` is current in this context (and, as an outermost run, in threads without one) for the body."""
        token = self.context.set(opened)
        if root:
            self._roots.append(opened)
        try:
            yield
        finally:
            self.context.reset(token)
            if root:
                self._roots.remove(opened)


#: The process's open runs.
RUNS = OpenRuns()


def current_run() -> OpenRun | None:
    """The run that commits and scans on this thread belong to, if any."""
    return RUNS.current()


def _finished_ok(exc: BaseException) -> bool:
    return isinstance(exc, SystemExit) and exc.code in (0, None)


@contextmanager
def run(
    job_name: str | None = None,
    *,
    client: OpenLineageClient | None = None,
    settings: Settings | None = None,
) -> Iterator[OpenRun]:
    """Group the commits and scans of the body into one run (START ... RUNNING ... COMPLETE or FAIL).

    ``job_name`` defaults to the script's name; ``client`` to the process's default client (events of the run go
    there, whichever catalog produced them). The body's exception is re-raised untouched after FAIL is queued.
    """
    settings = settings or load_settings()
    parent = current_run()
    ref = RunRef(new_run_id(), settings.job.namespace, job_name or default_job_name(),
                 parent.ref if parent is not None else None, attached="run")
    opened = OpenRun(ref, client, settings)
    opened.emitter.submit(run_event(ref, RunState.START, when=opened.started))
    failure: Failure | None = None
    try:
        with RUNS.entered(opened, root=parent is None):
            yield opened
    except BaseException as exc:
        if not _finished_ok(exc):
            failure = Failure.of(exc)
        raise
    finally:
        opened.emitter.submit(PendingRunEnd(opened, failure))
