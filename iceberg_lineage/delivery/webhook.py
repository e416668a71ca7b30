"""Schema-change alerts out: one log line each, and with ``alerts.webhook`` a POST of the alert as JSON (its fields,
``id`` and ``text``, which a Slack-style incoming webhook shows as it is).

Delivery is at least once, through the machinery events use: openlineage-python's HTTP transport, created by its
factory, hardened and tapped as for events (:func:`~iceberg_lineage.delivery.pipeline.configured_dict`: urllib3
retries, ``alerts.webhook_retries`` of them), the circuit breaker, and a spool of its own (``<spool.path>/alerts``,
so that ``replay`` never sends an alert to the lineage server). Before each new alert the waiting ones are replayed
in order (:func:`~iceberg_lineage.delivery.replay.replay_to`), so an outage of the endpoint loses nothing; a
receiver drops the duplicates a retry may cause by ``id``.
"""
from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from iceberg_lineage.delivery.breaker import Breaker
from iceberg_lineage.delivery.failures import describe_error, is_rejection
from iceberg_lineage.delivery.pipeline import configured_dict
from iceberg_lineage.delivery.replay import replay_to
from iceberg_lineage.delivery.spool import Spool, SpoolError
from iceberg_lineage.delivery.transports import StoredEvent, create, send
from iceberg_lineage.jsontypes import JsonObject
from iceberg_lineage.quality.alerts import Alert
from iceberg_lineage.redact import protect

if TYPE_CHECKING:
    from iceberg_lineage.config import Settings

log = logging.getLogger("iceberg_lineage.alerts")
#: The alert spool's directory under ``spool.path``.
ALERTS_DIR = "alerts"


class Webhook:
    """Thread-safe sender of alerts to one webhook URL (a secret: it never reaches a log or an error line)."""

    def __init__(self, settings: Settings) -> None:
        from openlineage.client.transport.http_common import DEFAULT_RETRY_CONFIG

        url = settings.alerts.webhook
        if not url:
            raise ValueError("alerts.webhook is not set")
        protect({"alerts_webhook_secret": url})
        retries = settings.alerts.webhook_retries
        retry = {**DEFAULT_RETRY_CONFIG, "total": retries, "connect": retries, "read": retries}
        timeout = settings.alerts.webhook_timeout_s  # one POST's whole time, retries included
        self.transport = create(configured_dict({"type": "http", "url": url, "endpoint": "", "retry": retry,
                                                 "timeout": timeout}, tap=True, deadline_s=timeout))
        self.spool_path = Path(settings.spool.path).expanduser().resolve() / ALERTS_DIR
        self._max_bytes, self._max_rejections = settings.spool.max_bytes, settings.spool.max_rejections
        self._breaker = Breaker(settings.delivery.breaker_cooldown_s)
        self._lock = threading.Lock()

    def send(self, alerts: Sequence[Alert]) -> list[str]:
        """POST each alert after the ones still waiting: ``delivered``, ``spooled`` or ``failed`` (the spool
        cannot be written: said in the log) per alert."""
        with self._lock:
            waiting = self.flush()
            return [self._send_one(alert, waiting_before=waiting) for alert in alerts]

    def flush(self) -> int:
        """Replay the waiting alerts (unless the breaker is open); how many still wait."""
        if not Spool.exists(self.spool_path):
            return 0
        if self._breaker.why_open() is None:
            result = replay_to(self.spool_path, self.transport, "webhook", max_rejections=self._max_rejections)
            if result.error and result.remaining:
                self._breaker.trip(result.error)
        with Spool(self.spool_path) as spool:
            return spool.count()

    def _send_one(self, alert: Alert, *, waiting_before: int) -> str:
        body = alert.as_json()
        why_not = self._breaker.why_open() or ("behind a waiting alert" if waiting_before else None)
        if why_not is not None:
            return self._spool(body, why_not)
        errors = send(self.transport, StoredEvent(body))
        if not errors:
            self._breaker.reset()
            return "delivered"
        error = describe_error(errors[0])
        rejected = all(is_rejection(exc) for exc in errors)
        if not rejected:
            self._breaker.trip(error)
        return self._spool(body, error, rejected=rejected)

    def _spool(self, body: JsonObject, error: str, *, rejected: bool = False) -> str:
        try:
            with Spool(self.spool_path, self._max_bytes) as spool:
                stored = spool.append(json.dumps(body, sort_keys=True), None, "alert", attempts=int(rejected),
                                      last_error=error, destination="webhook",
                                      quarantined=int(rejected) >= self._max_rejections)
        except SpoolError as exc:
            log.error("schema alert %s LOST: not delivered (%s) and the alert spool at %s is unusable: %s",
                      body["id"], error, exc.file, exc.reason)
            return "failed"
        if not stored:
            log.error("schema alert %s LOST: not delivered (%s) and the spool is full", body["id"], error)
            return "failed"
        log.warning("schema alert %s not delivered to the webhook (%s); spooled in %s until it is reachable",
                    body["id"], error, self.spool_path)
        return "spooled"


_webhooks: dict[tuple[str, str], Webhook] = {}
_webhooks_lock = threading.Lock()


def webhook_for(settings: Settings) -> Webhook | None:
    """The process's sender for ``alerts.webhook`` (one per URL and spool), or ``None`` when none is configured."""
    if not settings.alerts.webhook:
        return None
    key = (settings.alerts.webhook, settings.spool.path)
    with _webhooks_lock:
        if key not in _webhooks:
            _webhooks[key] = Webhook(settings)
        return _webhooks[key]


def announce(alerts: Iterable[Alert], settings: Settings) -> list[str]:
    """Log one line per alert and POST them to ``alerts.webhook`` when it is configured; the webhook statuses."""
    alerts = list(alerts)
    for alert in alerts:
        log.warning("%s", alert.text)
    webhook = webhook_for(settings) if alerts else None
    return webhook.send(alerts) if webhook is not None else []
