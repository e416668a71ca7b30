"""Table tasks in flight on the scan's executor: each result is handed to the driver as soon as its task is done
(so a table's events go out without waiting for the other tables), and each task has a time limit.

A task still running ``scan.table_timeout_s`` after it started comes back as a failed result naming the limit,
and its worker is abandoned: a thread cannot be cancelled, so :class:`~iceberg_lineage.stats.parallel.DaemonThreads`
gives its slot to a new thread and never waits for the stuck one, even at exit. Executors without ``abandon``
(processes, Dask) get ``cancel``: the table is still reported and the scan goes on, but the worker runs on.

On processes and Dask, tables go in batches (``batch``), one task each: a task's cost (pickling the settings and the
catalog spec there and the results back, the executor's own bookkeeping) is then paid once per batch, not per
table. A batch's time limit is its tables' limits together.

The executor is opened at the first submission: a scan that loads no table (a rescan with nothing changed) starts
no worker, no process pool and no Dask cluster, and imports nothing of the table task.
"""
from __future__ import annotations

import concurrent.futures as cf
import contextlib
import time
from typing import TYPE_CHECKING, Callable, ContextManager

from iceberg_lineage.read.catalogs import one_line
from iceberg_lineage.scan.summary import TableFailure

if TYPE_CHECKING:
    from types import TracebackType

    from iceberg_lineage.scan.task import TableResult, TableTask

#: The most the driver sleeps while a task it submitted has not been seen running (its clock not yet started).
POLL_S = 1.0


class InFlight:
    """The tasks submitted and not yet handed back, with the time each was first seen running. A context manager:
    ``open_executor()`` is entered at the first submission, and left on exit."""

    def __init__(self, open_executor: Callable[[], ContextManager[cf.Executor]], limit_s: float,
                 batch: int = 1) -> None:
        self._open = open_executor
        self._stack = contextlib.ExitStack()
        self.executor: cf.Executor | None = None
        self.limit_s = limit_s
        self.batch = batch
        self._waiting: list[TableTask] = []  # not submitted yet: the next batch
        self._tasks: dict[cf.Future, tuple[TableTask, ...]] = {}
        self._started: dict[cf.Future, float] = {}
        self._count = 0

    def __enter__(self) -> InFlight:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool | None:
        return self._stack.__exit__(kind, exc, tb)

    def __len__(self) -> int:
        """Tables submitted (or waiting for their batch) and not handed back yet."""
        return self._count

    def submit(self, task: TableTask) -> None:
        self._waiting.append(task)
        self._count += 1
        if len(self._waiting) >= self.batch:
            self.flush()

    def flush(self) -> None:
        """Submit the tables waiting for their batch to fill."""
        if self._waiting:
            from iceberg_lineage.scan.task import scan_tables

            if self.executor is None:
                self.executor = self._stack.enter_context(self._open())
            tasks, self._waiting = tuple(self._waiting), []
            self._tasks[self.executor.submit(scan_tables, tasks)] = tasks

    def ready(self, *, block: bool) -> list[tuple[TableTask, TableResult]]:
        """The results done by now, and a failed result for each task past its limit; with ``block``, wait until
        there is at least one (or nothing is in flight)."""
        if block:
            self.flush()
        while self._tasks:
            wait = self._clock()
            wait = wait if block else 0.0
            done, _ = cf.wait(self._tasks, timeout=wait, return_when=cf.FIRST_COMPLETED)
            out = [r for f in done for r in self._result(f)] + [r for f in self._overdue(done) for r in self._expired(f)]
            if out or not block:
                return out
        return []

    def _limit(self, future: cf.Future) -> float:
        return self.limit_s * len(self._tasks[future])

    def _clock(self) -> float:
        """Start the clocks of the tasks now running; how long to wait for the next limit (or the next look)."""
        now = time.monotonic()
        for future in self._tasks:
            if future not in self._started and future.running():
                self._started[future] = now
        waits = [at + self._limit(f) - now for f, at in self._started.items()]
        if len(self._started) < len(self._tasks):
            waits.append(min(POLL_S, self.limit_s))
        return max(0.0, min(waits))

    def _overdue(self, done: set[cf.Future]) -> list[cf.Future]:
        now = time.monotonic()
        return [f for f, at in self._started.items() if f not in done and now - at >= self._limit(f)
                and self._give_up(f)]

    def _give_up(self, future: cf.Future) -> bool:
        """Abandon (or cancel) a task past its limit; False when it finished meanwhile (it is collected next)."""
        abandon = getattr(self.executor, "abandon", None)
        return abandon(future) if abandon is not None else (future.cancel() or not future.done())

    def _result(self, future: cf.Future) -> list[tuple[TableTask, TableResult]]:
        tasks = self._pop(future)
        try:
            return list(zip(tasks, future.result()))
        except Exception as exc:  # noqa: BLE001 - a lost worker fails its tables, not the scan
            return [(task, _failed(task, one_line(exc))) for task in tasks]

    def _expired(self, future: cf.Future) -> list[tuple[TableTask, TableResult]]:
        limit = self._limit(future)
        tasks = self._pop(future)
        return [(task, _failed(task, f"no result after {limit:g} s (scan.table_timeout_s): the table's task was "
                                     "abandoned, nothing of it is recorded", kind="timeout")) for task in tasks]

    def _pop(self, future: cf.Future) -> tuple[TableTask, ...]:
        self._started.pop(future, None)
        tasks = self._tasks.pop(future)
        self._count -= len(tasks)
        return tasks


def _failed(task: TableTask, reason: str, kind: str = "error") -> TableResult:
    from iceberg_lineage.scan.task import TableResult

    failure = TableFailure(task.catalog.name, ".".join(task.identifier), reason, kind=kind)
    return TableResult(task.catalog.name, task.identifier, failure=failure)
