"""The HTTP transport's hardening, handed to openlineage-python's ``HttpTransport`` through its configuration (the
``adapter`` its config accepts), never by changing the transport.

Retries stay openlineage-python's (urllib3, from the configured ``retry``); the adapter adds 429 to the statuses
retried, bounds how long a ``Retry-After`` may make it wait, and never retries a POST after a read timeout
(``read=0``: the server may have it; the event is spooled and a replay may repeat it, while a silent server is asked
once, not six times). Everything else of the configured retry is kept, connect retries included; a configuration
that brings its own adapter is left alone.

The ``requests`` session handed in the same configuration (:class:`LineageSession`) never follows a redirect that
turns the POST into a GET (301, 302, 303: the event would be lost while counted as sent; 307 and 308 keep the body
and are followed), and reads at most :data:`MAX_ANSWER_BYTES` of any answer (an endless or huge body, decompressed
or not, is cut there: the transports only need the status).

Every request has a deadline for its whole time: connecting, sending, retries and backoff included, and the whole
answer (``delivery.request_deadline_s``; the alert webhook's ``alerts.webhook_timeout_s``), or the caller's send
deadline (:func:`~iceberg_lineage.delivery.breaker.current_deadline`) when that comes first. A socket timeout alone
restarts with each byte, so a server that drips its answer would hold a request, a scan's deadline and the breaker
forever: at the deadline a watchdog shuts the request's sockets down (the connections of our adapter's pools, which
tell it which they lend to the request), backoff sleeps end there, and the send raises :class:`DeadlineExceeded`, a
transport failure (the event is spooled, the breaker opens). An adapter that the configuration brings keeps its own
timeouts.
"""
from __future__ import annotations

import contextvars
import inspect
import socket
import threading
import time
from typing import Any
from urllib.parse import urljoin, urlsplit

import attr
import requests
from openlineage.client.transport.http import HttpConfig
from openlineage.client.transport.http_common import DEFAULT_RETRY_CONFIG
from requests.adapters import HTTPAdapter
from urllib3 import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.util import Retry

from iceberg_lineage.config import DEFAULT_REQUEST_DEADLINE_S
from iceberg_lineage.delivery.breaker import current_deadline, pause, process_deadline
from iceberg_lineage.delivery.failures import DeadlineExceeded, RedirectRefused

#: The most of an answer's body that is read (the rest is dropped with the connection).
MAX_ANSWER_BYTES = 64 * 1024
#: Redirects that make ``requests`` resend a POST as a GET, without its body.
METHOD_CHANGING = frozenset({301, 302, 303})
#: The longest a server's Retry-After may hold one retry (urllib3's own bound is six hours).
RETRY_AFTER_MAX = 10
_RETRY_AFTER_BOUNDABLE = "retry_after_max" in inspect.signature(Retry.__init__).parameters
#: How often the watchdog of a request past its deadline shuts down the sockets the request still gets.
_CUT_INTERVAL_S = 0.05


class _Expired(Exception):
    """A request asked for a connection past its deadline (not an ``OSError``: urllib3 would retry it)."""


class Watch:
    """One request's deadline: the connections our pools lend it, shut down by a watchdog thread once ``at`` (a
    ``time.monotonic()`` time) passed, until the request ends."""

    def __init__(self, at: float) -> None:
        self.at = at
        self.cut = False
        self._connections: list[object] = []
        self._lock = threading.Lock()
        self._done = threading.Event()
        threading.Thread(target=self._guard, name="iceberg-lineage-request-deadline", daemon=True).start()

    def limit(self) -> float:
        """This request's deadline, or the process's exit deadline if one came sooner since it started."""
        return min(at for at in (self.at, process_deadline()) if at is not None)

    def remaining(self) -> float:
        return max(0.0, self.limit() - time.monotonic())

    def lend(self, connection: object) -> None:
        with self._lock:
            self._connections.append(connection)

    def check(self) -> None:
        if self.cut or self.remaining() == 0.0:
            raise _Expired()

    def end(self) -> None:
        self._done.set()

    def _guard(self) -> None:
        while self.remaining() > 0.0:  # in steps: an exit deadline may come sooner
            if self._done.wait(min(self.remaining(), _CUT_INTERVAL_S * 4)):
                return
        self.cut = True
        while not self._done.is_set():  # again and again: a connection may be lent, or connect, after the first cut
            with self._lock:
                sockets = [getattr(c, "sock", None) for c in self._connections]
            for sock in sockets:
                if sock is not None:
                    try:
                        sock.shutdown(socket.SHUT_RDWR)  # a blocked recv or send returns at once
                    except OSError:
                        pass
            self._done.wait(_CUT_INTERVAL_S)


_watch: contextvars.ContextVar[Watch | None] = contextvars.ContextVar("iceberg_lineage_request_watch", default=None)


class _WatchedPool:
    """A connection pool that tells the request's :class:`Watch` which connection it lends, and lends none past
    the deadline."""

    def _get_conn(self, timeout: float | None = None) -> Any:  # noqa: ANN401 - urllib3's connection
        watch = _watch.get()
        if watch is not None:
            watch.check()
        connection = super()._get_conn(timeout)  # type: ignore[misc]
        if watch is not None:
            watch.lend(connection)
        return connection


class _WatchedHTTPPool(_WatchedPool, HTTPConnectionPool):
    pass


class _WatchedHTTPSPool(_WatchedPool, HTTPSConnectionPool):
    pass


_WATCHED_POOLS = {"http": _WatchedHTTPPool, "https": _WatchedHTTPSPool}
_PLAIN_POOLS = {"http": HTTPConnectionPool, "https": HTTPSConnectionPool}


class BoundedRetry(Retry):
    """urllib3's retry, whose waits (backoff, ``Retry-After``) end at the request's deadline, and at once when the
    process starts exiting: a script's exit is no time to back off (the remaining tries run back to back within
    the exit deadline, and what still fails is spooled)."""

    def sleep(self, response: Any = None) -> None:  # noqa: ANN401 - urllib3's response
        after = self.get_retry_after(response) if self.respect_retry_after_header and response else None
        pause(_bounded(after if after else self.get_backoff_time()))


def _bounded(seconds: float) -> float:
    watch = _watch.get()
    return seconds if watch is None else min(seconds, watch.remaining())


class DeadlineAdapter(HTTPAdapter):
    """The hardened adapter: a :class:`BoundedRetry`, and pools that lend their connections to a :class:`Watch`."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:  # noqa: ANN401
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _WATCHED_POOLS

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:  # noqa: ANN401
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if manager.pool_classes_by_scheme == _PLAIN_POOLS:  # not a SOCKS proxy's own pools
            manager.pool_classes_by_scheme = _WATCHED_POOLS
        return manager


def hardened_retry(retry: dict[str, Any]) -> dict[str, Any]:
    """The configured retry with 429 retried, ``Retry-After`` bounded and no retry after a read timeout."""
    hardened = {**retry, "read": 0, "status_forcelist": sorted({*(retry.get("status_forcelist") or ()), 429})}
    if _RETRY_AFTER_BOUNDABLE:
        hardened.setdefault("retry_after_max", RETRY_AFTER_MAX)
    else:
        hardened.setdefault("respect_retry_after_header", False)
    return hardened


def hardened_adapter(retry: dict[str, Any]) -> HTTPAdapter:
    return DeadlineAdapter(max_retries=BoundedRetry(**hardened_retry(retry)))


class LineageSession(requests.Session):
    """A ``requests`` session that refuses method-changing redirects, bounds what it reads of an answer, and ends
    each request at its deadline: ``deadline_s`` after it starts, or the caller's send deadline if sooner."""

    def __init__(self, deadline_s: float = DEFAULT_REQUEST_DEADLINE_S) -> None:
        super().__init__()
        self.deadline_s = deadline_s

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:  # noqa: ANN401
        started, outer = time.monotonic(), _watch.get()  # a redirect followed is sent within the first's deadline
        limits = (started + self.deadline_s, current_deadline(), None if outer is None else outer.at)
        watch = Watch(min(at for at in limits if at is not None))
        token = _watch.set(watch)
        try:
            return self._send(request, **kwargs)
        except Exception as exc:
            if watch.cut or isinstance(exc, _Expired):
                raise DeadlineExceeded(f"no complete answer within {max(0.0, watch.limit() - started):.1f} s") \
                    from None
            raise
        finally:
            _watch.reset(token)
            watch.end()

    def _send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:  # noqa: ANN401
        response = super().send(request, **{**kwargs, "stream": True})
        if not response._content_consumed:  # noqa: SLF001 - requests' own flag: the body was not read yet
            try:
                body = response.raw.read(MAX_ANSWER_BYTES + 1, decode_content=True) or b""
            finally:
                response.close()
            response._content = body[:MAX_ANSWER_BYTES]  # noqa: SLF001 - what ``content`` returns from now on
            response._content_consumed = True  # noqa: SLF001
        return response

    def rebuild_method(self, prepared_request: requests.PreparedRequest, response: requests.Response) -> None:
        if response.status_code in METHOD_CHANGING and prepared_request.method != "HEAD":
            target = urlsplit(urljoin(response.url, response.headers.get("location", "")))
            where = f"{target.scheme}://{target.hostname}" + (f":{target.port}" if target.port else "")
            raise RedirectRefused(f"HTTP {response.status_code} redirect to {where} not followed")
        super().rebuild_method(prepared_request, response)


def hardened_http_config(config: HttpConfig, deadline_s: float = DEFAULT_REQUEST_DEADLINE_S) -> HttpConfig:
    """A copy of an HTTP transport's configuration with :func:`hardened_adapter` and a :class:`LineageSession`
    whose requests end within ``deadline_s`` (an adapter or a session the configuration brings is kept)."""
    return attr.evolve(config, adapter=config.adapter or hardened_adapter(config.retry),
                       session=config.session or LineageSession(deadline_s))


def hardened_http_dict(config: dict[str, Any], deadline_s: float = DEFAULT_REQUEST_DEADLINE_S) -> dict[str, Any]:
    """An ``http`` transport configuration (``openlineage.yml``) with :func:`hardened_adapter` and a
    :class:`LineageSession` whose requests end within ``deadline_s`` added."""
    retry = {**DEFAULT_RETRY_CONFIG, **(config.get("retry") or {})}
    return {**config, "adapter": config.get("adapter") or hardened_adapter(retry),
            "session": config.get("session") or LineageSession(deadline_s)}
