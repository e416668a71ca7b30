"""Our delivery as openlineage-python transports that wrap the configured one, built the way its own ``transform``
transport is: a ``kind``, a ``config_class`` whose ``from_dict`` takes the wrapped transport (a config dict, or a
transport already built), and creation through openlineage-python's transport factory (:func:`create`). No
openlineage-python object is changed: hardening goes through the configuration its transports accept.

The chain :class:`~iceberg_lineage.delivery.delivery.Delivery` builds, outermost first: the spool
(:mod:`~iceberg_lineage.delivery.spooler`), the circuit breaker (:class:`BreakerTransport`), then
the configured transport as :func:`~iceberg_lineage.delivery.pipeline.configured` rebuilds it: HTTP transports with our retry adapter
(:mod:`~iceberg_lineage.delivery.http`), Kafka transports confirmed by their delivery reports
(:mod:`~iceberg_lineage.delivery.kafka`), and a :class:`TapTransport` that records, for the send under way, the
event as the client handed it and what each target raised (a fan-out composite swallows its targets' failures).
"""
from __future__ import annotations

import contextvars
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, Union

import attr
from openlineage.client.transport import get_default_factory
from openlineage.client.transport.composite import CompositeTransport
from openlineage.client.transport.noop import NoopTransport
from openlineage.client.transport.transport import Config, Transport
from openlineage.client.utils import get_only_specified_fields

from iceberg_lineage.delivery.breaker import Breaker
from iceberg_lineage.delivery.failures import NotSent, describe_error, is_rejection
from iceberg_lineage.lineage.serde import Event

if TYPE_CHECKING:
    from openlineage.client import OpenLineageClient

#: What the factory builds a wrapped transport from: its configuration, or the transport itself.
Wrapped = Union[dict[str, Any], Transport]


class StoredEvent(dict):  # type: ignore[type-arg]
    """A spooled event handed back to a transport as is: openlineage's ``Serde`` serialises a dict without
    rebuilding it, so the body sent is the stored JSON; attribute access serves transports that read
    ``event.job.name`` or ``event.run.runId``."""

    def __getattr__(self, name: str) -> object:
        try:
            value = self[name]
        except KeyError:
            raise AttributeError(name) from None
        return StoredEvent(value) if isinstance(value, dict) else value


#: What travels through the transports: an event object, or a spooled event's JSON.
Sendable = Union[Event, StoredEvent]


@dataclass
class Attempt:
    """What one send did in the transports of this context: the event as the client handed it, the errors its
    targets raised, and what the outermost transport made of it (a ``DeliveryResult``)."""

    event: Sendable | None = None
    errors: list[Exception] = field(default_factory=list)
    result: object = None


_attempt: contextvars.ContextVar[Attempt | None] = contextvars.ContextVar("iceberg_lineage_attempt", default=None)


@contextmanager
def attempt() -> Iterator[Attempt]:
    """Record what the transports do with the sends made inside (one at a time)."""
    current = Attempt()
    token = _attempt.set(current)
    try:
        yield current
    finally:
        _attempt.reset(token)


def current_attempt() -> Attempt | None:
    return _attempt.get()


def send(transport: Transport, event: Sendable) -> list[Exception]:
    """Hand ``event`` to ``transport``; the errors its targets raised (empty: it went out)."""
    with attempt() as current:
        try:
            transport.emit(event)
        except Exception as exc:  # noqa: BLE001 - every failure of a transport is a reason to keep the event
            if not current.errors:
                current.errors.append(exc)
    return current.errors


@attr.define
class WrapConfig(Config):
    """The configuration of a transport that wraps another: ``transport``, a config dict or a built transport."""

    transport: Wrapped

    @classmethod
    def from_dict(cls, params: dict[str, Any]) -> WrapConfig:
        if "transport" not in params:
            raise RuntimeError(f"'transport' not passed to {cls.__name__}")
        return cls(**get_only_specified_fields(cls, params))


def build(transport: Wrapped) -> Transport:
    """A wrapped transport: created by openlineage-python's factory from its configuration, or as given."""
    return get_default_factory().create(dict(transport)) if isinstance(transport, dict) else transport


def create(config: dict[str, Any]) -> Transport:
    """A transport of ours (or any) through openlineage-python's factory; ``type`` names our classes by path."""
    return get_default_factory().create(dict(config))


def type_of(cls: type[Transport]) -> str:
    """The ``type`` a configuration names one of our transports by (the factory imports it)."""
    return f"{cls.__module__}.{cls.__qualname__}"


class Wrapping(Transport):
    """A transport in front of another, which it builds from its configuration."""

    config_class: type[Config] = WrapConfig

    def __init__(self, config: WrapConfig) -> None:
        self.config = config
        self.transport = build(config.transport)

    def why_not_sending(self) -> str | None:
        """Why this chain would not try to send now (an open breaker), asked before a send is tried."""
        return self.transport.why_not_sending() if isinstance(self.transport, Wrapping) else None

    def close(self, timeout: float = -1) -> bool:
        return self.transport.close(timeout)


class TapTransport(Wrapping):
    """Records, in the send under way (:func:`attempt`), the event as its inner transport gets it and what that
    transport raised; the error still propagates."""

    kind = "iceberg_lineage_tap"

    def emit(self, event: Sendable) -> object:
        current = current_attempt()
        if current is not None and current.event is None:
            current.event = event
        try:
            return self.transport.emit(event)
        except Exception as exc:
            if current is not None:
                current.errors.append(exc)
            raise


def tapped(transport: Wrapped) -> dict[str, Any]:
    return {"type": type_of(TapTransport), "transport": transport}


def transports_of(transport: Transport) -> Iterator[Transport]:
    yield transport
    if isinstance(transport, CompositeTransport):
        for child in transport.transports:
            yield from transports_of(child)
    if isinstance(transport, Wrapping):
        yield from transports_of(transport.transport)


def is_disabled(client: OpenLineageClient | None) -> bool:
    return client is None or client.transport.kind == NoopTransport.kind


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
