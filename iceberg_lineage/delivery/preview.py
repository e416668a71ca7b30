"""What an event goes out as (:func:`outgoing`), for :class:`~iceberg_lineage.delivery.delivery.Delivery` and for
the commands that print events (``events``, ``scan --dry-run``: :func:`as_sent`), so that what is printed is what is
sent.

openlineage-python's ``OpenLineageClient.emit`` adds what its configuration asks for (run and job tags, its own
``openlineage_client_version`` tag, environment variables, the source code location), reduces datasets and applies
its filters. That comes first, from a client of the same configuration whose transport keeps each event instead of
sending it (:class:`Preparer`); then the consumer profile and the byte budget
(:func:`~iceberg_lineage.lineage.shaping.shape`), so that the budget counts what the client added. Parts the shaping
made are prepared again (a checks run gets the client's additions too); an event it left as it was is not, nor does
the client that sends prepare it again (:func:`~iceberg_lineage.delivery.pipeline.delivery_client`): the additions
are already there, and preparing costs the emitter's thread as much as sending.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from openlineage.client import OpenLineageClient
from openlineage.client.transport.transport import Transport

from iceberg_lineage.lineage.serde import Plain, as_objects
from iceberg_lineage.lineage.shaping import shape

if TYPE_CHECKING:
    from iceberg_lineage.config import Settings
    from iceberg_lineage.lineage.serde import Event


class _Keep(Transport):
    """Keeps the last event the client hands it, as a transport would get it."""

    kind = "iceberg_lineage_keep"

    def __init__(self) -> None:
        self.kept: Event | None = None

    def emit(self, event: Event) -> None:  # type: ignore[override]
        self.kept = event


class _KeepingClient(OpenLineageClient):
    """openlineage-python's client over the transport it is given, even under ``OPENLINEAGE_DISABLED`` (which gives
    it a no-op one): a preview shows what would be sent once enabled."""

    def _resolve_transport(self, **kwargs: Any) -> Transport:
        return kwargs["transport"]

    def _collect_environment_variables(self) -> dict[str, str]:
        """No variable asked for, none collected, without the client's pass over the whole environment for every
        event (a fifth of the hook's emitter time per commit); else the client's own collection."""
        if not self.config.facets.environment_variables:
            return {}
        return super()._collect_environment_variables()


class Preparer:
    """openlineage-python's client with ``config`` (default: ``openlineage.yml`` or ``OPENLINEAGE__*``; its transport
    is not built), over a transport that keeps what its ``emit`` hands on. Thread-safe."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        self._keep = _Keep()
        self._client = _KeepingClient(transport=self._keep, config=config)
        self._lock = threading.Lock()

    def prepared(self, event: Event) -> Event | None:
        """The event as the client would hand it to its transport; None when its filters drop it."""
        with self._lock:
            self._keep.kept = None
            self._client.emit(event)
            return self._keep.kept


def outgoing(event: Event | Plain, settings: Settings, preparer: Preparer) -> list[Event]:
    """The events ``event`` goes out as: prepared by the client, then shaped for the consumer profile and the byte
    budget; none when the client's filters or the profile drop it. An event built in plain form (the hook's commits)
    becomes objects first, as a scanner worker's JSON does (:func:`~iceberg_lineage.lineage.serde.from_plain`): the
    client prepares only objects, and its facets stay plain, so they are only dumped when sent."""
    ready = preparer.prepared(as_objects(event))
    if ready is None:
        return []
    parts = shape(ready, settings)
    if len(parts) == 1 and parts[0] is ready:  # nothing shaped: prepared already
        return parts
    # new parts (a checks run, a trimmed copy) get the client's additions too
    return [p for p in (preparer.prepared(part) for part in parts) if p is not None]


def as_sent(events: Iterable[Event], settings: Settings) -> Iterator[Event]:
    """``events`` as delivery would send them under ``settings`` and the OpenLineage client's configuration, one at
    a time (``events`` prints a long history as it is built)."""
    preparer = Preparer()
    for event in events:
        yield from outgoing(event, settings, preparer)
