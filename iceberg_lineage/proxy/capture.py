"""The serving processes' end of the proxy's lineage: what a relayed request leaves behind is a :class:`Capture`
(the route, the status and bounded copies of the bodies lineage reads, still encoded), put on a bounded queue to the
lineage process, which decodes, parses, builds and delivers. A serving process reads only what relaying needs (the
``/v1/config`` answer it rewrites), loads a table before relaying its drop when it never sent that table's metadata
(on the loader's own threads, bounded), and never builds an event or waits on delivery: lineage costs a request one
queue put (the feeder thread pickles and writes the pipe).

The queue is bounded in captures and in bytes (``proxy.queue_max_bytes``: the bodies queued and not yet taken by the
lineage process). Past the bytes, a capture goes without its bodies (one warning), and the lineage process reloads
the table with the proxy's own credentials; a full queue means the lineage process stopped reading, and the capture
is then left out with a warning (the scanner's catch-up reports the snapshots of such commits, with the same
runIds). Neither is ever waited for.
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
import multiprocessing
import queue
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from iceberg_lineage.delivery.failure_log import FailureLog
from iceberg_lineage.proxy.routes import Route
from iceberg_lineage.proxy.tables import LruCache, TableLoader, cache_key

if TYPE_CHECKING:
    from multiprocessing.queues import Queue

LOG = logging.getLogger(__name__)
log_once = FailureLog(LOG)

#: Put on a channel by a serving process that stops: nothing follows it.
CLOSED = None


@dataclass(frozen=True)
class Capture:
    """One request the upstream (or, for ``/metrics``, the proxy in its place) accepted, as relayed; a body is
    ``None`` when it was not read."""

    route: Route
    status: int
    request: bytes | None = None
    request_encoding: str | None = None
    response: bytes | None = None
    response_encoding: str | None = None
    #: the bodies were read but not queued (past ``proxy.queue_max_bytes``): the lineage process reloads the table
    bodies_left_out: bool = False
    #: from the request's arrival to the upstream's whole answer, as the serving process measured it: how long a
    #: commit took at the catalog (the engine's own commit metrics come with its commit report)
    elapsed_ms: int | None = None

    @property
    def size(self) -> int:
        return len(self.request or b"") + len(self.response or b"")


class ByteBudget:
    """Bytes of captures a serving process queued that the lineage process has not taken yet, at most ``limit``;
    shared by both ends (a ``multiprocessing`` value, made before the fork)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._queued = multiprocessing.get_context("fork").Value("q", 0)

    def take(self, size: int) -> bool:
        """Count ``size`` bytes in, unless that goes past the limit."""
        with self._queued.get_lock():
            if self._queued.value + size > self.limit:
                return False
            self._queued.value += size
            return True

    def release(self, size: int) -> None:
        with self._queued.get_lock():
            self._queued.value -= size


@dataclass(frozen=True)
class Channel:
    """One serving process's way to the lineage process: its queue (bounded in captures) and its byte budget."""

    queue: Queue[Capture | None]  # None: CLOSED

    budget: ByteBudget

    @staticmethod
    def make(size: int, max_bytes: int) -> Channel:
        return Channel(multiprocessing.get_context("fork").Queue(size), ByteBudget(max_bytes))


class CaptureQueue:
    """A serving process's end of its :class:`Channel` to the lineage process, and the tables whose metadata it
    sent, so that a drop of one of them needs no load first."""

    def __init__(self, channel: Channel, loader: TableLoader, known_tables: int) -> None:
        self.channel, self.loader = channel.queue, loader
        self.budget = channel.budget
        #: tables whose metadata went to the lineage process (the event loop and a drop's load thread both add)
        self._sent: LruCache[bool] = LruCache(known_tables)
        self.left_out = 0

    def submit(self, capture: Capture) -> None:
        if capture.size and not self.budget.take(capture.size):
            log_once("queueing a lineage capture's bodies for the lineage process",
                     RuntimeError(f"proxy.queue_max_bytes ({self.budget.limit}) reached; the lineage process "
                                  "reloads the table instead"))
            capture = dataclasses.replace(capture, request=None, response=None, bodies_left_out=True)
        try:
            self.channel.put_nowait(capture)
        except queue.Full:
            self.budget.release(capture.size)
            self.left_out += 1
            log_once("queueing a lineage capture for the lineage process",
                     RuntimeError(f"{self.left_out} capture(s) left out: the lineage process is not reading"))
            return
        except Exception as exc:  # noqa: BLE001 - lineage never changes a response
            self.budget.release(capture.size)
            log_once("queueing a lineage capture for the lineage process", exc)
            return
        self._note(capture.route)

    def knows(self, prefix: str | None, identifier: Sequence[str]) -> bool:
        return cache_key(prefix, identifier) in self._sent

    async def ensure_known(self, prefix: str | None, identifier: Sequence[str]) -> None:
        """Before a drop is relayed: a table whose metadata this process never sent is loaded with the proxy's own
        credentials (on the loader's threads, waited for at most its timeout), and its metadata sent as a load
        would be."""
        if self.knows(prefix, identifier):
            return
        try:
            loaded = await asyncio.wait_for(asyncio.wrap_future(self.loader.submit(identifier)), self.loader.timeout_s)
        except Exception as exc:  # noqa: BLE001 - lineage never changes a response; the drop goes on
            log_once("loading a table before its drop", exc)
            return
        if loaded is not None:
            route = Route("load", prefix, tuple(identifier[:-1]), identifier[-1])
            self.submit(Capture(route, 200, response=loaded.body()))

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
