"""What delivery would send, without sending it: for the commands that print events (``events``, ``scan --dry-run``),
so that what is printed is what is sent.

:class:`~iceberg_lineage.delivery.delivery.Delivery` sends an event in two steps: the consumer profile and the byte
budget (:func:`~iceberg_lineage.lineage.shaping.shape`), then openlineage-python's ``OpenLineageClient.emit``, which
adds what its configuration asks for (run and job tags, its own ``openlineage_client_version`` tag, environment
variables, the source code location), reduces datasets and applies its filters. :func:`as_sent` takes the same two
steps, with a client of the same configuration whose transport keeps each event instead of sending it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from openlineage.client import OpenLineageClient
from openlineage.client.transport.transport import Transport

from iceberg_lineage.lineage.shaping import shape

if TYPE_CHECKING:
    from iceberg_lineage.config import Settings
    from iceberg_lineage.lineage.serde import Event


class _Keep(Transport):
    """Keeps every event the client hands it, as a transport would get it."""

    kind = "iceberg_lineage_keep"

    def __init__(self) -> None:
        self.kept: list[Event] = []

    def emit(self, event: Event) -> None:  # type: ignore[override]
        self.kept.append(event)


def as_sent(events: Iterable[Event], settings: Settings) -> list[Event]:
    """``events`` as delivery would hand them to the transport under ``settings`` and the OpenLineage client's
    configuration (``openlineage.yml`` or ``OPENLINEAGE__*``; its transport is not built): shaped, then prepared by
    the client; none for an event the profile or the client's filters drop."""
    keep = _Keep()
    client = OpenLineageClient(transport=keep)
    client.transport = keep  # OPENLINEAGE_DISABLED gave it a no-op transport: a preview still shows the events
    for event in events:
        for part in shape(event, settings):
            client.emit(part)
    return keep.kept
