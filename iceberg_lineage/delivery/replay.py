"""``iceberg-lineage replay``: redeliver the spool in order, quarantining what the server rejects for good."""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from iceberg_lineage.config import DEFAULT_MAX_REJECTIONS, DEFAULT_REQUEST_DEADLINE_S
from iceberg_lineage.delivery.client import describe_transport
from iceberg_lineage.delivery.failures import describe_error, is_rejection
from iceberg_lineage.delivery.pipeline import configured
from iceberg_lineage.delivery.spool import HeldBack, Spool
from iceberg_lineage.delivery.transports import StoredEvent, is_disabled, send
from iceberg_lineage.errors import ConfigError
from iceberg_lineage.redact import scrub

if TYPE_CHECKING:
    from openlineage.client import OpenLineageClient
    from openlineage.client.transport.transport import Transport


log = logging.getLogger(__name__)
#: The last error of a spooled row that is not a JSON object (it goes to the quarantine at once).
UNDECODABLE = "undecodable: not a JSON object"


@dataclass(frozen=True)
class ReplayResult:
    delivered: int
    remaining: int
    #: The last refusal seen, if any event stayed in the spool.
    error: str | None = None
    #: Events in the quarantine (rejected ``spool.max_rejections`` times), after this replay.
    quarantined: int = 0


def replay(spool_path: str | Path, client: OpenLineageClient, *, max_rejections: int = DEFAULT_MAX_REJECTIONS,
           deadline_s: float = DEFAULT_REQUEST_DEADLINE_S) -> ReplayResult:
    """Redeliver spooled events oldest first, each exactly as stored, removing each once the transport accepts it.

    Nothing overtakes: a transient failure (connection, timeout, 5xx, 408, 429) ends the replay, since the rest
    would fail too. An event rejected for good (another 4xx) counts one more rejection and holds back every later
    event that shares its runId or a dataset (and, in turn, the events sharing theirs), while other runs and
    datasets go on; its ``max_rejections``-th rejection moves it to the quarantine, where it holds back nothing.
    Raises :class:`SpoolError` for a spool that cannot be opened or written.
    """
    if is_disabled(client):
        raise ConfigError("OpenLineage is disabled (OPENLINEAGE_DISABLED): replaying would discard the spool")
    if not Spool.exists(spool_path):
        return ReplayResult(0, 0)
    return replay_to(spool_path, configured(client.transport, deadline_s=deadline_s), scrub(describe_transport(client)),
                     max_rejections=max_rejections)


def replay_to(spool_path: str | Path, transport: Transport, destination: str, *,
              max_rejections: int = DEFAULT_MAX_REJECTIONS) -> ReplayResult:
    """:func:`replay` through a transport of ours (:func:`~iceberg_lineage.delivery.pipeline.configured`)."""
    with Spool(spool_path) as spool, spool.replay_lock():
        delivered, error = _drain(spool, transport, destination, max_rejections)
        return ReplayResult(delivered, spool.count(), error, spool.quarantine_count())


def _decoded(body: str) -> StoredEvent | None:
    """A spooled event's JSON, or None when it is not a JSON object (a row written by something else, or too deep
    to decode): such a row would otherwise block every later one."""
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return StoredEvent(doc) if isinstance(doc, dict) else None


def _drain(spool: Spool, transport: Transport, destination: str, max_rejections: int) -> tuple[int, str | None]:
    """One pass over the spool in seq order: (events delivered, last error seen)."""
    delivered, after, error = 0, 0, None
    held = HeldBack()
    while batch := spool.read(after):
        for item in batch:
            after = item.seq
            if held.holds(item):
                held.add(item)
                continue
            stored = _decoded(item.body)
            if stored is None:
                spool.reject(item.seq, UNDECODABLE, 1, destination)
                log.warning("spooled event %d is not a JSON object: moved to the quarantine, the rest goes on",
                            item.seq)
                continue
            errors = send(transport, stored)
            if not errors:
                spool.remove(item.seq)
                delivered += 1
                continue
            error = describe_error(errors[0])
            if not all(is_rejection(exc) for exc in errors):
                return delivered, error
            if not spool.reject(item.seq, error, max_rejections, destination):
                held.add(item)
    return delivered, error
