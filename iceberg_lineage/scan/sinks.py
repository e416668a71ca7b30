"""Where a scan's events go: the one delivery path, stdout for a dry run (the events as delivery would send them),
or any function that takes one event.

A sink takes one table's events at a time, in commit order, so that a table's batch goes through
:meth:`~iceberg_lineage.delivery.delivery.Delivery.emit_many` and a down server costs one round of retries per
table, not one per event.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:
    from iceberg_lineage.config import Settings

#: Sink statuses after which a snapshot counts as emitted ("printed": a dry run, whose state is read-only;
#: "queued": taken by a transport that confirms only when it flushes, ``async_http``; "rejected": refused for good
#: by the server but kept in the spool, so sending it again would change nothing; the scan reports it and exits 1).
ADVANCING = frozenset({"delivered", "spooled", "printed", "queued", "rejected"})

#: Sends one table's events (JSON, in commit order) and returns a status per event it took: "delivered",
#: "spooled", "queued", "rejected", "failed", "disabled" or "printed". It may stop after the first status not in
#: :data:`ADVANCING`; the scanner records only the events before that one.
Sink = Callable[[Sequence[str]], Sequence[str]]


def taken(statuses: Sequence[str], sent: int) -> tuple[int, str | None]:
    """How many of ``sent`` events count as emitted (the prefix before the first status not in
    :data:`ADVANCING`), and the status that stopped the rest (None when all were taken)."""
    for n, status in enumerate(statuses):
        if status not in ADVANCING:
            return n, status
    n = len(statuses)
    return n, (None if n >= sent else "failed")


def event_sink(send: Callable[[str], str]) -> Sink:
    """A sink from a function that sends one event and returns its status: it stops at the first one not taken."""

    def sink(texts: Sequence[str]) -> list[str]:
        statuses: list[str] = []
        for text in texts:
            statuses.append(send(text))
            if statuses[-1] not in ADVANCING:
                break
        return statuses

    return sink


def delivery_sink(delivery: Any) -> Sink:
    """Send through :class:`~iceberg_lineage.delivery.delivery.Delivery` (the one delivery path), a table at a time:
    after the first event not delivered, the rest of the table go straight to the spool, in order behind it. What a
    queueing transport took is "queued", not "delivered": it confirms nothing before its flush."""
    from iceberg_lineage.lineage.serde import from_json

    delivered = "delivered" if delivery.synchronous else "queued"
    return lambda texts: ["rejected" if result.rejected else delivered if result.status == "delivered" else
                          result.status for result in delivery.emit_many(from_json(text) for text in texts)]


def printing_sink(write: Callable[[str], Any], settings: Settings) -> Sink:
    """Dry run: each event as the delivery path would send it (shaped for the consumer profile, prepared by the
    OpenLineage client: :func:`~iceberg_lineage.delivery.preview.outgoing`), one JSON line each; nothing sent,
    nothing recorded."""
    from iceberg_lineage.delivery.preview import Preparer, outgoing
    from iceberg_lineage.lineage.serde import from_json, to_json

    preparer = Preparer()

    def sink(texts: Sequence[str]) -> list[str]:
        for text in texts:
            for event in outgoing(from_json(text), settings, preparer):
                write(to_json(event) + "\n")
        return ["printed"] * len(texts)

    return sink
