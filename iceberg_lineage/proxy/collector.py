"""The lineage process's end of the bridge: one reader thread per serving process takes its captures, in the order
that process relayed them, and hands them to the :class:`~iceberg_lineage.proxy.report.Reporter` (relayed
requests) or its :class:`~iceberg_lineage.proxy.applications.ApplicationTracker` (``/metrics`` reports) as records
for the emitter, whose thread builds and delivers. Parsing, building and delivery all happen here, in a process
that serves no request, so they never take the serving processes' CPU or their interpreter lock.
"""
from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Any, Callable, Sequence

from iceberg_lineage.delivery.failure_log import FailureLog
from iceberg_lineage.proxy.capture import CLOSED, Capture
from iceberg_lineage.proxy.report import Exchange, Reporter

LOG = logging.getLogger(__name__)
log_once = FailureLog(LOG)

#: Seconds a reader waits on an empty channel before it looks whether its serving process is still there.
POLL_S = 0.5


class Collector:
    """Reads ``channels`` (one per serving process; ``alive(i)`` says whether channel ``i``'s process runs)."""

    def __init__(self, reporter: Reporter, channels: Sequence[Any], alive: Callable[[int], bool]) -> None:
        self.reporter, self.channels, self.alive = reporter, list(channels), alive
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for i, channel in enumerate(self.channels):
            thread = threading.Thread(target=self._read, args=(i, channel), name=f"iceberg-lineage-captures-{i}",
                                      daemon=True)
            thread.start()
            self._threads.append(thread)

    def _read(self, i: int, channel: Any) -> None:
        while True:
            try:
                capture = channel.get(timeout=POLL_S)
            except queue.Empty:
                if not self.alive(i):  # gone without its end mark (killed): nothing more will come
                    return
                continue
            except Exception as exc:  # noqa: BLE001 - a message cut by a killed writer ends this channel
                log_once("reading a serving process's captures", exc)
                return
            if capture is CLOSED:
                return
            self.dispatch(capture)

    def dispatch(self, capture: Capture) -> None:
        route, reporter = capture.route, self.reporter
        if route.kind == "metrics":
            if reporter.tracker is not None and route.identifier is not None and capture.request is not None:
                reporter.submit(reporter.tracker.capture(route.prefix, route.identifier, capture.request))
            return
        reporter.submit(Exchange(reporter, capture))

    def join(self, timeout_s: float) -> bool:
        """Wait until every channel ended (its end mark, or its process gone); whether all did in time."""
        deadline = time.monotonic() + timeout_s
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return not any(thread.is_alive() for thread in self._threads)
