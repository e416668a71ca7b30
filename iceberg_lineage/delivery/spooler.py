"""The spool as a transport: :class:`SpoolTransport` wraps the breaker and the configured transport, and keeps in
the durable spool (:mod:`~iceberg_lineage.delivery.spool`) every event they refuse or cannot take, for
``iceberg-lineage replay``. Its ``emit`` returns the event's :class:`~iceberg_lineage.delivery.results.
DeliveryResult` and leaves it in the send under way (:func:`~iceberg_lineage.delivery.transports.attempt`).

Nothing overtakes: an event whose runId or dataset is still waiting in the spool is spooled behind it, not sent;
so is every event past a caller's send deadline, and every event a caller asks to keep unsent (:func:`unsent`). A
rejection for good counts toward ``spool.max_rejections``; the spool's outages are logged once each.
"""
from __future__ import annotations

import contextvars
import enum
import logging
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import attr

from iceberg_lineage.config import DEFAULT_MAX_REJECTIONS
from iceberg_lineage.delivery.breaker import past_deadline
from iceberg_lineage.delivery.failures import NotSent, describe_error, is_rejection
from iceberg_lineage.delivery.results import DeliveryResult
from iceberg_lineage.delivery.spool import Spool, SpoolError
from iceberg_lineage.delivery.transports import Sendable, WrapConfig, Wrapping, current_attempt, send
from iceberg_lineage.lineage.serde import to_json

log = logging.getLogger("iceberg_lineage.delivery.delivery")

_unsent: contextvars.ContextVar[str | None] = contextvars.ContextVar("iceberg_lineage_unsent", default=None)


@contextmanager
def unsent(reason: str) -> Iterator[None]:
    """Events sent inside are spooled without being tried (a caller that must not wait on the network), with
    ``reason`` as their last error."""
    token = _unsent.set(reason)
    try:
        yield
    finally:
        _unsent.reset(token)


def event_keys(event: Sendable) -> tuple[str | None, str | None, list[tuple[str, str]]]:
    """An event's runId, eventType and the (namespace, name) of its datasets: what orders it in the spool."""
    run, kind = getattr(event, "run", None), getattr(event, "eventType", None)
    found = [*(getattr(event, "inputs", None) or ()), *(getattr(event, "outputs", None) or ())]
    if getattr(event, "dataset", None) is not None:
        found.append(event.dataset)  # type: ignore[union-attr]
    keys: list[tuple[str, str]] = []
    for dataset in found:
        pair = (str(dataset.namespace), str(dataset.name))
        if pair not in keys:
            keys.append(pair)
    run_id = getattr(run, "runId", None)
    return (None if run_id is None else str(run_id), kind.value if isinstance(kind, enum.Enum) else kind, keys)


@attr.define
class SpoolConfig(WrapConfig):
    #: Required: the caller passes ``spool.path`` (per user by default), so no folder hides here.
    path: str
    max_bytes: int | None = None
    max_rejections: int = DEFAULT_MAX_REJECTIONS
    #: The transport the events are meant for, without credentials (kept with each spooled event).
    destination: str | None = None


class SpoolTransport(Wrapping):
    """Thread-safe; the spool is opened only once something must wait in it."""

    kind = "iceberg_lineage_spool"
    config_class = SpoolConfig

    def __init__(self, config: SpoolConfig) -> None:
        super().__init__(config)
        self.path = Path(config.path).expanduser().resolve()
        self._config = config
        self._spool: Spool | None = None
        self._lock = threading.Lock()
        self._spooling = False
        #: Why the spool cannot be written, while it cannot (reported once per outage).
        self._unwritable: str | None = None

    def emit(self, event: Sendable) -> DeliveryResult:
        current = current_attempt()
        result = self._deliver(event)
        if current is not None:
            current.result = result
        return result

    def _deliver(self, event: Sendable) -> DeliveryResult:
        why_not = _unsent.get() or ("not sent: delivery deadline passed" if past_deadline() else None) \
            or self.why_not_sending() or self._behind(event)
        if why_not:
            return self._keep(event, why_not)
        errors = send(self.transport, event)
        if not errors:
            self._spooling = False
            return DeliveryResult("delivered")
        if isinstance(errors[0], NotSent):
            return self._keep(event, errors[0].reason)
        rejected = all(is_rejection(exc) for exc in errors)
        return self._keep(event, describe_error(errors[0]), rejected=rejected)

    def _behind(self, event: Sendable) -> str | None:
        """Why the event must wait in the spool: an older event of its runId or of one of its datasets does."""
        if self._spool is None and not Spool.exists(self.path):
            return None
        run_id, _, datasets = event_keys(event)
        try:
            waiting = self.open().holds(run_id, datasets)
        except SpoolError:  # said when an event must be written there; sending does not need it
            return None
        return "not sent: behind a spooled event of its run or dataset" if waiting else None

    def _keep(self, event: Sendable, error: str, *, rejected: bool = False) -> DeliveryResult:
        """Keep an event that was not delivered; a rejection for good counts toward ``spool.max_rejections``."""
        run_id, event_type, _ = event_keys(event)
        attempts = 1 if rejected else 0
        try:
            stored = self.open().append(
                to_json(event), run_id, event_type, attempts=attempts, last_error=error,
                destination=self._config.destination, quarantined=attempts >= self._config.max_rejections,
            )
        except SpoolError as exc:
            return self._not_kept(exc, error)
        self._unwritable = None
        if stored:
            if not self._spooling:  # once per outage, not once per event
                log.warning("OpenLineage event not delivered (%s); spooling to %s until `iceberg-lineage replay`",
                            error, self.path)
            self._spooling = True
            return DeliveryResult("spooled", error, rejected)
        why_not = f"spool full (spool.max_bytes={self._config.max_bytes})"
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

    def open(self) -> Spool:
        with self._lock:
            if self._spool is None:
                self._spool = Spool(self.path, self._config.max_bytes)
            return self._spool

    def close(self, timeout: float = -1) -> bool:
        """Close the spool; the wrapped transport stays the client's owner's to close (async transports flush
        there)."""
        with self._lock:
            if self._spool is not None:
                self._spool.close()
                self._spool = None
        return True
