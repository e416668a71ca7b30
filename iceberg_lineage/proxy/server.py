"""Running the proxy: one listening socket, served by ``workers`` forked serving processes (they inherit the socket
and the kernel spreads connections over them), each with its own event loop; and the process that forked them, the
lineage process, which serves no request: it reads every serving process's captures (one bounded queue each),
builds the events, holds the engine applications, and delivers through its emitter and spool. So lineage never
takes a serving process's CPU or interpreter lock, and one metadata cache and one application tracker see every
worker's traffic. Events carry deterministic runIds, so what two replicas report of one snapshot collapses
downstream.

SIGTERM or SIGINT reaches the serving processes: they stop accepting, let requests in flight finish and send their
last captures; the lineage process then builds what came, completes its applications and flushes the emitter (what
is still queued after the flush timeout goes to the spool). A serving process stops when the lineage process is
gone, even by SIGKILL.
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import signal
import socket
import sys
from typing import Callable

from aiohttp import web

from iceberg_lineage.config import ProxySection, Settings
from iceberg_lineage.delivery.client import make_client
from iceberg_lineage.delivery.delivery import Delivery
from iceberg_lineage.delivery.emitter import FLUSH_TIMEOUT_S, QUEUE_SIZE, Emitter
from iceberg_lineage.proxy.app import ProxySection, make_app
from iceberg_lineage.proxy.capture import CaptureQueue, Channel
from iceberg_lineage.proxy.collector import Collector
from iceberg_lineage.proxy.interpreter import Interpreter
from iceberg_lineage.proxy.outbox import Outbox
from iceberg_lineage.proxy.tables import RelayedTables, TableLoader
from iceberg_lineage.proxy.tracker import ApplicationTracker
from iceberg_lineage.redact import protect, strip_userinfo
from iceberg_lineage.state.proxy_runs import ApplicationStore
from iceberg_lineage.state.proxy_snapshots import ProxySnapshots

LOG = logging.getLogger(__name__)
#: The lineage process's niceness: where the cores are busy, requests go first and lineage catches up (CFS gives a
#: niceness-5 process about a third of a nice-0 one's share; its queues absorb the difference).
LINEAGE_NICENESS = 5


def listen(host: str, port: int) -> socket.socket:
    sock = socket.create_server((host, port), backlog=1024)
    sock.set_inheritable(True)
    return sock


def serve(settings: Settings, *, announce: Callable[[str], None] | None = None) -> int:
    """Serve ``settings.proxy`` until SIGTERM/SIGINT; returns the exit code (0, or 1 when a serving process failed)."""
    options = settings.proxy
    # before anything could log them; the HTTP libraries' own records too
    protect(options.io_properties).install(("aiohttp", "asyncio"))
    sock = listen(options.host, options.port)
    host, port = sock.getsockname()[:2]
    if options.port == 0:
        options = dataclasses.replace(options, port=port)
    if announce is not None:
        announce(f"iceberg-lineage proxy: listening on http://{host}:{port} ({options.workers} worker(s)), "
                 f"upstream {strip_userinfo(options.upstream)}, public uri {options.uri}, depth {options.depth}")
    return _prefork(sock, options, settings)


def _prefork(sock: socket.socket, options: ProxySection, settings: Settings) -> int:
    # created before the forks, so each serving process inherits its own end; the parent never puts on them
    channels = [Channel.make(QUEUE_SIZE, settings.proxy.queue_max_bytes) for _ in range(options.workers)]
    children: list[int] = []
    parent = os.getpid()
    for channel in channels:
        pid = os.fork()
        if pid == 0:  # the child serves, and never returns into the parent's code
            code = 1
            try:
                code = run_worker(sock, options, settings, channel, parent=parent)
            finally:
                os._exit(code)
        children.append(pid)
    sock.close()

    def forward(signum: int, _frame: object) -> None:
        for child in children:
            try:
                os.kill(child, signum)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    os.nice(LINEAGE_NICENESS)  # after the forks: the serving processes keep their priority
    return run_lineage(options, settings, channels, children)


def run_worker(sock: socket.socket, options: ProxySection, settings: Settings, channel: Channel, *,
               parent: int) -> int:
    """One serving process: its event loop relays, and its captures go to the lineage process ``parent``; it stops
    when that is gone."""
    captures = CaptureQueue(channel, _loader(options, settings), settings.proxy.cache_tables)
    try:
        asyncio.run(_serve(sock, make_app(options, settings, captures), parent, settings.proxy.header_timeout_s))
    finally:
        captures.close(FLUSH_TIMEOUT_S)
    return 0


def run_lineage(options: ProxySection, settings: Settings, channels: list[Channel], children: list[int]) -> int:
    """The lineage process: the serving processes' captures built into events and delivered until they all ended;
    then its applications complete and its emitter flushes."""
    exited: dict[int, int] = {}
    # built in one pass, downward: collector -> interpreter -> application tracker -> outbox (emitter, state)
    state = ProxySnapshots(settings.state.path)
    emitter = Emitter(Delivery(make_client(), settings))
    applications = ApplicationStore(settings.state.path)
    # every worker's tables in one cache
    tables = RelayedTables(_loader(options, settings), settings.proxy.cache_tables * len(channels),
                           public_uri=options.uri, io_properties=options.io_properties)
    tracker = ApplicationTracker(applications, settings, tables, Outbox(emitter, state))
    interpreter = Interpreter(settings, tables, tracker, state, depth=options.depth)
    collector = Collector(interpreter, channels, alive=lambda i: children[i] not in exited)
    try:
        tracker.start()  # completes what a killed predecessor left open
        collector.start()
        for child in children:
            _, status = os.waitpid(child, 0)
            exited[child] = os.waitstatus_to_exitcode(status)
        if not collector.join(FLUSH_TIMEOUT_S):
            LOG.warning("iceberg-lineage proxy: the serving processes' last captures were not all read in time")
    finally:
        tracker.stop()  # held COMPLETEs out, this process's applications complete
        if not emitter.flush(FLUSH_TIMEOUT_S):
            LOG.warning("iceberg-lineage proxy: %d queued lineage events spooled at shutdown",
                        emitter.spill_queued())
        emitter.close()
        applications.close()
        state.close()
    return 1 if any(code != 0 for code in exited.values()) else 0


def _loader(options: ProxySection, settings: Settings) -> TableLoader:
    return TableLoader(options.upstream, options.io_properties, settings.proxy.own_load_timeout_s)


async def _serve(sock: socket.socket, app: web.Application, parent: int, header_timeout_s: float) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    # aiohttp's keep-alive timeout runs from a connection's start (or its last answer) until a request's head is
    # whole: it bounds the time to send headers (a half-open request holds nothing longer), and idle connections
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=10.0,
                           keepalive_timeout=header_timeout_s)
    await runner.setup()
    site = web.SockSite(runner, sock)
    await site.start()
    orphaned = asyncio.create_task(_stop_when_orphaned(stop, parent))
    try:
        await stop.wait()
    finally:
        orphaned.cancel()
        await runner.cleanup()


async def _stop_when_orphaned(stop: asyncio.Event, parent: int, period_s: float = 1.0) -> None:
    """A serving process stops when the lineage process that forked it is gone (killed, even by SIGKILL)."""
    while os.getppid() == parent:
        await asyncio.sleep(period_s)
    stop.set()


def default_announce(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
