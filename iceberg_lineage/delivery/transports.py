"""How ``Delivery`` talks to openlineage-python's transports: hardened retries, and taps that see what they refuse.

Retries stay openlineage-python's (its HTTP transport retries through urllib3); we add 429 to the statuses it
retries, bound how long a ``Retry-After`` may make it wait, and never retry a POST after a read timeout (the server
may have it: the event is spooled, and a replay may repeat it). A Kafka transport confirms each message by its
delivery report (:mod:`~iceberg_lineage.delivery.kafka`).

To see what the transport refused, the client's transports are tapped in place (their ``emit`` is wrapped on the
instance; classes, kinds and configs are untouched). The tap records the event exactly as the client hands it to
the transport, after the client has added its facets, so the spool holds what would have been sent; and it records
the failures of each target of a fan-out composite transport, which swallows them when ``continue_on_failure`` is
set.
"""
from __future__ import annotations

import inspect
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator

from openlineage.client.transport.composite import CompositeTransport
from openlineage.client.transport.http import HttpTransport
from openlineage.client.transport.kafka import KafkaTransport
from openlineage.client.transport.noop import NoopTransport
from urllib3.exceptions import ResponseError
from urllib3.util import Retry

from iceberg_lineage.delivery.kafka import KafkaNotAcknowledged, confirm_deliveries

if TYPE_CHECKING:
    from openlineage.client import OpenLineageClient
    from openlineage.client.transport import Transport

#: The longest a server's Retry-After may hold one retry (urllib3's own bound is six hours).
RETRY_AFTER_MAX = 10
_RETRY_AFTER_BOUNDABLE = "retry_after_max" in inspect.signature(Retry.__init__).parameters
_TAPPED = "_iceberg_lineage_tapped"
#: 4xx statuses that say "later", not "never".
_TRANSIENT_4XX = frozenset({408, 429})


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
class Attempt:
    """What one send did in this thread's transports."""

    dry: bool = False
    event: Any = None
    errors: list[Exception] = field(default_factory=list)


_current = threading.local()


def _tap(transport: Transport, record_errors: bool) -> None:
    send = transport.emit

    def emit(event: Any) -> Any:
        attempt: Attempt | None = getattr(_current, "attempt", None)
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


def transports_of(transport: Transport) -> Iterator[Transport]:
    yield transport
    if isinstance(transport, CompositeTransport):
        for child in transport.transports:
            yield from transports_of(child)


def _harden_http(transport: HttpTransport) -> None:
    """Merge 429 into the statuses openlineage-python's HTTP transport retries, bound Retry-After and retry no POST
    after a read timeout (``read=0``: a silent server is asked once, not six times, and a slow 200 is not accepted
    six times), keeping everything else of the configured retry, connect retries included. A user-supplied adapter
    carries its own Retry and is left alone."""
    if transport.config.adapter is not None:
        return
    retry = dict(transport.config.retry)
    retry["read"] = 0
    retry["status_forcelist"] = sorted({*(retry.get("status_forcelist") or ()), 429})
    if _RETRY_AFTER_BOUNDABLE:
        retry.setdefault("retry_after_max", RETRY_AFTER_MAX)
    else:
        retry.setdefault("respect_retry_after_header", False)
    transport.config.retry = retry
    transport.session = transport.session  # remounts the adapter, built from config.retry


def prepare_client(client: OpenLineageClient) -> None:
    """Harden and tap the client's transports, once per client."""
    if getattr(client.transport, _TAPPED, False):
        return
    for transport in transports_of(client.transport):
        if isinstance(transport, HttpTransport):
            _harden_http(transport)
        elif isinstance(transport, KafkaTransport):
            confirm_deliveries(transport)
    _tap_tree(client.transport)


def send_tapped(send: Callable[[], object], *, dry: bool = False) -> Attempt:
    """Run ``send`` with this thread's taps recording; errors raised before any transport saw the event are bugs
    of the caller and propagate."""
    attempt = Attempt(dry=dry)
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


def describe_error(exc: BaseException) -> str:
    exc = _origin(exc)
    name = type(exc).__name__
    if isinstance(exc, KafkaNotAcknowledged):
        return f"{name}: {exc.reason}"
    status = _status_code(exc)
    if status is not None:
        return f"{name}: HTTP {status}"
    reason = getattr(exc.args[0], "reason", None) if exc.args else None  # urllib3's MaxRetryError in requests'
    if isinstance(reason, ResponseError):
        return f"{name}: {reason}"  # "too many 500 error responses"
    return f"{name}: {type(reason).__name__}" if isinstance(reason, Exception) else name


def is_rejection(exc: BaseException) -> bool:
    """The server refused this very event (a 4xx that retrying will not change)."""
    status = _status_code(_origin(exc))
    return status is not None and 400 <= status < 500 and status not in _TRANSIENT_4XX


def is_disabled(client: OpenLineageClient | None) -> bool:
    return client is None or client.transport.kind == NoopTransport.kind
