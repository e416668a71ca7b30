"""Where per-table work runs: threads, processes or Dask, behind one ``concurrent.futures.Executor`` interface.

The scanner only submits picklable task descriptions and gets back plain data, so the same code runs on any of them.
Manifests of one table fan out on a second, bounded thread pool per process (:func:`manifest_pool`), never on
the pool the table itself runs on: a table task waiting on manifest tasks queued behind other table tasks would
deadlock a shared pool.
"""
from __future__ import annotations

import concurrent.futures as cf
import contextlib
import multiprocessing
import os
import threading
from typing import Iterator, Literal

from iceberg_lineage.errors import ConfigError

ExecutorKind = Literal["threads", "processes", "dask"]
EXECUTOR_KINDS: tuple[str, ...] = ("threads", "processes", "dask")

#: Threads per process that read manifests of one table; enough to hide object-store latency, small enough for RAM.
MANIFEST_THREADS = min(8, 2 * (os.cpu_count() or 1))

_manifest_pool: cf.ThreadPoolExecutor | None = None
_manifest_lock = threading.Lock()


def manifest_pool() -> cf.ThreadPoolExecutor:
    """This process's bounded pool for per-manifest reads (created on first use, lives as long as the process)."""
    global _manifest_pool
    with _manifest_lock:
        if _manifest_pool is None:
            _manifest_pool = cf.ThreadPoolExecutor(MANIFEST_THREADS, thread_name_prefix="iceberg-lineage-manifest")
        return _manifest_pool


def default_workers() -> int:
    return min(8, os.cpu_count() or 1)


@contextlib.contextmanager
def open_executor(
    kind: ExecutorKind = "threads", workers: int | None = None, dask_scheduler: str | None = None
) -> Iterator[cf.Executor]:
    """An executor for per-table tasks, shut down on exit.

    ``processes`` uses the ``spawn`` start method: the driver holds threads (manifest pool, SQLite, HTTP), and
    forking a threaded process can deadlock. ``dask`` connects to ``dask_scheduler`` or starts a ``LocalCluster``.
    """
    if kind not in EXECUTOR_KINDS:
        raise ConfigError(f"executor must be one of {', '.join(EXECUTOR_KINDS)}, not {kind!r}")
    if workers is not None and workers < 1:
        raise ConfigError("--workers must be at least 1")
    if dask_scheduler and kind != "dask":
        raise ConfigError("--dask-scheduler needs --executor dask")
    n = workers or default_workers()
    if kind == "threads":
        with cf.ThreadPoolExecutor(n, thread_name_prefix="iceberg-lineage-table") as pool:
            yield pool
    elif kind == "processes":
        with cf.ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn")) as pool:
            yield pool
    else:
        with _dask_executor(n, dask_scheduler) as pool:
            yield pool


@contextlib.contextmanager
def _dask_executor(workers: int, address: str | None) -> Iterator[cf.Executor]:
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ConfigError("--executor dask needs dask.distributed: pip install 'iceberg-lineage[dask]'") from None
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
