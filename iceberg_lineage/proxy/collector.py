"""The lineage process's end of the proxy: one reader thread per serving process takes its captures, in the order
that process relayed them, and hands each to the :class:`~iceberg_lineage.proxy.interpreter.Interpreter`, which
builds its events on that thread (and hands them on to the tracker, then the emitter, which delivers). Parsing,
building and delivery all happen here, in a process that serves no request, so they never take the serving
processes' CPU or their interpreter lock.
"""
from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Callable, Sequence

from iceberg_lineage.delivery.failure_log import FailureLog
from iceberg_lineage.proxy.capture import CLOSED, Channel
from iceberg_lineage.proxy.interpreter import Interpreter

LOG = logging.getLogger(__name__)
log_once = FailureLog(LOG)

#: Seconds a reader waits on an empty channel before it looks whether its serving process is still there.
POLL_S = 0.5


class Collector:
    """Reads ``channels`` (one per serving process; ``alive(i)`` says whether channel ``i``'s process runs)."""

    def __init__(self, interpreter: Interpreter, channels: Sequence[Channel], alive: Callable[[int], bool]) -> None:
        self.interpreter, self.channels, self.alive = interpreter, list(channels), alive
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for i, channel in enumerate(self.channels):
            thread = threading.Thread(target=self._read, args=(i, channel), name=f"iceberg-lineage-captures-{i}",
                                      daemon=True)
            thread.start()
            self._threads.append(thread)

    def _read(self, i: int, channel: Channel) -> None:
        while True:
            try:
                capture = channel.queue.get(timeout=POLL_S)
            except queue.Empty:
                if not self.alive(i):  # gone without its end mark (killed): nothing more will come
                    return
                continue
            except Exception as exc:  # noqa: BLE001 - a message cut by a killed writer ends this channel
                log_once("reading a serving process's captures", exc)
                return
            if capture is CLOSED:
                return
            channel.budget.release(capture.size)
            self.interpreter.interpret(capture)

    def join(self, timeout_s: float) -> bool:
        """Wait until every channel ended (its end mark, or its process gone); whether all did in time."""
        deadline = time.monotonic() + timeout_s
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return not any(thread.is_alive() for thread in self._threads)
