"""Table tasks in flight on the scan's executor: each result is handed to the driver as soon as its task is done
(so a table's events go out without waiting for the other tables), and each task has a time limit.

A task still running ``scan.table_timeout_s`` after it started comes back as a failed result naming the limit,
and its worker is abandoned: a thread cannot be cancelled, so :class:`~iceberg_lineage.stats.parallel.DaemonThreads`
gives its slot to a new thread and never waits for the stuck one, even at exit. Executors without ``abandon``
(processes, Dask) get ``cancel``: the table is still reported and the scan goes on, but the worker runs on.
"""
from __future__ import annotations

import concurrent.futures as cf
import time

from iceberg_lineage.read.catalogs import one_line
from iceberg_lineage.scan.summary import TableFailure
from iceberg_lineage.scan.task import TableResult, TableTask, scan_table

#: The most the driver sleeps while a task it submitted has not been seen running (its clock not yet started).
POLL_S = 1.0


class InFlight:
    """The tasks submitted and not yet handed back, with the time each was first seen running."""

    def __init__(self, executor: cf.Executor, limit_s: float) -> None:
        self.executor = executor
        self.limit_s = limit_s
        self._tasks: dict[cf.Future, TableTask] = {}
        self._started: dict[cf.Future, float] = {}

    def __len__(self) -> int:
        return len(self._tasks)

    def submit(self, task: TableTask) -> None:
        self._tasks[self.executor.submit(scan_table, task)] = task

    def ready(self, *, block: bool) -> list[tuple[TableTask, TableResult]]:
        """The results done by now, and a failed result for each task past its limit; with ``block``, wait until
        there is at least one (or nothing is in flight)."""
        while self._tasks:
            wait = self._clock()
            wait = wait if block else 0.0
            done, _ = cf.wait(self._tasks, timeout=wait, return_when=cf.FIRST_COMPLETED)
            out = [self._result(f) for f in done] + [self._expired(f) for f in self._overdue(done)]
            if out or not block:
                return out
        return []

    def _clock(self) -> float:
        """Start the clocks of the tasks now running; how long to wait for the next limit (or the next look)."""
        now = time.monotonic()
        for future in self._tasks:
            if future not in self._started and future.running():
                self._started[future] = now
        waits = [at + self.limit_s - now for at in self._started.values()]
        if len(self._started) < len(self._tasks):
            waits.append(min(POLL_S, self.limit_s))
        return max(0.0, min(waits))

    def _overdue(self, done: set[cf.Future]) -> list[cf.Future]:
        now = time.monotonic()
        return [f for f, at in self._started.items() if f not in done and now - at >= self.limit_s
                and self._give_up(f)]

    def _give_up(self, future: cf.Future) -> bool:
        """Abandon (or cancel) a task past its limit; False when it finished meanwhile (it is collected next)."""
        abandon = getattr(self.executor, "abandon", None)
        return abandon(future) if abandon is not None else (future.cancel() or not future.done())

    def _result(self, future: cf.Future) -> tuple[TableTask, TableResult]:
        task = self._pop(future)
        try:
            return task, future.result()
        except Exception as exc:  # noqa: BLE001 - a lost worker fails its table, not the scan
            return task, _failed(task, one_line(exc))

    def _expired(self, future: cf.Future) -> tuple[TableTask, TableResult]:
        task = self._pop(future)
        return task, _failed(task, f"no result after {self.limit_s:g} s (scan.table_timeout_s): the table's task "
                                   "was abandoned, nothing of it is recorded", kind="timeout")

    def _pop(self, future: cf.Future) -> TableTask:
        self._started.pop(future, None)
        return self._tasks.pop(future)


def _failed(task: TableTask, reason: str, kind: str = "error") -> TableResult:
    failure = TableFailure(task.catalog.name, ".".join(task.identifier), reason, kind=kind)
    return TableResult(task.catalog.name, task.identifier, failure=failure)
