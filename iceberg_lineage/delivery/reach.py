"""Whether a transport's endpoint can be reached, sending nothing (``iceberg-lineage config --check``).

HTTP: a TCP connection to the URL's host and port, closed at once (no request: a probe must not count as an event
anywhere). Kafka: a metadata request on the transport's own producer. File: the folder of the file is writable.
A composite is reached when each of its targets is.
"""
from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator
from urllib.parse import urlsplit

from iceberg_lineage.redact import strip_userinfo

if TYPE_CHECKING:
    from openlineage.client.transport.transport import Transport

#: Seconds a connection or a metadata request may take.
REACH_TIMEOUT_S = 5.0


def unreachable(transport: Transport, timeout: float = REACH_TIMEOUT_S) -> Iterator[str]:
    """One line for each endpoint of ``transport`` that cannot be reached (nothing: all can)."""
    from openlineage.client.transport.composite import CompositeTransport
    from openlineage.client.transport.file import FileTransport
    from openlineage.client.transport.kafka import KafkaTransport

    if isinstance(transport, CompositeTransport):
        for child in transport.transports:
            yield from unreachable(child, timeout)
    elif isinstance(transport, KafkaTransport):
        yield from _kafka(transport, timeout)
    elif isinstance(transport, FileTransport):
        yield from _folder(Path(transport.config.log_file_path).parent)
    elif (url := getattr(getattr(transport, "config", None), "url", None)) is not None:
        yield from _tcp(str(url), timeout, transport.kind)


def _tcp(url: str, timeout: float, kind: object) -> Iterator[str]:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname or "", port), timeout=timeout).close()
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        yield f"{kind} endpoint {strip_userinfo(url)}: cannot connect to {parts.hostname}:{port} ({why})"


def _kafka(transport: Any, timeout: float) -> Iterator[str]:
    servers = transport.kafka_config.config.get("bootstrap.servers", "?")
    if transport.producer is None:
        return
    try:
        transport.producer.list_topics(timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - KafkaException, whatever librdkafka says
        yield f"kafka bootstrap servers {servers}: no metadata within {timeout:g} s ({type(exc).__name__})"


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


def _folder(folder: Path) -> Iterator[str]:
    why = writable_folder(folder)
    if why is not None:
        yield why
