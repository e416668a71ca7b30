"""Runs: a job that reads table A and writes table B shows up as one run with A as input and B as output.

A run is opened by ``with iceberg_lineage.run("job"):`` (or as a decorator) or, for a whole process, by
``iceberg-lineage run``. Inside it, every commit and scan of an observed catalog is a RUNNING event of that run and
is remembered; the run's final event (COMPLETE, or FAIL with an ``errorMessage``) lists every table read and
written once, at the last snapshot seen. Nested runs carry a ``parent`` facet.

Which run is current: the context variable set by ``run()``; in a thread without one (threads do not inherit
context variables), the run of the whole process when there is one, else the only open outermost run.

Events leave through an :class:`Emitter`: one background thread per client with a bounded queue, so building and
delivering events never happens on the user's commit path. A full queue spills to the durable spool instead of
blocking or dropping; the queue is flushed at exit with a timeout.
"""
from __future__ import annotations

import atexit
import contextvars
import datetime as dt
import io
import json
import logging
import os
import queue
import signal
import sys
import threading
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run as OLRun, RunEvent, RunState
from openlineage.client.facet_v2 import error_message_run, parent_run, processing_engine_run
from openlineage.client.serde import Serde
from openlineage.client.uuid import generate_new_uuid

from iceberg_lineage._version import __version__
from iceberg_lineage.config import Settings, load_settings
from iceberg_lineage.delivery.delivery import Delivery
from iceberg_lineage.lineage.facets import build as fb

LOG = logging.getLogger("iceberg_lineage.hook")

#: Environment handed by ``iceberg-lineage run`` to the child process (read by the ``sitecustomize`` bootstrap).
RUN_ID_ENV = "ICEBERG_LINEAGE_RUN_ID"
JOB_NAME_ENV = "ICEBERG_LINEAGE_RUN_JOB"
JOURNAL_ENV = "ICEBERG_LINEAGE_RUN_JOURNAL"
#: Events waiting for the background thread; past this, events are built at once and spooled.
QUEUE_SIZE = 10_000
#: Seconds the exit flush waits for the queue to drain.
FLUSH_TIMEOUT_S = 10.0

Build = Callable[[], Sequence[RunEvent]]


def new_run_id() -> str:
    """A time-ordered UUIDv7, as OpenLineage recommends for run ids."""
    return str(generate_new_uuid())


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def default_job_name(argv: Sequence[str] | None = None) -> str:
    """The script's name without extension (``etl.py`` -> ``etl``); ``python`` for ``-c`` and interactive use."""
    args = sys.argv if argv is None else argv
    script = args[0] if args else ""
    if not script or script in ("-c", "-"):
        return "python"
    base = os.path.basename(script.rstrip("/"))
    return (os.path.splitext(base)[0] if base.endswith(".py") else base) or "python"


def log_once(what: str, exc: BaseException) -> None:
    """Lineage failures are logged once per kind, with their cause, then only at debug level."""
    key = (what, type(exc).__name__)
    if key in _LOGGED:
        LOG.debug("%s failed again: %s", what, exc, exc_info=exc)
        return
    _LOGGED.add(key)
    LOG.warning("iceberg-lineage: %s failed (%s: %s); the user's operation is unaffected", what,
                type(exc).__name__, exc, exc_info=exc)


_LOGGED: set[tuple[str, str]] = set()


def yield_gil() -> None:
    """Let a thread waiting for the GIL run now. The emitter calls it between steps, so a user's thread coming
    back from I/O waits for one step at most, not for the interpreter's 5 ms switch interval: the emitter then
    mostly runs while the user's thread is in I/O or in C code that releases the GIL."""
    time.sleep(0)


# -- identity and events of a run --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunRef:
    """Who a run is: its id, its job, and the run it is nested in."""

    run_id: str
    job_namespace: str
    job_name: str
    parent: RunRef | None = None

    @property
    def root(self) -> RunRef:
        return self if self.parent is None else self.parent.root

    def job(self) -> Job:
        return Job(namespace=self.job_namespace, name=self.job_name, facets={"jobType": fb.job_type_facet("JOB")})

    def run_facets(self) -> dict[str, Any]:
        facets: dict[str, Any] = {"processing_engine": _engine_facet()}
        if self.parent is not None:
            root = self.root
            facets["parent"] = parent_run.ParentRunFacet(
                run=parent_run.Run(runId=self.parent.run_id),
                job=parent_run.Job(namespace=self.parent.job_namespace, name=self.parent.job_name),
                root=parent_run.Root(
                    run=parent_run.RootRun(runId=root.run_id),
                    job=parent_run.RootJob(namespace=root.job_namespace, name=root.job_name),
                ),
                producer=fb.PRODUCER,
            )
        return facets


def _engine_facet() -> processing_engine_run.ProcessingEngineRunFacet:
    import pyiceberg

    return processing_engine_run.ProcessingEngineRunFacet(
        version=str(pyiceberg.__version__), name="pyiceberg", openlineageAdapterVersion=__version__,
        producer=fb.PRODUCER,
    )


@dataclass(frozen=True)
class Failure:
    """Why a run failed, as the ``errorMessage`` facet says it."""

    message: str
    stack_trace: str | None = None

    @staticmethod
    def of(exc: BaseException) -> Failure:
        return Failure(f"{type(exc).__name__}: {exc}", "".join(traceback.format_exception(exc)))

    def facet(self) -> error_message_run.ErrorMessageRunFacet:
        return error_message_run.ErrorMessageRunFacet(
            message=self.message, programmingLanguage="python", stackTrace=self.stack_trace, producer=fb.PRODUCER
        )


def run_event(
    ref: RunRef,
    state: RunState,
    *,
    when: dt.datetime,
    inputs: Sequence[InputDataset] = (),
    outputs: Sequence[OutputDataset] = (),
    failure: Failure | None = None,
) -> RunEvent:
    """START, RUNNING, COMPLETE or FAIL of a run: its job, parent, and the datasets given."""
    facets = ref.run_facets()
    if failure is not None:
        facets["errorMessage"] = failure.facet()
    return RunEvent(
        eventType=state,
        eventTime=fb.iso_time(when),
        run=OLRun(runId=ref.run_id, facets=facets),
        job=ref.job(),
        inputs=list(inputs),
        outputs=list(outputs),
        producer=fb.PRODUCER,
    )


def dataset_key(dataset: InputDataset | OutputDataset) -> tuple[str, str]:
    return dataset.namespace, dataset.name


# -- delivery on a background thread -----------------------------------------------------------------------------------


class Emitter:
    """Builds and delivers events in submission order on one daemon thread; ``submit`` never blocks.

    When the queue is full the events are built on the caller's thread and written straight to the delivery's
    spool (``iceberg-lineage replay`` sends them), so none is ever dropped and the caller never waits on the network.
    """

    def __init__(self, delivery: Delivery, max_queue: int = QUEUE_SIZE) -> None:
        self.delivery = delivery
        self._max_queue = max_queue
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._pending = 0
        self._pid = -1
        self._queue: queue.Queue[Build] = queue.Queue(max_queue)

    def _ensure_worker(self) -> None:
        """Start the thread, again in a forked child (threads do not survive ``fork``)."""
        if self._pid == os.getpid():
            return
        with self._lock:
            if self._pid == os.getpid():
                return
            self._queue = queue.Queue(self._max_queue)
            self._pending = 0
            threading.Thread(target=self._work, name="iceberg-lineage-emitter", daemon=True).start()
            self._pid = os.getpid()

    def submit(self, build: Build) -> None:
        self._ensure_worker()
        with self._lock:
            self._pending += 1
        try:
            self._queue.put_nowait(build)
        except queue.Full:
            self._done()
            self._run(build, spill=True)

    def _work(self) -> None:
        work = self._queue
        while True:
            build = work.get()
            yield_gil()
            try:
                self._run(build, spill=False)
            finally:
                self._done()

    def _done(self) -> None:
        with self._lock:
            self._pending -= 1
            if self._pending == 0:
                self._idle.notify_all()

    def _run(self, build: Build, *, spill: bool) -> None:
        try:
            events = build()
        except Exception as exc:  # noqa: BLE001 - lineage never breaks the user's program
            log_once("building a lineage event", exc)
            return
        for event in events:
            if not spill:
                yield_gil()
            try:
                delivered = self._spill(event) if spill else self.delivery.emit(event).status != "failed"
            except Exception as exc:  # noqa: BLE001
                log_once("delivering a lineage event", exc)
                continue
            if not delivered:
                log_once("keeping a lineage event", RuntimeError("not delivered and the spool is full (spool.max_bytes)"))

    def _spill(self, event: RunEvent) -> bool:
        """Store an event for replay without sending it (the queue is full)."""
        return self.delivery.spool(event).status != "failed"

    def flush(self, timeout: float | None = FLUSH_TIMEOUT_S) -> bool:
        """Wait until every submitted event was delivered or spooled; False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def spill_queued(self) -> int:
        """Spool every event still queued (at exit, when the flush timed out), so none is lost; returns how many."""
        spilled = 0
        while True:
            try:
                build = self._queue.get_nowait()
            except queue.Empty:
                return spilled
            try:
                self._run(build, spill=True)
            finally:
                self._done()
            spilled += 1

    def close(self) -> None:
        """Release the delivery's spool (the thread idles until the process exits)."""
        self.delivery.close()


_EMITTERS: dict[int, tuple[Any, Emitter]] = {}
_EMITTERS_LOCK = threading.Lock()
_DEFAULT_CLIENT: list[Any] = []
#: Set in the child of ``iceberg-lineage run``: the parent already said where events go.
_QUIET_DEFAULT_CLIENT: list[bool] = []


def default_client() -> Any:
    """The process's client from :func:`iceberg_lineage.delivery.client.make_client`, made once, on first use."""
    with _EMITTERS_LOCK:
        if not _DEFAULT_CLIENT:
            from iceberg_lineage.delivery.client import make_client

            _DEFAULT_CLIENT.append(make_client(stderr=io.StringIO() if _QUIET_DEFAULT_CLIENT else None))
        return _DEFAULT_CLIENT[0]


def emitter_for(client: Any | None, settings: Settings) -> Emitter:
    """The one emitter of a client (the default client when ``None``); events of one client stay in order."""
    client = default_client() if client is None else client
    with _EMITTERS_LOCK:
        entry = _EMITTERS.get(id(client))
        if entry is None:
            entry = _EMITTERS[id(client)] = (client, Emitter(Delivery(client, settings)))
        return entry[1]


def flush_all(timeout: float = FLUSH_TIMEOUT_S) -> bool:
    """Flush every emitter (at exit); what is still queued after ``timeout`` goes to the spool. False if the
    transport did not take everything in time."""
    with _EMITTERS_LOCK:
        emitters = [e for _, e in _EMITTERS.values()]
    deadline = now() + dt.timedelta(seconds=timeout)
    drained = True
    for emitter in emitters:
        left = max(0.0, (deadline - now()).total_seconds())
        if not emitter.flush(left):
            drained = False
            LOG.warning("iceberg-lineage: the transport is slow; %d queued lineage events spooled after %.0fs "
                        "(send them with `iceberg-lineage replay`)", emitter.spill_queued(), timeout)
    return drained


atexit.register(flush_all)


def shutdown(timeout: float = FLUSH_TIMEOUT_S) -> bool:
    """Flush every emitter, close their deliveries and forget them and the default client (a later event starts
    afresh, e.g. after the working directory changed); False if events were still queued."""
    drained = flush_all(timeout)
    with _EMITTERS_LOCK:
        emitters = [e for _, e in _EMITTERS.values()]
        _EMITTERS.clear()
        _DEFAULT_CLIENT.clear()
    for emitter in emitters:
        emitter.close()
    return drained


# -- open runs and the current run -------------------------------------------------------------------------------------


class Run:
    """An open run: its identity, where its events go, and the datasets it read and wrote so far.

    ``record`` is called by the emitter's thread as events are built, so the final event, submitted last, sees
    every dataset. With a ``journal`` (the child of ``iceberg-lineage run``) datasets are also appended to a file,
    from which the parent process builds the final event once it knows the exit code.
    """

    def __init__(self, ref: RunRef, client: Any, settings: Settings, journal: Journal | None = None) -> None:
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
        return emitter_for(self.client, self.settings)

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


_CURRENT: contextvars.ContextVar[Run | None] = contextvars.ContextVar("iceberg_lineage_run", default=None)
_ROOTS: list[Run] = []
_PROCESS_RUN: list[Run] = []


def current_run() -> Run | None:
    """The run that commits and scans on this thread belong to, if any (see the module docstring)."""
    found = _CURRENT.get()
    if found is not None:
        return found
    if _PROCESS_RUN:
        return _PROCESS_RUN[0]
    roots = list(_ROOTS)
    return roots[0] if len(roots) == 1 else None


def _finished_ok(exc: BaseException) -> bool:
    return isinstance(exc, SystemExit) and exc.code in (0, None)


@contextmanager
def run(
    job_name: str | None = None,
    *,
    client: Any | None = None,
    settings: Settings | None = None,
) -> Iterator[Run]:
    """Group the commits and scans of the body into one run (START ... RUNNING ... COMPLETE or FAIL).

    ``job_name`` defaults to the script's name; ``client`` to the process's default client (events of the run go
    there, whichever catalog produced them). The body's exception is re-raised untouched after FAIL is queued.
    """
    settings = settings or load_settings()
    parent = current_run()
    ref = RunRef(new_run_id(), settings.job_namespace, job_name or default_job_name(),
                 parent.ref if parent is not None else None)
    opened = Run(ref, client, settings)
    opened.emitter.submit(lambda: [run_event(ref, RunState.START, when=opened.started)])
    token = _CURRENT.set(opened)
    if parent is None:
        _ROOTS.append(opened)
    failure: Failure | None = None
    try:
        yield opened
    except BaseException as exc:
        if not _finished_ok(exc):
            failure = Failure.of(exc)
        raise
    finally:
        _CURRENT.reset(token)
        if parent is None:
            _ROOTS.remove(opened)
        opened.emitter.submit(lambda: [opened.final_event(failure)])


# -- the process run of ``iceberg-lineage run`` ------------------------------------------------------------------------


class Journal:
    """Append-only JSON Lines shared by the child (writer, possibly several processes) and the parent (reader).

    One line per dataset as it was emitted, and one per uncaught exception, tagged with the writer's pid.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def _append(self, entry: Mapping[str, Any]) -> None:
        line = json.dumps({**entry, "pid": os.getpid()}, sort_keys=True, default=str) + "\n"
        with self._lock, open(self.path, "a", encoding="utf-8") as out:
            out.write(line)

    def datasets(self, inputs: Sequence[InputDataset], outputs: Sequence[OutputDataset]) -> None:
        for role, items in (("input", inputs), ("output", outputs)):
            for d in items:
                self._append({"kind": role, "dataset": Serde.to_dict(d)})

    def failure(self, failure: Failure) -> None:
        self._append({"kind": "error", "message": failure.message, "stackTrace": failure.stack_trace})


@dataclass(frozen=True)
class JournalState:
    """What a child process reported: datasets read and written (last entry per table wins) and its error."""

    inputs: tuple[InputDataset, ...] = ()
    outputs: tuple[OutputDataset, ...] = ()
    failures: Mapping[int, Failure] = field(default_factory=dict)


def read_journal(path: str | Path) -> JournalState:
    """Parse a journal; a torn last line (a killed child) is ignored."""
    inputs: dict[tuple[str, str], InputDataset] = {}
    outputs: dict[tuple[str, str], OutputDataset] = {}
    failures: dict[int, Failure] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    for line in lines:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if entry.get("kind") == "error":
            failures[int(entry["pid"])] = Failure(entry["message"], entry.get("stackTrace"))
            continue
        d = entry["dataset"]
        if entry["kind"] == "input":
            ds = InputDataset(namespace=d["namespace"], name=d["name"], facets=d.get("facets") or {},
                              inputFacets=d.get("inputFacets") or {})
            inputs[dataset_key(ds)] = ds
        else:
            out = OutputDataset(namespace=d["namespace"], name=d["name"], facets=d.get("facets") or {},
                                outputFacets=d.get("outputFacets") or {})
            outputs[dataset_key(out)] = out
    return JournalState(tuple(inputs.values()), tuple(outputs.values()), failures)


def attach_process_run(env: Mapping[str, str]) -> Run | None:
    """In the child of ``iceberg-lineage run``: make the parent's run current for the whole process.

    The parent emits START and the final event; this process emits RUNNING events, journals its datasets and its
    uncaught exception, and flushes its queue at exit so the parent's final event comes last. Nothing is loaded
    or configured before the first event: the program may still set its environment.
    """
    run_id, job_name, journal = env.get(RUN_ID_ENV), env.get(JOB_NAME_ENV), env.get(JOURNAL_ENV)
    if not (run_id and job_name and journal):
        return None
    settings = load_settings()
    _QUIET_DEFAULT_CLIENT[:] = [True]
    process_run = Run(RunRef(run_id, settings.job_namespace, job_name), None, settings, Journal(journal))
    _PROCESS_RUN[:] = [process_run]
    previous_hook = sys.excepthook

    def excepthook(kind: type[BaseException], value: BaseException, tb: Any) -> None:
        try:
            process_run.journal.failure(  # type: ignore[union-attr]
                Failure(f"{kind.__name__}: {value}", "".join(traceback.format_exception(kind, value, tb)))
            )
        finally:
            previous_hook(kind, value, tb)

    sys.excepthook = excepthook
    return process_run


def command_job_name(argv: Sequence[str]) -> str:
    """The job name of a command: the script of ``python [opts] script.py``, the module of ``python -m mod``,
    else the program's name."""
    program = os.path.basename(argv[0]) if argv else ""
    if not program.startswith("python"):
        return default_job_name(argv)
    args = list(argv[1:])
    while args:
        arg = args.pop(0)
        if arg == "-m" and args:
            return args[0]
        if arg.startswith("-m") and len(arg) > 2:
            return arg[2:]
        if arg == "-c" or arg.startswith("-c"):
            return "python"
        if arg in ("-W", "-X"):
            args = args[1:]
        elif not arg.startswith("-"):
            return default_job_name([arg])
    return "python"


def bootstrap_dir() -> str:
    """The directory holding the ``sitecustomize`` that instruments the child (put first on its PYTHONPATH)."""
    return str(Path(__file__).parent.parent / "_bootstrap")


def _exit_failure(returncode: int) -> Failure:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = str(-returncode)
        return Failure(f"killed by signal {name}")
    return Failure(f"exited with code {returncode}")


def run_process(
    argv: Sequence[str],
    *,
    job_name: str | None = None,
    settings: Settings | None = None,
) -> int:
    """Run a command as one run: START, the child's RUNNING events, then COMPLETE (exit code 0) or FAIL.

    The child inherits stdin, stdout and stderr; its Pythons are instrumented by the bootstrap ``sitecustomize``
    (chaining any existing one). This process emits the final event once it knows the exit code, so a child
    killed without running its exit handlers still gets its FAIL; the datasets come from the child's journal.
    Both processes send events where :func:`iceberg_lineage.delivery.client.make_client` says (configuration and
    environment). Returns the exit code to pass on (128 + N for a child killed by signal N, as shells do).
    """
    import subprocess
    import tempfile

    settings = settings or load_settings()
    delivery = Delivery(default_client(), settings)
    ref = RunRef(new_run_id(), settings.job_namespace, job_name or command_job_name(argv))
    delivery.emit(run_event(ref, RunState.START, when=now()))
    with tempfile.TemporaryDirectory(prefix="iceberg-lineage-run-") as tmp:
        journal = Path(tmp) / "journal.jsonl"
        env = dict(os.environ)
        env.update({
            RUN_ID_ENV: ref.run_id,
            JOB_NAME_ENV: ref.job_name,
            JOURNAL_ENV: str(journal),
            "PYTHONPATH": os.pathsep.join(p for p in (bootstrap_dir(), env.get("PYTHONPATH")) if p),
        })
        try:
            child = subprocess.Popen(list(argv), env=env)
        except OSError as exc:
            delivery.emit(run_event(ref, RunState.FAIL, when=now(), failure=Failure.of(exc)))
            raise
        returncode = _wait_forwarding_signals(child)
        state = read_journal(journal)
    failure = None if returncode == 0 else state.failures.get(child.pid) or _exit_failure(returncode)
    state_name = RunState.COMPLETE if failure is None else RunState.FAIL
    delivery.emit(run_event(ref, state_name, when=now(), inputs=state.inputs, outputs=state.outputs, failure=failure))
    delivery.close()
    return returncode if returncode >= 0 else 128 - returncode


def _wait_forwarding_signals(child: Any) -> int:
    """Wait for the child; SIGTERM and SIGHUP are passed on, SIGINT is left to the terminal (it reaches the
    child through the process group), so the child decides how to stop and this process reports it."""
    forwarded = (signal.SIGTERM, signal.SIGHUP)
    previous = {sig: signal.signal(sig, lambda signum, _frame: child.send_signal(signum)) for sig in forwarded}
    previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return int(child.wait())
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
