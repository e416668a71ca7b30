"""Kafka delivery confirmed per message: openlineage-python's ``KafkaTransport`` with its ``emit`` replaced on the
instance by one that waits for the message's own delivery report and raises unless the broker acknowledged it.

openlineage-python's ``emit`` never raises: its delivery callback only logs, and its ``flush`` waits until
librdkafka's ``message.timeout.ms`` (300 s by default) and then returns normally, so an event the broker never
got counted as delivered. Here the transport's own configuration and producer are kept; what changes:

- ``message.timeout.ms`` (or its alias ``delivery.timeout.ms``) defaults to :data:`DEFAULT_MESSAGE_TIMEOUT_MS`
  when the configuration leaves it unset, so a down broker costs a bounded wait, after which the event is spooled;
- every message is confirmed before ``emit`` returns (the transport's ``flush`` setting no longer matters);
- the key is computed from the event's JSON, with the transport's rules (``messageKey``, else ``run:``/``job:``/
  ``dataset:`` + namespace/name, a run keyed by its root or parent job), so a replayed event keeps the key it was
  first sent with, and an event whose ``parent`` facet is a plain dict gets one too (openlineage-python's keying
  reads only its typed events and fails on a dict facet).
"""
from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

from openlineage.client.serde import Serde

if TYPE_CHECKING:
    from openlineage.client.transport.kafka import KafkaTransport

#: librdkafka's message timeout when the transport's configuration sets none (librdkafka's own is 300 s).
DEFAULT_MESSAGE_TIMEOUT_MS = 30_000
_TIMEOUT_KEYS = ("message.timeout.ms", "delivery.timeout.ms")
#: Seconds past the message timeout that ``emit`` waits for the report (librdkafka scans for timeouts each second).
REPORT_SLACK_S = 5.0
_CONFIRMING = "_iceberg_lineage_confirming"


class KafkaNotAcknowledged(Exception):
    """The broker did not acknowledge a message: the error of its delivery report (a librdkafka error name such as
    ``_MSG_TIMED_OUT``, never a message text), or no report in time."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def message_timeout_s(config: dict[str, Any]) -> float:
    for key in _TIMEOUT_KEYS:
        if config.get(key) not in (None, ""):
            return int(config[key]) / 1000
    return DEFAULT_MESSAGE_TIMEOUT_MS / 1000


def confirm_deliveries(transport: KafkaTransport) -> None:
    """Make the transport's ``emit`` return only once the broker acknowledged the message, and raise
    :class:`KafkaNotAcknowledged` otherwise; bound its message timeout. Once per transport."""
    if getattr(transport, _CONFIRMING, False):
        return
    config = transport.kafka_config.config
    if all(config.get(key) in (None, "") for key in _TIMEOUT_KEYS):
        config["message.timeout.ms"] = DEFAULT_MESSAGE_TIMEOUT_MS
        if transport.producer is not None:  # built with librdkafka's default: nothing was produced on it yet
            transport._setup_producer(config)
    transport.emit = lambda event: _emit_confirmed(transport, event)  # type: ignore[method-assign]
    setattr(transport, _CONFIRMING, True)


def _emit_confirmed(transport: KafkaTransport, event: Any) -> None:
    if transport.producer is None:
        transport._setup_producer(transport.kafka_config.config)
    producer = transport.producer
    body = Serde.to_json(event)
    report: dict[str, Any] = {}
    reported = threading.Event()

    def on_delivery(err: Any, _msg: Any) -> None:
        report["error"] = err
        reported.set()

    producer.produce(topic=transport.topic, key=transport.message_key or message_key(json.loads(body)),
                     value=body.encode("utf-8"), on_delivery=on_delivery)
    producer.flush(message_timeout_s(transport.kafka_config.config) + REPORT_SLACK_S)
    if not reported.is_set():
        producer.purge()  # not kept behind our back: it is spooled, and a later delivery would overtake the spool
        producer.poll(0)
        raise KafkaNotAcknowledged("no delivery report")
    if report["error"] is not None:
        raise KafkaNotAcknowledged(report["error"].name())


def message_key(doc: dict[str, Any]) -> str | None:
    """openlineage-python's Kafka key of an event, from its JSON: runs of one job, and the runs of a parent chain,
    share a key (so a partition, so their order)."""
    if "dataset" in doc:
        return f"dataset:{doc['dataset']['namespace']}/{doc['dataset']['name']}"
    job = doc.get("job") or {}
    if "run" not in doc:
        return f"job:{job.get('namespace')}/{job.get('name')}" if job else None
    parent = ((doc["run"].get("facets") or {}).get("parent")) or {}
    keyed = (parent.get("root") or {}).get("job") or parent.get("job") or {}
    if not keyed.get("namespace") or not keyed.get("name"):
        keyed = job
    return f"run:{keyed.get('namespace')}/{keyed.get('name')}"
