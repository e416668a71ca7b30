"""The serving processes' end of the bridge's lineage: what a relayed request leaves behind is a :class:`Capture`
(the route, the status and bounded copies of the bodies lineage reads), put on a bounded queue to the lineage
process, which parses, builds and delivers. A serving process never parses a body, builds an event or waits on
delivery, so lineage costs a request one queue put (the feeder thread pickles and writes the pipe).

A full queue means the lineage process stopped reading; the capture is then left out with a warning (the
scanner's catch-up reports the snapshots of such commits, with the same runIds), never waited for.
"""
from __future__ import annotations

import logging
import queue
import threading
from dataclasses import dataclass
from typing import Any, Sequence

from iceberg_lineage.delivery.failure_log import FailureLog
from iceberg_lineage.proxy.routes import Route
from iceberg_lineage.proxy.tables import LruCache, OwnCatalog, cache_key

LOG = logging.getLogger(__name__)
log_once = FailureLog(LOG)

#: Put on a channel by a serving process that stops: nothing follows it.
CLOSED = None


@dataclass(frozen=True)
class Capture:
    """One request the upstream (or, for ``/metrics``, the bridge in its place) accepted, as relayed; a body is
    ``None`` when it was not read."""

    route: Route
    status: int
    request: bytes | None = None
    request_encoding: str | None = None
    response: bytes | None = None
    response_encoding: str | None = None


class CaptureQueue:
    """A serving process's channel to the lineage process (a ``multiprocessing`` queue bounded by the emitter's
    queue size), and the tables whose metadata it sent, so that a drop of one of them needs no load first."""

    def __init__(self, channel: Any, own: OwnCatalog, known_tables: int) -> None:
        self.channel, self.own = channel, own
        #: tables whose metadata went to the lineage process (the event loop and a drop's load thread both add)
        self._sent: LruCache[bool] = LruCache(known_tables)
        self.left_out = 0

    def submit(self, capture: Capture) -> None:
        try:
            self.channel.put_nowait(capture)
        except queue.Full:
            self.left_out += 1
            log_once("queueing a lineage capture for the lineage process",
                     RuntimeError(f"{self.left_out} capture(s) left out: the lineage process is not reading"))
            return
        except Exception as exc:  # noqa: BLE001 - lineage never changes a response
            log_once("queueing a lineage capture for the lineage process", exc)
            return
        self._note(capture.route)

    def knows(self, prefix: str | None, identifier: Sequence[str]) -> bool:
        return cache_key(prefix, identifier) in self._sent

    def ensure_known(self, prefix: str | None, identifier: Sequence[str]) -> None:
        """Before a drop is relayed: a table whose metadata this process never sent is loaded with the bridge's own
        credentials, and its metadata sent as a load would be (blocking: run it on a thread)."""
        if self.knows(prefix, identifier):
            return
        known = self.own.load(identifier)
        if known is not None:
            route = Route("load", prefix, tuple(identifier[:-1]), identifier[-1])
            self.submit(Capture(route, 200, response=known.load_result()))

    def _note(self, route: Route) -> None:
        if route.identifier is None:
            return
        key = cache_key(route.prefix, route.identifier)
        if route.kind == "drop":
            self._sent.pop(key)
        elif route.kind in ("load", "commit"):
            self._sent.put(key, True)

    def close(self, timeout_s: float) -> None:
        """At a serving process's end: what it queued reaches the pipe, then the end mark."""
        try:
            self.channel.put(CLOSED, timeout=timeout_s)
            self.channel.close()
        except Exception as exc:  # noqa: BLE001
            log_once("closing the channel to the lineage process", exc)
            return
        flushed = threading.Thread(target=self.channel.join_thread, daemon=True)
        flushed.start()
        flushed.join(timeout_s)
        if flushed.is_alive():  # the lineage process stopped reading: never hang the exit on it
            LOG.warning("iceberg-lineage proxy: captures still unsent to the lineage process after %.0f s; left out",
                        timeout_s)
