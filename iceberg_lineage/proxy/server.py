"""Running the bridge: one listening socket, served by ``workers`` processes (a pre-fork: the children inherit the
socket and the kernel spreads connections over them), each with its own event loop, emitter, delivery and spool
connection. Events carry deterministic runIds, so what two processes (or two replicas) report of one snapshot
collapses downstream.

SIGTERM or SIGINT stops accepting, lets requests in flight finish, then flushes the emitter (what is still queued
after the flush timeout goes to the spool).
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

from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.client import make_client
from iceberg_lineage.delivery.delivery import Delivery
from iceberg_lineage.delivery.emitter import FLUSH_TIMEOUT_S, Emitter
from iceberg_lineage.proxy.app import ProxyOptions, make_app
from iceberg_lineage.proxy.applications import ApplicationTracker
from iceberg_lineage.proxy.report import Reporter
from iceberg_lineage.redact import protect, strip_userinfo
from iceberg_lineage.state.applications import ApplicationStore
from iceberg_lineage.state.bridge import BridgeState

LOG = logging.getLogger(__name__)


def listen(host: str, port: int) -> socket.socket:
    sock = socket.create_server((host, port), backlog=1024)
    sock.set_inheritable(True)
    return sock


def serve(options: ProxyOptions, settings: Settings, *, announce: Callable[[str], None] | None = None) -> int:
    """Serve until SIGTERM/SIGINT; returns the exit code (0, or 1 when a worker process failed)."""
    # before anything could log them; the HTTP libraries' own records too
    protect(options.io_properties).install(("aiohttp", "asyncio"))
    sock = listen(options.host, options.port)
    host, port = sock.getsockname()[:2]
    if options.port == 0:
        options = dataclasses.replace(options, port=port)
    if announce is not None:
        announce(f"iceberg-lineage proxy: listening on http://{host}:{port} ({options.workers} worker(s)), "
                 f"upstream {strip_userinfo(options.upstream)}, public uri {options.uri}, depth {options.depth}")
    if options.workers <= 1:
        return run_worker(sock, options, settings)
    return _prefork(sock, options, settings)


def _prefork(sock: socket.socket, options: ProxyOptions, settings: Settings) -> int:
    children: list[int] = []
    parent = os.getpid()
    for _ in range(options.workers):
        pid = os.fork()
        if pid == 0:  # the child serves, and never returns into the parent's code
            code = 1
            try:
                code = run_worker(sock, options, settings, parent=parent)
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
    failed = 0
    for child in children:
        _, status = os.waitpid(child, 0)
        failed += os.waitstatus_to_exitcode(status) != 0
    return 1 if failed else 0


def run_worker(sock: socket.socket, options: ProxyOptions, settings: Settings, *, parent: int | None = None) -> int:
    """One server process: its own event loop, emitter and state connection; a pre-forked one names its
    ``parent``, and stops when that is gone."""
    state = BridgeState(settings.state_path)
    emitter = Emitter(Delivery(make_client(), settings))
    reporter = Reporter(emitter, settings, upstream=options.upstream, public_uri=options.uri, depth=options.depth,
                        io_properties=options.io_properties, state=state)
    applications = ApplicationStore(settings.state_path)
    reporter.tracker = ApplicationTracker(applications, settings, submit=reporter.submit, lookup=reporter.table_of,
                                          record=state.record)
    reporter.tracker.start()  # completes what a killed predecessor left open
    try:
        asyncio.run(_serve(sock, make_app(options, settings, reporter), parent))
    finally:
        reporter.tracker.stop()  # held COMPLETEs out, this process's applications complete
        if not emitter.flush(FLUSH_TIMEOUT_S):
            LOG.warning("iceberg-lineage proxy: %d queued lineage events spooled at shutdown",
                        emitter.spill_queued())
        emitter.close()
        applications.close()
        state.close()
    return 0


async def _serve(sock: socket.socket, app: web.Application, parent: int | None) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=10.0)
    await runner.setup()
    site = web.SockSite(runner, sock)
    await site.start()
    orphaned = asyncio.create_task(_stop_when_orphaned(stop, parent)) if parent is not None else None
    try:
        await stop.wait()
    finally:
        if orphaned is not None:
            orphaned.cancel()
        await runner.cleanup()


async def _stop_when_orphaned(stop: asyncio.Event, parent: int, period_s: float = 1.0) -> None:
    """A pre-forked worker stops when the process that forked it is gone (killed, even by SIGKILL)."""
    while os.getppid() == parent:
        await asyncio.sleep(period_s)
    stop.set()


def default_announce(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
