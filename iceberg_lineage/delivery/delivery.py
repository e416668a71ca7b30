"""The one delivery path of the hook, the scanner and ``events --emit``: prepare and shape each event for the
consumer (:func:`~iceberg_lineage.delivery.preview.outgoing`, which the commands that print events use too), then
send it through openlineage-python's client over our transport chain (:mod:`~iceberg_lineage.delivery.pipeline`): the
spool keeps every event the configured transport finally refuses or cannot reach, for ``iceberg-lineage replay``,
and the breaker spools without trying for ``delivery.breaker_cooldown_s`` after a transport failure; so does a
caller's send deadline once it passed.

Run ids are deterministic, so redelivering is harmless: no event is lost, and a duplicate can only repeat the runId
and eventType of an event already sent. Nothing overtakes: an event whose runId or dataset is still waiting in the
spool is spooled behind it, not sent.
"""
from __future__ import annotations

import dataclasses
import threading
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from iceberg_lineage.delivery.client import describe_transport
from iceberg_lineage.delivery.pipeline import delivery_client
from iceberg_lineage.delivery.preview import Preparer, outgoing
from iceberg_lineage.delivery.results import DeliveryResult, DeliveryStats, Status
from iceberg_lineage.delivery.spooler import unsent
from iceberg_lineage.delivery.transports import attempt, is_disabled, transports_of
from iceberg_lineage.redact import scrub

if TYPE_CHECKING:
    from openlineage.client import OpenLineageClient
    from openlineage.client.transport.transport import Transport

    from iceberg_lineage.config import Settings
    from iceberg_lineage.lineage.serde import Event

__all__ = ["Delivery", "DeliveryResult", "DeliveryStats", "Status"]


class Delivery:
    """Synchronous, thread-safe delivery with a durable spool behind it (opened only once something must wait)."""

    def __init__(self, client: OpenLineageClient | None, settings: Settings) -> None:
        self._configured = None if client is None or is_disabled(client) else client
        destination = None if self._configured is None else scrub(describe_transport(self._configured))
        self._client = None if self._configured is None else delivery_client(self._configured, settings, destination)
        self._preparer = None if self._configured is None else Preparer(self._configured.user_defined_config)
        self.spool_path = Path(settings.spool.path).expanduser().resolve()
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._settings = settings
        #: What each queueing transport had counted before this delivery used it (:meth:`settled` counts the rest).
        self._queued_before = {id(t): dict(t.get_stats()) for t in self._queueing()}  # type: ignore[attr-defined]

    def _queueing(self) -> list[Transport]:
        """The transports that only queue events (``async_http``): "delivered" means queued there."""
        if self._configured is None:
            return []
        return [t for t in transports_of(self._configured.transport) if t.kind == "async_http"]

    @property
    def synchronous(self) -> bool:
        """False when a transport only queues events (``async_http``): "delivered" then confirms nothing until
        :meth:`settled`."""
        return not self._queueing()

    @property
    def stats(self) -> DeliveryStats:
        with self._lock:
            return DeliveryStats(**self._counts)

    def emit(self, event: Event) -> DeliveryResult:
        """Send one event, shaped by the consumer profile; if the transport refuses it or cannot be reached, spool
        it. Spool it unsent while the breaker is open, past the send deadline, or behind a spooled event of its run
        or of one of its datasets. An event sent as several reports the first of their results that is not
        delivered."""
        return self._each(event, None)

    def spool(self, event: Event, reason: str = "not sent") -> DeliveryResult:
        """Store an event for replay without sending it (a caller that must not wait on the network), prepared by
        the client exactly as ``emit`` would send it; ``reason`` is kept as its last error."""
        return self._each(event, reason)

    def _each(self, event: Event, unsent_reason: str | None) -> DeliveryResult:
        if self._client is None:
            return self._count(DeliveryResult("disabled"))
        assert self._preparer is not None
        results = [self._send(part, unsent_reason) for part in outgoing(event, self._settings, self._preparer)]
        # none when the profile sends nothing for it (a START without a parent under openmetadata): nothing is owed
        return next((r for r in results if r.status != "delivered"), DeliveryResult("delivered"))

    def _send(self, event: Event, unsent_reason: str | None) -> DeliveryResult:
        client = self._client
        assert client is not None
        with attempt() as current:
            if unsent_reason is None:
                client.emit(event)
            else:
                with unsent(unsent_reason):
                    client.emit(event)
        result = current.result
        # no result: the client's filters dropped the event, nothing to send or keep
        return self._count(result if isinstance(result, DeliveryResult) else DeliveryResult("delivered"))

    def emit_many(self, events: Iterable[Event]) -> list[DeliveryResult]:
        """Send events in order. After the first one that is not delivered, the rest go straight to the spool:
        they keep their order behind it, and a down server costs one attempt per batch at most (none while the
        breaker stays open), not one per event."""
        results: list[DeliveryResult] = []
        for event in events:
            keep_trying = not results or results[-1].status in ("delivered", "disabled")
            results.append(self.emit(event) if keep_trying else self.spool(event))
        return results

    def export(self, events: Sequence[Event]) -> list[DeliveryResult]:
        """The emitter's exporter interface (:class:`iceberg_lineage.delivery.emitter.Exporter`): one batch."""
        return self.emit_many(events)

    def _count(self, result: DeliveryResult) -> DeliveryResult:
        with self._lock:
            self._counts[result.status] += 1
            self._counts["rejected"] += result.rejected
        return result

    def settled(self, timeout: float = -1) -> DeliveryStats:
        """The counts once every queueing transport (``async_http``) has flushed: an event it only queued counts as
        delivered once it confirmed it, and as failed when it gave up on it (it keeps nothing for the spool) or the
        flush timed out with it still pending."""
        stats = self.stats
        unconfirmed = 0
        for transport in self._queueing():
            transport.wait_for_completion(timeout)  # type: ignore[attr-defined]
            now, before = transport.get_stats(), self._queued_before[id(transport)]  # type: ignore[attr-defined]
            unconfirmed += sum(now[k] - before[k] for k in ("failed", "pending"))
        unconfirmed = min(unconfirmed, stats.delivered)
        return dataclasses.replace(stats, delivered=stats.delivered - unconfirmed, failed=stats.failed + unconfirmed)

    def close(self) -> None:
        """Close the spool. The configured transport stays the caller's to close (async transports flush there)."""
        if self._client is not None:
            self._client.transport.close()

    def shutdown(self) -> None:
        """The exporter interface's :meth:`close`."""
        self.close()
