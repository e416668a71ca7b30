"""The one delivery path of the hook, the scanner and ``events --emit``: send through openlineage-python, and keep
in a durable spool every event its transport finally refuses or cannot reach, for ``iceberg-lineage replay``.

Run ids are deterministic, so redelivering is harmless: no event is lost, and a duplicate can only repeat the runId
and eventType of an event already sent. Nothing overtakes: an event whose runId or dataset is still waiting in the
spool is spooled behind it, not sent. After a transport failure the breaker
(:mod:`~iceberg_lineage.delivery.breaker`) spools the rest of the batch, and every event for
``delivery.breaker_cooldown_s``, without trying; so does a caller's send deadline once it passed. How the
transports are hardened and tapped: :mod:`~iceberg_lineage.delivery.transports`.
"""
from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Literal, Sequence

from openlineage.client.serde import Serde

from iceberg_lineage.delivery.breaker import Breaker, past_deadline
from iceberg_lineage.delivery.client import describe_transport
from iceberg_lineage.delivery.spool import Spool, SpoolError, dataset_keys
from iceberg_lineage.lineage.profiles import shape
from iceberg_lineage.delivery.transports import (
    describe_error, is_disabled, is_rejection, prepare_client, send_tapped, transports_of,
)
from iceberg_lineage.redact import scrub

if TYPE_CHECKING:
    from openlineage.client import OpenLineageClient

    from iceberg_lineage.config import Settings

log = logging.getLogger(__name__)

Status = Literal["delivered", "spooled", "failed", "disabled"]

@dataclass(frozen=True)
class DeliveryResult:
    status: Status
    #: Why the transport did not take the event: exception type and HTTP status, never a message (URLs and
    #: headers can carry credentials).
    error: str | None = None
    #: The server refused this very event for good (a 4xx other than 408/429): not delivered, though kept.
    rejected: bool = False


@dataclass(frozen=True)
class DeliveryStats:
    delivered: int = 0
    spooled: int = 0
    failed: int = 0
    disabled: int = 0


class Delivery:
    """Synchronous, thread-safe delivery with a durable spool behind it (opened only once something must wait)."""

    def __init__(self, client: OpenLineageClient | None, settings: Settings) -> None:
        self._client = None if is_disabled(client) else client
        self.spool_path = Path(settings.spool.path).expanduser().resolve()
        self._max_bytes = settings.spool.max_bytes
        self._spool: Spool | None = None
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._spooling = False
        self._max_rejections = settings.spool.max_rejections
        #: Why the spool cannot be written, while it cannot (reported once per outage).
        self._unwritable: str | None = None
        self._destination = None if self._client is None else scrub(describe_transport(self._client))
        self._breaker = Breaker(settings.delivery.breaker_cooldown_s)
        self._settings = settings
        if self._client is not None:
            prepare_client(self._client)

    @property
    def synchronous(self) -> bool:
        """False when a transport only queues events (``async_http``): "delivered" then confirms nothing."""
        return self._client is None or all(t.kind != "async_http" for t in transports_of(self._client.transport))

    @property
    def stats(self) -> DeliveryStats:
        with self._lock:
            return DeliveryStats(**self._counts)

    def _shaped(self, event: Any) -> Sequence[Any]:
        """The events one built event goes out as under the consumer profile (:func:`~iceberg_lineage.lineage.
        profiles.shape`: the one place a profile is applied); what it trimmed or left out is logged."""
        shaped = shape(event, self._settings)
        for note in shaped.notes:
            log.warning("consumer profile %s: %s", self._settings.consumer.profile, note)
        return shaped.events

    def emit(self, event: Any) -> DeliveryResult:
        """Send one event, shaped by the consumer profile; if the transport refuses it or cannot be reached, spool
        it. Spool it unsent while the breaker is open, past the send deadline, or behind a spooled event of its run or
        of one of its datasets. An event sent as several reports the first of their results that is not delivered."""
        results = [self._emit(part) for part in self._shaped(event)]
        return next((r for r in results if r.status != "delivered"), results[-1])

    def _emit(self, event: Any) -> DeliveryResult:
        if self._client is None:
            return self._count(DeliveryResult("disabled"))
        why_not = ("not sent: delivery deadline passed" if past_deadline() else None) or self._breaker.why_open() \
            or self._behind(event)
        if why_not:
            return self._spool_one(event, why_not)
        client = self._client
        attempt = send_tapped(lambda: client.emit(event))
        if not attempt.errors:
            self._spooling = False
            self._breaker.reset()
            return self._count(DeliveryResult("delivered"))
        error = describe_error(attempt.errors[0])
        rejected = all(is_rejection(exc) for exc in attempt.errors)
        if not rejected:
            self._breaker.trip(error)
        return self._count(self._spool_event(attempt.event, error, rejected=rejected))

    def _behind(self, event: Any) -> str | None:
        """Why the event must wait in the spool: an older event of its runId or of one of its datasets does."""
        if self._spool is None and not Spool.exists(self.spool_path):
            return None
        doc = json.loads(Serde.to_json(event))
        try:
            waiting = self._open_spool().holds((doc.get("run") or {}).get("runId"), dataset_keys(doc))
        except SpoolError:  # said when an event must be written there; sending does not need it
            return None
        return "not sent: behind a spooled event of its run or dataset" if waiting else None

    def emit_many(self, events: Iterable[Any]) -> list[DeliveryResult]:
        """Send events in order. After the first one that is not delivered, the rest go straight to the spool:
        they keep their order behind it, and a down server costs one attempt per batch at most (none while the
        breaker stays open), not one per event."""
        results: list[DeliveryResult] = []
        for event in events:
            keep_trying = not results or results[-1].status in ("delivered", "disabled")
            results.append(self.emit(event) if keep_trying else self.spool(event))
        return results

    def export(self, events: Sequence[Any]) -> list[DeliveryResult]:
        """The emitter's exporter interface (:class:`iceberg_lineage.delivery.emitter.Exporter`): one batch."""
        return self.emit_many(events)

    def spool(self, event: Any, reason: str = "not sent") -> DeliveryResult:
        """Store an event for replay without sending it (a caller that must not wait on the network), prepared by
        the client exactly as ``emit`` would send it; ``reason`` is kept as its last error."""
        if self._client is None:
            return self._count(DeliveryResult("disabled"))
        results = [self._spool_one(part, reason) for part in self._shaped(event)]
        return next((r for r in results if r.status != "delivered"), results[-1])

    def _spool_one(self, event: Any, reason: str) -> DeliveryResult:
        client = self._client
        prepared = send_tapped(lambda: client.emit(event), dry=True).event  # type: ignore[union-attr]
        if prepared is None:  # the client's filters dropped it: nothing to keep
            return self._count(DeliveryResult("delivered"))
        return self._count(self._spool_event(prepared, reason))

    def _spool_event(self, event: Any, error: str, *, rejected: bool = False) -> DeliveryResult:
        """Keep an event that was not delivered; a rejection for good counts toward ``spool.max_rejections``."""
        body = Serde.to_json(event)
        doc = json.loads(body)
        run_id, event_type = (doc.get("run") or {}).get("runId"), doc.get("eventType")
        attempts = 1 if rejected else 0
        try:
            stored = self._open_spool().append(
                body, run_id, event_type, attempts=attempts, last_error=error, destination=self._destination,
                quarantined=attempts >= self._max_rejections,
            )
        except SpoolError as exc:
            return self._not_kept(exc, error)
        self._unwritable = None
        if stored:
            if not self._spooling:  # once per outage, not once per event
                log.warning("OpenLineage event not delivered (%s); spooling to %s until `iceberg-lineage replay`",
                            error, self.spool_path)
            self._spooling = True
            return DeliveryResult("spooled", error, rejected)
        why_not = f"spool full (spool.max_bytes={self._max_bytes})"
        log.error("OpenLineage event LOST (run %s, %s): not delivered (%s) and %s", run_id, event_type, error, why_not)
        return DeliveryResult("failed", f"{error}; {why_not}")

    def _not_kept(self, exc: SpoolError, error: str) -> DeliveryResult:
        """The spool cannot be written: say where and why (its errno's meaning) once per outage, which ends with
        the next successful write; the event counts as failed."""
        why_not = f"spool unusable at {exc.file}: {exc.reason}"
        with self._lock:
            first, self._unwritable = self._unwritable is None, why_not
        if first:
            log.error("cannot write the OpenLineage spool at %s: %s; events not delivered are LOST until it is "
                      "fixed (this one: %s)", exc.file, exc.reason, error)
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

    def shutdown(self) -> None:
        """The exporter interface's :meth:`close`."""
        self.close()
