"""Whether a transport's endpoint can be reached, sending nothing (``iceberg-lineage config --check``).

HTTP: a TCP connection to the URL's host and port, closed at once (no request: a probe must not count as an event
anywhere). Kafka: a metadata request with the transport's producer configuration. File: the file's folder is
writable. A composite is reached when each of its targets is.
"""
from __future__ import annotations

import logging
import os
import socket
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import urlsplit

from iceberg_lineage.redact import strip_userinfo

if TYPE_CHECKING:
    from openlineage.client.transport.transport import Transport

#: Seconds a connection or a metadata request may take.
REACH_TIMEOUT_S = 5.0


#: A check of one endpoint: why it cannot be reached, or ``None``.
Probe = Callable[[], "str | None"]


def probes(transport: Transport, timeout: float = REACH_TIMEOUT_S) -> list[Probe]:
    """A probe for each endpoint of ``transport``. They hold its settings only, not the transport: a Kafka
    transport's own producer, kept alive during the probe, would log each failed connection on stderr."""
    from openlineage.client.transport.composite import CompositeTransport
    from openlineage.client.transport.file import FileTransport
    from openlineage.client.transport.kafka import KafkaTransport

    if isinstance(transport, CompositeTransport):
        return [probe for child in transport.transports for probe in probes(child, timeout)]
    if isinstance(transport, KafkaTransport):
        return [partial(_kafka, dict(transport.kafka_config.config), timeout)]
    if isinstance(transport, FileTransport):
        return [partial(writable_folder, Path(transport.config.log_file_path).parent)]
    url = getattr(getattr(transport, "config", None), "url", None)
    return [partial(_tcp, str(url), timeout, str(transport.kind))] if url is not None else []


def _tcp(url: str, timeout: float, kind: str) -> str | None:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname or "", port), timeout=timeout).close()
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        return f"{kind} endpoint {strip_userinfo(url)}: cannot connect to {parts.hostname}:{port} ({why})"
    return None


def _kafka(config: dict[str, Any], timeout: float) -> str | None:
    """A metadata request on a producer of the transport's configuration, its librdkafka log held back (a broker
    that is down is logged every few milliseconds; the line returned says it once)."""
    from confluent_kafka import Producer

    quiet = logging.getLogger(f"{__name__}.librdkafka")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    try:
        Producer({**config, "logger": quiet}).list_topics(timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - KafkaException, whatever librdkafka says
        servers = config.get("bootstrap.servers", "?")
        return f"kafka bootstrap servers {servers}: no metadata within {timeout:g} s ({type(exc).__name__})"
    return None


def writable_folder(folder: Path) -> str | None:
    """Why ``folder`` (or, if it does not exist yet, the nearest folder above that does) cannot take a new file."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"folder {folder}: {existing} is not a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"folder {folder}: {existing} is not writable"
    return None
