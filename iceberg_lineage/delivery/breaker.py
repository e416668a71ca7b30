"""When an event is spooled without trying to send it: while the circuit breaker (a
:class:`~iceberg_lineage.delivery.transports.BreakerTransport` in front of the configured transport) is open after a
transport failure, and past a caller's send deadline (a scan's delivery phase) or the process's (its exit flush),
which the spool (:mod:`~iceberg_lineage.delivery.spooler`) reads, and which also cuts a request in flight.

A silent server costs one request timeout per event otherwise: the breaker makes it one per cool-down, the deadline
bounds what a whole scan waits. Either way the events wait in the spool for ``iceberg-lineage replay``.
"""
from __future__ import annotations

import contextvars
import threading
import time
from contextlib import contextmanager
from typing import Iterator

_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar("iceberg_lineage_send_deadline",
                                                                         default=None)
#: The process's own send deadline, for every thread (the exit flush: :func:`exit_deadline`).
_process_deadline: float | None = None
#: Set once the process is exiting: the waits between retries end (:func:`pause`).
_exiting = threading.Event()


@contextmanager
def send_deadline(at: float | None) -> Iterator[None]:
    """In this thread (context), events are sent until ``at`` (a ``time.monotonic()`` time), then spooled unsent.
    A request in flight at ``at`` is cut there (:mod:`~iceberg_lineage.delivery.http`) and its event spooled."""
    token = _deadline.set(at)
    try:
        yield
    finally:
        _deadline.reset(token)


def exit_deadline(at: float | None) -> None:
    """Every thread of the process sends until ``at``, then spools (a process about to exit must not wait on the
    network: a request in flight is cut there too), without pausing between retries; ``None`` lifts it."""
    global _process_deadline  # noqa: PLW0603 - one process-wide value, set at exit
    _process_deadline = at
    if at is None:
        _exiting.clear()
    else:
        _exiting.set()


def pause(seconds: float) -> None:
    """Wait between two tries of a request: ``seconds``, or less once the process is exiting."""
    if seconds > 0:
        _exiting.wait(seconds)


def process_deadline() -> float | None:
    return _process_deadline


def current_deadline() -> float | None:
    """The sooner of this context's send deadline and the process's, if any."""
    limits = [at for at in (_deadline.get(), _process_deadline) if at is not None]
    return min(limits) if limits else None


def past_deadline() -> bool:
    at = current_deadline()
    return at is not None and time.monotonic() >= at


class Breaker:
    """Open for ``cooldown_s`` after a transport failure (connection, timeout, 5xx, 408 or 429 once the transport's
    retries are spent; never after a rejection, which says the server is up). While open, events go straight to the
    spool; the first event after the cool-down is sent as a probe, and its failure opens the breaker again."""

    def __init__(self, cooldown_s: float) -> None:
        self.cooldown_s = cooldown_s
        self._lock = threading.Lock()
        self._open_until = 0.0
        self._error: str | None = None

    def trip(self, error: str) -> None:
        with self._lock:
            self._open_until, self._error = time.monotonic() + self.cooldown_s, error

    def reset(self) -> None:
        with self._lock:
            self._open_until, self._error = 0.0, None

    def why_open(self) -> str | None:
        """The failure that opened the breaker (what the events spooled meanwhile are kept with), or None when it
        is closed or its cool-down is over."""
        with self._lock:
            return None if self._error is None or time.monotonic() >= self._open_until else self._error

