"""The one OpenLineageClient factory of the CLI, hooks, scanner and notebook.

Transports and their configuration belong to openlineage-python (``openlineage.yml``, ``OPENLINEAGE_CONFIG``,
``OPENLINEAGE_URL``, ``OPENLINEAGE__TRANSPORT__*``, ``OPENLINEAGE_DISABLED``). Only when its own discovery finds no
transport do we replace its console fallback with a JSON Lines file, ``events.jsonl`` beside the state file: events
printed to a console are lost, events in a file can be replayed. The fallback is announced once on stderr. A broken
configuration is a :class:`~iceberg_lineage.errors.ConfigError` naming the file or variable and the key
(:mod:`.config_errors`).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import IO

from openlineage.client import OpenLineageClient
from openlineage.client.transport.file import FileConfig, FileTransport
from openlineage.client.transport.noop import NoopConfig, NoopTransport

from iceberg_lineage.config import load_settings
from iceberg_lineage.delivery.config_errors import checked_openlineage_file, openlineage_errors
from iceberg_lineage.extras import require
from iceberg_lineage.redact import protect, strip_userinfo

_announced = False


def _discovered_transport() -> dict:
    """The transport settings openlineage-python's own discovery finds (config file or ``OPENLINEAGE__*``)."""
    # A placeholder transport keeps the probe from creating (and warning about) a console transport.
    checked_openlineage_file()  # openlineage-python would log a broken file and go on without it
    probe = OpenLineageClient(transport=NoopTransport(NoopConfig()))
    with openlineage_errors():
        return dict(probe.config.transport or {})


def openlineage_configured() -> bool:
    """Whether openlineage-python's own discovery finds a transport (config file, env vars or ``OPENLINEAGE_URL``)."""
    return bool(os.environ.get("OPENLINEAGE_URL")) or bool(_discovered_transport().get("type"))


def disabled() -> bool:
    return os.environ.get("OPENLINEAGE_DISABLED", "").strip().lower() == "true"


def make_client(*, default_path: Path | str | None = None, stderr: IO[str] | None = None) -> OpenLineageClient:
    """An OpenLineageClient configured the openlineage-python way, else writing JSON Lines to ``default_path``
    (``events.jsonl`` beside the state file, in the per-user state folder by default). ``OPENLINEAGE_DISABLED=true``
    gives a client that sends nothing."""
    global _announced
    if disabled() or openlineage_configured():
        # openlineage-python logs the transport's URL and headers when it builds it: register their secrets first
        transport = _discovered_transport()
        protect({**transport, "url": os.environ.get("OPENLINEAGE_URL", ""),
                 "api_key": os.environ.get("OPENLINEAGE_API_KEY", "")})
        if transport.get("type") == "kafka":
            require("the kafka transport", "confluent_kafka")
        with openlineage_errors():
            return OpenLineageClient()
    path = Path(default_path or load_settings().state.events_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not _announced:
        print(
            f"iceberg-lineage: no OpenLineage transport configured; appending events to {path} "
            "(configure one with openlineage.yml or OPENLINEAGE_URL)",
            file=stderr or sys.stderr,
        )
        _announced = True
    return OpenLineageClient(transport=FileTransport(FileConfig(log_file_path=str(path), append=True)))


def describe_transport(client: OpenLineageClient) -> str:
    """Where the client's events go, for one-line summaries."""
    transport = client.transport
    if isinstance(transport, FileTransport):
        return f"file {transport.config.log_file_path}"
    if isinstance(transport, NoopTransport):
        return "nowhere (OPENLINEAGE_DISABLED)"
    url = getattr(getattr(transport, "config", None), "url", None)
    return f"{transport.kind} {strip_userinfo(str(url))}" if url else str(transport.kind)
