"""The one delivery path of the hook, the scanner and ``events --emit``: send through openlineage-python, and keep
in a durable spool every event its transport finally refuses or cannot reach, for ``iceberg-lineage replay``.

Retries stay openlineage-python's (its HTTP transport retries through urllib3); we only add 429 to the statuses it
retries and bound how long a ``Retry-After`` may make it wait. Run ids are deterministic, so redelivering is
harmless: no event is lost, and a duplicate can only repeat the runId and eventType of an event already sent.

To see what the transport refused, ``Delivery`` taps the client's transports in place (their ``emit`` is wrapped on
the instance; classes, kinds and configs are untouched). The tap records the event exactly as the client hands it
to the transport, after the client has added its facets, so the spool holds what would have been sent; and it
records the failures of each target of a fan-out composite transport, which swallows them when
``continue_on_failure`` is set.
"""
from __future__ import annotations

import inspect
import json
import logging
import sqlite3
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Literal

from openlineage.client.serde import Serde
from openlineage.client.transport.composite import CompositeTransport
from openlineage.client.transport.http import HttpTransport
from openlineage.client.transport.noop import NoopTransport
from urllib3.exceptions import ResponseError
from urllib3.util import Retry

from iceberg_lineage.errors import ConfigError
from iceberg_lineage.delivery.spool import Spool

if TYPE_CHECKING:
    from openlineage.client import OpenLineageClient
    from openlineage.client.transport import Transport

    from iceberg_lineage.config import Settings

log = logging.getLogger(__name__)

Status = Literal["delivered", "spooled", "failed", "disabled"]

#: The longest a server's Retry-After may hold one retry (urllib3's own bound is six hours).
RETRY_AFTER_MAX = 10
_RETRY_AFTER_BOUNDABLE = "retry_after_max" in inspect.signature(Retry.__init__).parameters
_TAPPED = "_iceberg_lineage_tapped"
#: 4xx statuses that say "later", not "never".
_TRANSIENT_4XX = frozenset({408, 429})


@dataclass(frozen=True)
class DeliveryResult:
    status: Status
    #: Why the transport did not take the event: exception type and HTTP status, never a message (URLs and
    #: headers can carry credentials).
    error: str | None = None


@dataclass(frozen=True)
class DeliveryStats:
    delivered: int = 0
    spooled: int = 0
    failed: int = 0
    disabled: int = 0


@dataclass(frozen=True)
class ReplayResult:
    delivered: int
    remaining: int
    #: The last refusal seen, if any event stayed in the spool.
    error: str | None = None


class StoredEvent(dict):  # type: ignore[type-arg]
    """A spooled event handed back to a transport as is: openlineage's ``Serde`` serialises a dict without
    rebuilding it, so the body sent is the stored JSON; attribute access serves transports that read
    ``event.job.name`` or ``event.run.runId``."""

    def __getattr__(self, name: str) -> Any:
        try:
            value = self[name]
        except KeyError:
            raise AttributeError(name) from None
        return StoredEvent(value) if isinstance(value, dict) else value


class _NotSent(Exception):
    """Raised by the outermost tap on a dry run, after the client has prepared the event."""


@dataclass
class _Attempt:
    """What one send did in this thread's transports."""

    dry: bool = False
    event: Any = None
    errors: list[Exception] = field(default_factory=list)


_current = threading.local()


def _tap(transport: Transport, record_errors: bool) -> None:
    send = transport.emit

    def emit(event: Any) -> Any:
        attempt: _Attempt | None = getattr(_current, "attempt", None)
        if attempt is not None and attempt.event is None:
            attempt.event = event
            if attempt.dry:
                raise _NotSent
        try:
            return send(event)
        except Exception as exc:
            if attempt is not None and record_errors:
                attempt.errors.append(exc)
            raise

    transport.emit = emit  # type: ignore[method-assign]
    setattr(transport, _TAPPED, True)


def _fan_out(transport: Transport) -> bool:
    """A composite that must reach all its targets (as opposed to a failover chain that stops at one success)."""
    return isinstance(transport, CompositeTransport) and transport.config.continue_on_success


def _tap_tree(transport: Transport) -> None:
    fan_out = _fan_out(transport)
    _tap(transport, record_errors=not fan_out)
    if fan_out:
        for child in transport.transports:  # type: ignore[attr-defined]
            _tap_tree(child)


def _walk(transport: Transport) -> Iterator[Transport]:
    yield transport
    if isinstance(transport, CompositeTransport):
        for child in transport.transports:
            yield from _walk(child)


def _harden_http(transport: HttpTransport) -> None:
    """Merge 429 into the statuses openlineage-python's HTTP transport retries and bound Retry-After, keeping
    everything else of the configured retry. A user-supplied adapter carries its own Retry and is left alone."""
    if transport.config.adapter is not None:
        return
    retry = dict(transport.config.retry)
    retry["status_forcelist"] = sorted({*(retry.get("status_forcelist") or ()), 429})
    if _RETRY_AFTER_BOUNDABLE:
        retry.setdefault("retry_after_max", RETRY_AFTER_MAX)
    else:
        retry.setdefault("respect_retry_after_header", False)
    transport.config.retry = retry
    transport.session = transport.session  # remounts the adapter, built from config.retry


def _prepare(client: OpenLineageClient) -> None:
    """Harden and tap the client's transports, once per client."""
    if getattr(client.transport, _TAPPED, False):
        return
    for transport in _walk(client.transport):
        if isinstance(transport, HttpTransport):
            _harden_http(transport)
    _tap_tree(client.transport)


def _attempt(send: Callable[[], object], *, dry: bool = False) -> _Attempt:
    """Run ``send`` with this thread's taps recording; errors raised before any transport saw the event are bugs
    of the caller and propagate."""
    attempt = _Attempt(dry=dry)
    _current.attempt = attempt
    try:
        send()
    except _NotSent:
        pass
    except Exception as exc:
        if attempt.event is None:
            raise
        if not attempt.errors:
            attempt.errors.append(exc)
    finally:
        _current.attempt = None
    return attempt


def _origin(exc: BaseException) -> BaseException:
    """The error a wrapper re-raised ``from`` (a composite transport wraps its targets' errors)."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return exc


def _status_code(exc: BaseException) -> int | None:
    return getattr(getattr(exc, "response", None), "status_code", None)


def _describe(exc: BaseException) -> str:
    exc = _origin(exc)
    name = type(exc).__name__
    status = _status_code(exc)
    if status is not None:
        return f"{name}: HTTP {status}"
    reason = getattr(exc.args[0], "reason", None) if exc.args else None  # urllib3's MaxRetryError in requests'
    if isinstance(reason, ResponseError):
        return f"{name}: {reason}"  # "too many 500 error responses"
    return f"{name}: {type(reason).__name__}" if isinstance(reason, Exception) else name


def _rejected(exc: BaseException) -> bool:
    """The server refused this very event (a 4xx that retrying will not change)."""
    status = _status_code(_origin(exc))
    return status is not None and 400 <= status < 500 and status not in _TRANSIENT_4XX


def _disabled(client: OpenLineageClient | None) -> bool:
    return client is None or client.transport.kind == NoopTransport.kind


class Delivery:
    """Synchronous, thread-safe delivery with a durable spool behind it (opened only once something must wait)."""

    def __init__(self, client: OpenLineageClient | None, settings: Settings) -> None:
        self._client = None if _disabled(client) else client
        self.spool_path = Path(settings.spool_path).expanduser().resolve()
        self._max_bytes = settings.spool_max_bytes
        self._spool: Spool | None = None
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._spooling = False
        if self._client is not None:
            _prepare(self._client)

    @property
    def synchronous(self) -> bool:
        """False when a transport only queues events (``async_http``): "delivered" then confirms nothing."""
        return self._client is None or all(t.kind != "async_http" for t in _walk(self._client.transport))

    @property
    def stats(self) -> DeliveryStats:
        with self._lock:
            return DeliveryStats(**self._counts)

    def emit(self, event: Any) -> DeliveryResult:
        """Send one event; if the transport refuses it or cannot be reached, spool it."""
        if self._client is None:
            return self._count(DeliveryResult("disabled"))
        client = self._client
        attempt = _attempt(lambda: client.emit(event))
        if not attempt.errors:
            self._spooling = False
            return self._count(DeliveryResult("delivered"))
        return self._count(self._spool_event(attempt.event, _describe(attempt.errors[0])))

    def emit_many(self, events: Iterable[Any]) -> list[DeliveryResult]:
        """Send events in order. After the first one that is not delivered, the rest go straight to the spool:
        they keep their order behind it, and a down server costs one round of retries, not one per event."""
        results: list[DeliveryResult] = []
        for event in events:
            keep_trying = not results or results[-1].status in ("delivered", "disabled")
            results.append(self.emit(event) if keep_trying else self.spool(event))
        return results

    def spool(self, event: Any) -> DeliveryResult:
        """Store an event for replay without sending it (a caller that must not wait on the network), prepared by
        the client exactly as ``emit`` would send it."""
        if self._client is None:
            return self._count(DeliveryResult("disabled"))
        client = self._client
        prepared = _attempt(lambda: client.emit(event), dry=True).event
        if prepared is None:  # the client's filters dropped it: nothing to keep
            return self._count(DeliveryResult("delivered"))
        return self._count(self._spool_event(prepared, "not sent"))

    def _spool_event(self, event: Any, error: str) -> DeliveryResult:
        body = Serde.to_json(event)
        doc = json.loads(body)
        run_id, event_type = (doc.get("run") or {}).get("runId"), doc.get("eventType")
        try:
            stored = self._open_spool().append(body, run_id, event_type)
            why_not = f"spool full (spool.max_bytes={self._max_bytes})"
        except (OSError, sqlite3.Error) as exc:
            stored, why_not = False, f"spool unusable ({type(exc).__name__}: {exc})"
        if stored:
            if not self._spooling:  # once per outage, not once per event
                log.warning("OpenLineage event not delivered (%s); spooling to %s until `iceberg-lineage replay`",
                            error, self.spool_path)
            self._spooling = True
            return DeliveryResult("spooled", error)
        log.error("OpenLineage event LOST (run %s, %s): not delivered (%s) and %s", run_id, event_type, error, why_not)
        return DeliveryResult("failed", f"{error}; {why_not}")

    def _open_spool(self) -> Spool:
        with self._lock:
            if self._spool is None:
                self._spool = Spool(self.spool_path, self._max_bytes)
            return self._spool

    def _count(self, result: DeliveryResult) -> DeliveryResult:
        with self._lock:
            self._counts[result.status] += 1
        return result

    def close(self) -> None:
        """Close the spool. The client stays the caller's to close (async transports flush there)."""
        with self._lock:
            if self._spool is not None:
                self._spool.close()
                self._spool = None


def replay(spool_path: str | Path, client: OpenLineageClient) -> ReplayResult:
    """Redeliver spooled events oldest first, each exactly as stored, removing each once the transport accepts it.

    Stops at the first event that cannot get through (the rest would fail too, and must not overtake it); an event
    the server rejects outright (a 4xx other than 408/429) stays in the spool and the replay goes on past it.
    """
    if _disabled(client):
        raise ConfigError("OpenLineage is disabled (OPENLINEAGE_DISABLED): replaying would discard the spool")
    if not Spool.exists(spool_path):
        return ReplayResult(0, 0)
    _prepare(client)
    delivered, after, error = 0, 0, None
    with Spool(spool_path) as spool, spool.replay_lock():
        while batch := spool.read(after):
            for item in batch:
                after = item.seq
                stored = StoredEvent(json.loads(item.body))
                attempt = _attempt(lambda: client.transport.emit(stored))
                if not attempt.errors:
                    spool.remove(item.seq)
                    delivered += 1
                    continue
                error = _describe(attempt.errors[0])
                if not all(_rejected(exc) for exc in attempt.errors):
                    return ReplayResult(delivered, spool.count(), error)
        return ReplayResult(delivered, spool.count(), error)
