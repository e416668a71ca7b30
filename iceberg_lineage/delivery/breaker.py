"""When an event is spooled without trying to send it: while the circuit breaker (:class:`BreakerTransport`, in
front of the configured transport) is open after a transport failure, and past a caller's send deadline (a scan's
delivery phase), which the spool (:mod:`~iceberg_lineage.delivery.spooler`) reads.

A silent server costs one request timeout per event otherwise: the breaker makes it one per cool-down, the deadline
bounds what a whole scan waits. Either way the events wait in the spool for ``iceberg-lineage replay``.
"""
from __future__ import annotations

import contextvars
import threading
import time
from contextlib import contextmanager
from typing import Iterator

import attr

from iceberg_lineage.delivery.failures import NotSent, describe_error, is_rejection
from iceberg_lineage.delivery.transports import Sendable, WrapConfig, Wrapping, current_attempt

_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar("iceberg_lineage_send_deadline",
                                                                         default=None)


@contextmanager
def send_deadline(at: float | None) -> Iterator[None]:
    """In this thread (context), events are sent until ``at`` (a ``time.monotonic()`` time), then spooled unsent.
    A request in flight at ``at`` still runs to its own timeout."""
    token = _deadline.set(at)
    try:
        yield
    finally:
        _deadline.reset(token)


def past_deadline() -> bool:
    at = _deadline.get()
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


@attr.define
class BreakerConfig(WrapConfig):
    cooldown_s: float = 60.0


class BreakerTransport(Wrapping):
    """Raises :class:`~iceberg_lineage.delivery.failures.NotSent` while open; a failure of the wrapped transport
    that is not a rejection opens it, a send that went out closes it."""

    kind = "iceberg_lineage_breaker"
    config_class = BreakerConfig

    def __init__(self, config: BreakerConfig) -> None:
        super().__init__(config)
        self.breaker = Breaker(config.cooldown_s)

    def why_not_sending(self) -> str | None:
        return self.breaker.why_open() or super().why_not_sending()

    def emit(self, event: Sendable) -> object:
        why_open = self.breaker.why_open()
        if why_open is not None:
            raise NotSent(why_open)
        current = current_attempt()
        try:
            sent = self.transport.emit(event)
        except Exception as exc:
            errors = (current.errors if current is not None else None) or [exc]
            if not all(is_rejection(error) for error in errors):
                self.breaker.trip(describe_error(errors[0]))
            raise
        if current is not None and current.errors:  # a fan-out target failed, the composite went on
            if not all(is_rejection(error) for error in current.errors):
                self.breaker.trip(describe_error(current.errors[0]))
        else:
            self.breaker.reset()
        return sent
