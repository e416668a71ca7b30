"""Events leave the hook through an :class:`Emitter`, so building and delivering them never happens on the user's
commit path. The split is OpenTelemetry's ``BatchSpanProcessor`` -> ``SpanExporter``: the emitter (the processor)
holds a bounded queue of data and one worker thread; an :class:`Exporter` (:class:`Delivery`) sends what it builds.

The queue holds data, never closures: finished events, or capture records that name the pure builder turning them
into events (:class:`Pending`), built on the worker. A full queue builds on the caller's thread and spools (none is
dropped, the caller never waits on the network); at exit every emitter is flushed with a timeout and what is still
queued is spooled, for ``iceberg-lineage replay``. The exit flush sets the process's send deadline
(:func:`~iceberg_lineage.delivery.breaker.exit_deadline`): a request still in flight then is cut and its event
spooled, so a slow or dripping endpoint neither holds the exit past the flush timeout nor loses the event the worker
was sending when the process ended.
"""
from __future__ import annotations

import atexit
import io
import logging
import os
import queue
import threading
import time
from typing import TYPE_CHECKING, Protocol, Sequence, Union

from openlineage.client.event_v2 import BaseEvent

from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.breaker import exit_deadline
from iceberg_lineage.delivery.client import make_client
from iceberg_lineage.delivery.delivery import Delivery, DeliveryResult
from iceberg_lineage.delivery.failure_log import FailureLog

if TYPE_CHECKING:
    from openlineage.client import OpenLineageClient

LOG = logging.getLogger(__name__)
log_once = FailureLog(LOG)

#: Items waiting for the worker; past this, items are built at once and spooled.
QUEUE_SIZE = 10_000
#: Seconds the exit flush waits for the queues to drain.
FLUSH_TIMEOUT_S = 10.0
#: Seconds the exit flush waits past its timeout for the worker to spool the event of the request cut there.
CUT_GRACE_S = 2.0
#: While its queue is not empty, the worker writes the settlements of the items it ran after this many items, or
#: this many seconds after the first of them (a slow endpoint, then a kill, loses few ledger rows: each is a duplicate
#: the scanner sends again).
SETTLE_BATCH = 64
SETTLE_AFTER_S = 0.1


class Exporter(Protocol):
    """Where an emitter's events go (``SpanExporter``'s role; :class:`Delivery` is the one implementation)."""

    def export(self, events: Sequence[BaseEvent]) -> Sequence[DeliveryResult]:
        """Send a batch in order; what cannot be sent is kept for replay."""

    def spool(self, event: BaseEvent) -> DeliveryResult:
        """Keep an event for replay without sending it (the queue is full, or the exit flush timed out)."""

    def shutdown(self) -> None:
        """Release what the exporter holds open."""


class Pending(Protocol):
    """A queued capture record with the builder of its events (a function of :mod:`iceberg_lineage.lineage`),
    called on the worker thread, after every item queued before it. It may also have a ``settled(results)``
    method: the emitter then tells it what became of each event, and it may return a :class:`Settlement`."""

    def events(self) -> Sequence[BaseEvent]: ...


class Settlement(Protocol):
    """What settling items left to write (the hook's delivery ledger rows): the worker writes each distinct one once,
    after the items it settled in one go, in one transaction, before a flush sees those items done."""

    def write(self) -> None:
        """Write what is waiting; never raises."""


#: What an emitter queues: a finished event, or a record to build events from.
Item = Union[BaseEvent, Pending]


def yield_gil() -> None:
    """Let a thread waiting for the GIL run now. The emitter calls it between steps, so a user's thread coming
    back from I/O waits for one step at most, not for the interpreter's 5 ms switch interval: the emitter then
    mostly runs while the user's thread is in I/O or in C code that releases the GIL."""
    time.sleep(0)


class Emitter:
    """Builds items and exports their events in submission order on one daemon thread; ``submit`` never blocks.

    The events of one item are one exported batch. The worker never holds more than that item: everything still
    queued can be spooled at exit. What settling the items leaves to write (:class:`Settlement`) is written once the
    worker drained its queue (or :data:`SETTLE_BATCH`, :data:`SETTLE_AFTER_S`), before a flush sees them done: one
    transaction per batch, not per item.
    """

    def __init__(self, exporter: Exporter, max_queue: int = QUEUE_SIZE) -> None:
        self.exporter = exporter
        self._max_queue = max_queue
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._pending = 0
        self._pid = -1
        self._queue: queue.Queue[Item] = queue.Queue(max_queue)

    def _ensure_worker(self) -> None:
        """Start the thread, again in a forked child (threads do not survive ``fork``)."""
        if self._pid == os.getpid():
            return
        with self._lock:
            if self._pid == os.getpid():
                return
            self._queue = queue.Queue(self._max_queue)
            self._pending = 0
            threading.Thread(target=self._work, name="iceberg-lineage-emitter", daemon=True).start()
            self._pid = os.getpid()

    def submit(self, item: Item) -> None:
        self._ensure_worker()
        with self._lock:
            self._pending += 1
        try:
            self._queue.put_nowait(item)
        except queue.Full:
            self._done()
            self._spill(item)

    def _work(self) -> None:
        work = self._queue
        while True:
            item: Item | None = work.get()
            settlements: dict[int, Settlement] = {}
            ran, since = 0, 0.0
            try:
                while item is not None:  # the items queued meanwhile, then their settlements at once
                    yield_gil()
                    ran += 1
                    settlement = self._run(item, spill=False)
                    if settlement is not None:
                        since = since or time.monotonic()
                        settlements.setdefault(id(settlement), settlement)
                    due = ran >= SETTLE_BATCH or (since and time.monotonic() - since >= SETTLE_AFTER_S)
                    item = None if due else _next(work)
                for settlement in settlements.values():
                    settlement.write()
            finally:
                self._done(ran)

    def _done(self, items: int = 1) -> None:
        with self._lock:
            self._pending -= items
            if self._pending == 0:
                self._idle.notify_all()

    def _spill(self, item: Item) -> None:
        """Spool the item's events at once (a full queue, the exit) and write what settling them left."""
        settlement = self._run(item, spill=True)
        if settlement is not None:
            settlement.write()

    def _run(self, item: Item, *, spill: bool) -> Settlement | None:
        """Build the item's events and export them, or spool them (``spill``); what their settling left to write."""
        try:
            events = [item] if isinstance(item, BaseEvent) else list(item.events())
        except Exception as exc:  # noqa: BLE001 - lineage never breaks the user's program
            log_once("building a lineage event", exc)
            return None
        if not events:
            return None
        try:
            if spill:
                results: Sequence[DeliveryResult] = [self.exporter.spool(event) for event in events]
            else:
                yield_gil()
                results = self.exporter.export(events)
        except Exception as exc:  # noqa: BLE001
            log_once("delivering a lineage event", exc)
            return None
        failed = next((result for result in results if result.status == "failed"), None)
        if failed is not None:  # its error says why the spool did not keep it (full, read-only, no space...)
            log_once("keeping a lineage event", RuntimeError(f"not delivered and not spooled: {failed.error}"))
        settled = getattr(item, "settled", None)
        if settled is None:
            return None
        try:
            return settled(results)
        except Exception as exc:  # noqa: BLE001
            log_once("recording a lineage delivery", exc)
            return None

    def flush(self, timeout: float | None = FLUSH_TIMEOUT_S) -> bool:
        """Wait until every submitted item was delivered or spooled; False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def spill_queued(self) -> int:
        """Spool every item still queued (at exit, when the flush timed out), so none is lost; returns how many."""
        spilled = 0
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return spilled
            try:
                self._spill(item)
            finally:
                self._done()
            spilled += 1

    def close(self) -> None:
        """Shut the exporter down (the thread idles until the process exits)."""
        self.exporter.shutdown()


def _next(work: queue.Queue[Item]) -> Item | None:
    try:
        return work.get_nowait()
    except queue.Empty:
        return None


class Emitters:
    """The process's emitters, one per client (events of one client stay in order), and its default client.

    The first emitter made registers the exit flush: importing the package registers nothing.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_client: dict[int, tuple[OpenLineageClient, Emitter]] = {}
        self._default_client: OpenLineageClient | None = None
        self._flush_at_exit = False
        #: Set in the child of ``iceberg-lineage run``: the parent already said where events go.
        self.quiet = False

    def default_client(self) -> OpenLineageClient:
        """The process's client from :func:`iceberg_lineage.delivery.client.make_client`, made once, on first use."""
        with self._lock:
            if self._default_client is None:
                self._default_client = make_client(stderr=io.StringIO() if self.quiet else None)
            return self._default_client

    def emitter_for(self, client: OpenLineageClient | None, settings: Settings) -> Emitter:
        """The one emitter of a client (the default client when ``None``)."""
        client = self.default_client() if client is None else client
        with self._lock:
            entry = self._by_client.get(id(client))
            if entry is None:
                entry = self._by_client[id(client)] = (client, Emitter(Delivery(client, settings)))
                if not self._flush_at_exit:
                    atexit.register(self.flush_at_exit)
                    self._flush_at_exit = True
            return entry[1]

    def _emitters(self) -> list[Emitter]:
        with self._lock:
            return [emitter for _, emitter in self._by_client.values()]

    def flush_all(self, timeout: float = FLUSH_TIMEOUT_S) -> bool:
        """Flush every emitter (at exit); what is still queued after ``timeout`` goes to the spool. False if the
        transport did not take everything in time."""
        deadline = time.monotonic() + timeout
        drained = True
        for emitter in self._emitters():
            if not emitter.flush(max(0.0, deadline - time.monotonic())):
                drained = False
                LOG.warning("iceberg-lineage: the transport is slow; %d queued lineage events spooled after %.0fs "
                            "(send them with `iceberg-lineage replay`)", emitter.spill_queued(), timeout)
        return drained

    def flush_at_exit(self, timeout: float = FLUSH_TIMEOUT_S) -> bool:
        """:meth:`flush_all` as the process ends: sends stop at ``timeout`` (a request in flight is cut, later events
        are spooled unsent), and the worker gets :data:`CUT_GRACE_S` more to spool what it held."""
        exit_deadline(time.monotonic() + timeout)
        return self.flush_all(timeout + CUT_GRACE_S)

    def shutdown(self, timeout: float = FLUSH_TIMEOUT_S) -> bool:
        """Flush every emitter, close their deliveries and forget them and the default client (a later event starts
        afresh, e.g. after the working directory changed); False if events were still queued."""
        drained = self.flush_all(timeout)
        with self._lock:
            emitters = [emitter for _, emitter in self._by_client.values()]
            self._by_client.clear()
            self._default_client = None
        for emitter in emitters:
            emitter.close()
        return drained


#: The process's one registry of emitters.
EMITTERS = Emitters()
