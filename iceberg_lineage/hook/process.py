"""``iceberg-lineage run -- command``: the command's Pythons, unmodified, report as one run.

The parent (:func:`run_process`) emits START (on a thread of its own, while the command starts: a user's job never
waits on lineage) and, once it knows the exit code, COMPLETE or FAIL; it puts the
bootstrap ``sitecustomize`` first on the child's PYTHONPATH, which calls :func:`bootstrap` in every Python started
under it. The child joins the parent's run (:func:`attach_process_run`), emits RUNNING events and journals its
datasets and uncaught exception for the parent.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from types import ModuleType
from typing import Callable, Mapping, Sequence

from openlineage.client.event_v2 import RunState

from iceberg_lineage.config import Settings, load_settings
from iceberg_lineage.delivery.delivery import Delivery
from iceberg_lineage.delivery.emitter import EMITTERS
from iceberg_lineage.hook.context import OpenRun, default_job_name
from iceberg_lineage.hook.journal import Journal, read_journal
from iceberg_lineage.hook.process_run import adopt
from iceberg_lineage.hook.reporter import observe_all
from iceberg_lineage.lineage.runs import Failure, RunRef, new_run_id, now, run_event

#: Environment handed by ``iceberg-lineage run`` to the child process (read by the ``sitecustomize`` bootstrap).
RUN_ID_ENV = "ICEBERG_LINEAGE_RUN_ID"
JOB_NAME_ENV = "ICEBERG_LINEAGE_RUN_JOB"
JOURNAL_ENV = "ICEBERG_LINEAGE_RUN_JOURNAL"


# -- the child ---------------------------------------------------------------------------------------------------------


def attach_process_run(env: Mapping[str, str]) -> OpenRun | None:
    """In the child of ``iceberg-lineage run``: make the parent's run current for the whole process.

    The parent emits START and the final event; this process emits RUNNING events, journals its datasets and its
    uncaught exception, and flushes its queue at exit so the parent's final event comes last. Nothing is loaded
    or configured before the first event: the program may still set its environment.
    """
    run_id, job_name, journal = env.get(RUN_ID_ENV), env.get(JOB_NAME_ENV), env.get(JOURNAL_ENV)
    if not (run_id and job_name and journal):
        return None
    settings = load_settings()
    EMITTERS.quiet = True
    written = Journal(journal)
    ref = RunRef(run_id, settings.job.namespace, job_name, attached="process")
    return adopt(OpenRun(ref, None, settings, written), written.failure)


def bootstrap(env: Mapping[str, str]) -> None:
    """The child side of ``iceberg-lineage run``: join the parent's run, and observe every catalog constructed once
    the program imports ``pyiceberg.catalog`` (not before: PyIceberg reads its configuration at that import)."""
    if attach_process_run(env) is not None:
        after_import("pyiceberg.catalog", observe_all)


def after_import(module: str, then: Callable[[], None]) -> None:
    """Call ``then`` right after ``module`` is first imported (now, if it already is); its errors are reported on
    stderr and never fail the import."""

    def call() -> None:
        try:
            then()
        except Exception as exc:  # noqa: BLE001 - the user's program runs regardless
            sys.stderr.write(f"iceberg-lineage: not instrumenting PyIceberg ({type(exc).__name__}: {exc})\n")

    if module in sys.modules:
        call()
        return

    class Watch(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname: str, path: Sequence[str] | None,
                      target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
            if fullname != module:
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(fullname)
            if spec is None or spec.loader is None:
                return spec
            execute = spec.loader.exec_module

            def exec_module(target_module: ModuleType) -> None:
                execute(target_module)
                call()

            spec.loader.exec_module = exec_module  # type: ignore[method-assign]
            return spec

    sys.meta_path.insert(0, Watch())


# -- the parent --------------------------------------------------------------------------------------------------------


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
    settings = settings or load_settings()
    delivery = Delivery(EMITTERS.default_client(), settings)
    ref = RunRef(new_run_id(), settings.job.namespace, job_name or command_job_name(argv), attached="process")
    start = run_event(ref, RunState.START, when=now())
    starting = threading.Thread(target=delivery.emit, args=(start,), name="iceberg-lineage-start", daemon=True)
    starting.start()  # the command starts now, whatever the endpoint does; the final event waits for the START
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
            starting.join()
            delivery.emit(run_event(ref, RunState.FAIL, when=now(), failure=Failure.of(exc)))
            raise
        returncode = _wait_forwarding_signals(child)
        state = read_journal(journal)
    starting.join()  # bounded by delivery.request_deadline_s; a START not sent is spooled, the final event behind it
    failure = None if returncode == 0 else state.failures.get(child.pid) or _exit_failure(returncode)
    state_name = RunState.COMPLETE if failure is None else RunState.FAIL
    delivery.emit(run_event(ref, state_name, when=now(), inputs=state.inputs, outputs=state.outputs, failure=failure))
    delivery.close()
    return returncode if returncode >= 0 else 128 - returncode


def _wait_forwarding_signals(child: subprocess.Popen[bytes]) -> int:
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
