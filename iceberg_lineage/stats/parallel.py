"""Where work runs: one executor factory per process for the walker's pools, and the executor for per-table tasks.

The scanner only submits picklable task descriptions and gets back plain data, so the same code runs on threads,
processes or Dask (:func:`open_executor`). Manifests of one table fan out on a second, bounded thread pool per
process (:func:`manifest_pool`), never on the pool the table itself runs on: a table task waiting on manifest tasks
queued behind other table tasks would deadlock a shared pool. So the factory is one owner, not one pool: it hands
out a pool per purpose, each made on first use, and forgets them all in a forked child, where their threads and
worker processes do not exist (as PyIceberg's ``ExecutorFactory`` does).
"""
from __future__ import annotations

import atexit
import concurrent.futures as cf
import contextlib
import gc
import multiprocessing
import os
import queue
import threading
from typing import Any, Callable, Iterator, Literal, Sequence

from iceberg_lineage.errors import ConfigError
from iceberg_lineage.extras import require

ExecutorKind = Literal["threads", "processes", "dask"]
EXECUTOR_KINDS: tuple[str, ...] = ("threads", "processes", "dask")

#: Threads per process that read manifests of one table; enough to hide object-store latency, small enough for RAM.
MANIFEST_THREADS = min(8, 2 * (os.cpu_count() or 1))


class DaemonThreads(cf.Executor):
    """A thread pool the interpreter never waits for, whose stuck tasks can be abandoned.

    ``ThreadPoolExecutor`` joins its threads at exit (``threading._register_atexit``): one read blocked forever
    keeps the process alive forever, and its stuck thread holds a worker slot. Here the threads are daemons, never
    joined at exit, and :meth:`abandon` hands a running task's slot to a new thread; the stuck one ends whenever its
    task returns, if ever. A thread cannot be cancelled: it can only stop being waited for.
    """

    def __init__(self, workers: int, name: str) -> None:
        self._workers = workers
        self._name = name
        self._queue: queue.SimpleQueue[tuple[cf.Future, Callable[..., Any], tuple, dict] | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._counted: set[threading.Thread] = set()  # the threads holding one of the ``workers`` slots
        self._running: dict[cf.Future, threading.Thread] = {}
        self._started = 0
        self._shutdown = False

    def submit(self, fn: Callable[..., Any], /, *args: object, **kwargs: object) -> cf.Future:
        future: cf.Future = cf.Future()
        with self._lock:
            if self._shutdown:
                raise RuntimeError("cannot schedule new futures after shutdown")
            self._queue.put((future, fn, args, kwargs))
            if len(self._counted) < self._workers:
                self._start()
        return future

    def _start(self) -> None:
        self._started += 1
        thread = threading.Thread(target=self._work, name=f"{self._name}_{self._started}", daemon=True)
        self._counted.add(thread)
        thread.start()

    def _work(self) -> None:
        me = threading.current_thread()
        while (item := self._queue.get()) is not None:
            future, fn, args, kwargs = item
            del item
            with self._lock:
                if not future.set_running_or_notify_cancel():
                    continue
                self._running[future] = me
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - it belongs to whoever waits on the future
                future.set_exception(exc)
            else:
                future.set_result(result)
            with self._lock:
                self._running.pop(future, None)
                if me not in self._counted:  # given up on: its slot went to another thread
                    return
            del future, fn, args, kwargs

    def abandon(self, future: cf.Future) -> bool:
        """Stop waiting for a task: cancel it if it has not started, else give its thread's slot to a new thread.
        False when it had already finished."""
        with self._lock:
            if future.cancel():
                return True
            thread = self._running.pop(future, None)
            if thread is None:
                return False
            self._counted.discard(thread)
            if not self._shutdown:
                self._start()
        return True

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop the threads once the queue is done (at once with ``cancel_futures``); ``wait`` joins only the
        threads that were not abandoned."""
        with self._lock:
            self._shutdown = True
            if cancel_futures:
                while True:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if item is not None:
                        item[0].cancel()
            threads = list(self._counted)
            for _ in threads:
                self._queue.put(None)
        if wait:
            for thread in threads:
                thread.join()


class ExecutorFactory:
    """This process's long-lived pools by purpose: manifest reads (threads) and large-manifest splits (processes)."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        """Forget every pool (after ``fork``: the child has none of the parent's threads, so no lock is held)."""
        self._lock = threading.Lock()
        self._threads: DaemonThreads | None = None
        self._processes: cf.ProcessPoolExecutor | None = None

    def manifest_threads(self) -> DaemonThreads:
        """The bounded pool for per-manifest reads (daemon threads: a read stuck forever cannot hold the process)."""
        with self._lock:
            if self._threads is None:
                self._threads = DaemonThreads(MANIFEST_THREADS, "iceberg-lineage-manifest")
            return self._threads

    def split_processes(self) -> cf.ProcessPoolExecutor:
        """Worker processes that decode block ranges of large local manifests (decoding holds the GIL); "spawn" is
        safe beside threads."""
        with self._lock:
            if self._processes is None:
                self._processes = cf.ProcessPoolExecutor(
                    os.cpu_count() or 1, mp_context=multiprocessing.get_context("spawn")
                )
                atexit.register(self.shutdown)  # before interpreter teardown, or its callbacks fail noisily
            return self._processes

    def shutdown(self) -> None:
        """Shut down this process's pools; the next request makes new ones."""
        with self._lock:
            threads, processes = self._threads, self._processes
            self._threads = self._processes = None
        if threads is not None:
            threads.shutdown(wait=False)  # daemons: a stuck read must not hold the exit
        if processes is not None:
            processes.shutdown()


#: The executor factory of this process.
EXECUTORS = ExecutorFactory()
if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=EXECUTORS._reset)


def manifest_pool() -> DaemonThreads:
    """This process's bounded pool for per-manifest reads (lives as long as the process)."""
    return EXECUTORS.manifest_threads()


def default_workers() -> int:
    return min(8, os.cpu_count() or 1)


@contextlib.contextmanager
def older_objects_frozen() -> Iterator[None]:
    """The objects alive on entry (modules, the caller's data) are kept out of the garbage collector's full
    collections inside (``gc.freeze``), and handed back to it on exit (``gc.unfreeze``), so nothing of the caller's
    is kept from being freed. For the scan, which allocates fast (events, statistics): each full collection walked
    all of them, the 140,000 objects of the imports, to free none (0.11 s, 13 % of a 400-table summary-depth
    scan). A process that froze objects itself (a pre-forking server) is left as it is."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def check_executor(kind: str, workers: int | None, dask_scheduler: str | None) -> None:
    """:func:`open_executor`'s arguments, checked before it is called, and Dask installed for ``dask``: a scan opens
    its executor only at the first table it loads, and a wrong option or a missing extra fails it at once all the
    same."""
    if kind not in EXECUTOR_KINDS:
        raise ConfigError(f"executor must be one of {', '.join(EXECUTOR_KINDS)}, not {kind!r}")
    if workers is not None and workers < 1:
        raise ConfigError("--workers must be at least 1")
    if dask_scheduler and kind != "dask":
        raise ConfigError("--dask-scheduler needs --executor dask")
    if kind == "dask":
        require("--executor dask", "distributed")


@contextlib.contextmanager
def open_executor(
    kind: ExecutorKind = "threads", workers: int | None = None, dask_scheduler: str | None = None,
    preload: Sequence[str] = (),
) -> Iterator[cf.Executor]:
    """An executor for per-table tasks, shut down on exit.

    ``threads`` is a :class:`DaemonThreads` pool, so the scan can abandon a stuck table (``scan.table_timeout_s``)
    and still exit.

    ``processes`` never forks the driver: it holds threads (manifest pool, SQLite, HTTP), and forking a threaded
    process can deadlock. Where it exists, the ``forkserver`` start method forks the workers from a fresh,
    single-threaded server that imported the modules in ``preload`` once, so no worker imports them again (with
    ``spawn``, each worker imported everything itself: seconds each). Elsewhere, ``spawn``. ``dask`` connects to
    ``dask_scheduler`` or starts a ``LocalCluster``.
    """
    check_executor(kind, workers, dask_scheduler)
    n = workers or default_workers()
    if kind == "threads":
        pool = DaemonThreads(n, "iceberg-lineage-table")
        try:
            yield pool
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # an interrupted scan does not wait for its tables
            raise
        pool.shutdown()  # joins idle threads only: abandoned ones are not waited for
    elif kind == "processes":
        # a forkserver started by an earlier pool has that time's environment and folder: each worker takes now's
        with cf.ProcessPoolExecutor(n, mp_context=_worker_context(preload), initializer=_adopt,
                                    initargs=(dict(os.environ), os.getcwd())) as pool:
            yield pool
    else:
        with _dask_executor(n, dask_scheduler) as pool:
            yield pool


def _worker_context(preload: Sequence[str]) -> multiprocessing.context.BaseContext:
    """``forkserver`` with ``preload`` imported in the server (set before the server starts; it then serves every
    pool of this process), else ``spawn``."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["__main__", *preload])
    return context


def _adopt(environ: dict[str, str], cwd: str) -> None:
    """A worker process starts in the driver's environment and folder, as a spawned one would."""
    os.environ.clear()
    os.environ.update(environ)
    os.chdir(cwd)


@contextlib.contextmanager
def _dask_executor(workers: int, address: str | None) -> Iterator[cf.Executor]:
    from distributed import Client, LocalCluster

    with contextlib.ExitStack() as stack:
        if address:
            try:
                client = stack.enter_context(Client(address, timeout="30s"))
            except (OSError, TimeoutError) as exc:
                raise ConfigError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
        else:
            cluster = stack.enter_context(
                LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
            )
            client = stack.enter_context(Client(cluster))
        yield client.get_executor(pure=False)
