"""Kafka delivery confirmed per message: a transport wrapping openlineage-python's ``KafkaTransport`` that sends
each message on the wrapped transport's producer and waits for its own delivery report, raising unless the broker
acknowledged it.

openlineage-python's ``emit`` never raises: its delivery callback only logs, and its ``flush`` waits until
librdkafka's ``message.timeout.ms`` (300 s by default) and then returns normally, so an event the broker never
got counted as delivered. The transport's own configuration is kept; what changes:

- ``message.timeout.ms`` (or its alias ``delivery.timeout.ms``) defaults to :data:`DEFAULT_MESSAGE_TIMEOUT_MS`
  in the configuration the wrapped transport is built from, so a down broker costs a bounded wait, after which the
  event is spooled;
- every message is confirmed before ``emit`` returns (the transport's ``flush`` setting no longer matters);
- the key is computed from the event's JSON, with the transport's rules (``messageKey``, else ``run:``/``job:``/
  ``dataset:`` + namespace/name, a run keyed by its root or parent job), so a replayed event keeps the key it was
  first sent with, and an event whose ``parent`` facet is a plain dict gets one too (openlineage-python's keying
  reads only its typed events and fails on a dict facet).
"""
from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any, Union

import attr
from openlineage.client.transport.kafka import KafkaTransport

from iceberg_lineage.delivery.failures import KafkaNotAcknowledged
from iceberg_lineage.delivery.transports import Sendable, Wrapping, type_of
from iceberg_lineage.jsontypes import JsonObject
from iceberg_lineage.lineage.serde import to_json

if TYPE_CHECKING:
    from confluent_kafka import KafkaError, Message

#: librdkafka's message timeout when the transport's configuration sets none (librdkafka's own is 300 s).
DEFAULT_MESSAGE_TIMEOUT_MS = 30_000
_TIMEOUT_KEYS = ("message.timeout.ms", "delivery.timeout.ms")
#: Seconds past the message timeout that ``emit`` waits for the report (librdkafka scans for timeouts each second).
REPORT_SLACK_S = 5.0


def message_timeout_s(config: dict[str, Any]) -> float:
    for key in _TIMEOUT_KEYS:
        if config.get(key) not in (None, ""):
            return int(config[key]) / 1000
    return DEFAULT_MESSAGE_TIMEOUT_MS / 1000


def _bounded(producer_config: dict[str, Any]) -> dict[str, Any]:
    if any(producer_config.get(key) not in (None, "") for key in _TIMEOUT_KEYS):
        return producer_config
    return {**producer_config, "message.timeout.ms": DEFAULT_MESSAGE_TIMEOUT_MS}


def confirmed_kafka(kafka: Union[dict[str, Any], KafkaTransport]) -> dict[str, Any]:
    """The configuration of a :class:`ConfirmedKafkaTransport` around a ``kafka`` transport configuration (or the
    configuration of a built one), its message timeout bounded."""
    if isinstance(kafka, KafkaTransport):
        kafka = {"type": "kafka", **attr.asdict(kafka.kafka_config)}
    return {"type": type_of(ConfirmedKafkaTransport),
            "transport": {**kafka, "config": _bounded(dict(kafka.get("config") or {}))}}


class ConfirmedKafkaTransport(Wrapping):
    """Sends on the wrapped ``KafkaTransport``'s producer and returns only once the broker acknowledged the
    message; raises :class:`KafkaNotAcknowledged` otherwise."""

    kind = "iceberg_lineage_kafka"

    def emit(self, event: Sendable) -> None:
        kafka = self.transport
        assert isinstance(kafka, KafkaTransport)
        if kafka.producer is None:  # openlineage-python builds it lazily in some contexts, and drops it on close
            kafka._setup_producer(kafka.kafka_config.config)
        producer = kafka.producer
        body = to_json(event)
        report: dict[str, KafkaError | None] = {}
        reported = threading.Event()

        def on_delivery(err: KafkaError | None, _msg: Message) -> None:
            report["error"] = err
            reported.set()

        producer.produce(topic=kafka.topic, key=kafka.message_key or message_key(json.loads(body)),
                         value=body.encode("utf-8"), on_delivery=on_delivery)
        producer.flush(message_timeout_s(kafka.kafka_config.config) + REPORT_SLACK_S)
        if not reported.is_set():
            producer.purge()  # not kept behind our back: it is spooled, and a later delivery would overtake the spool
            producer.poll(0)
            raise KafkaNotAcknowledged("no delivery report")
        error = report["error"]
        if error is not None:
            raise KafkaNotAcknowledged(error.name())


def message_key(doc: JsonObject) -> str | None:
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
