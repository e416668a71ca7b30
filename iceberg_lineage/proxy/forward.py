"""Passing one request through to the upstream catalog and its answer back, streamed both ways (aiohttp's client and
server; nothing at the HTTP level is written here), with a bounded copy of the bodies lineage reads.

Only hop-by-hop headers (RFC 9110 §7.6.1, and those the ``Connection`` header names) are rewritten; ``Host`` is
the upstream's. A request whose body does not arrive in time is answered 408.
The upstream's failures are answered in the REST error model: no connection (nothing was sent)
503, which an engine may retry; the request sent and then the connection lost 502, or no answer in time 504, which
on a commit mean "commit state unknown" (Iceberg Java then does not retry, and does not clean up files that a
commit which landed still uses).
"""
from __future__ import annotations

import asyncio
import json
import logging
import zlib
from typing import AsyncIterator, Awaitable, Callable, Mapping

import aiohttp
from aiohttp import web
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

LOG = logging.getLogger(__name__)

HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
                        "te", "trailer", "transfer-encoding", "upgrade", "host"})
_CHUNK = 64 * 1024


class UpstreamError(Exception):
    """The upstream could not answer: ``status`` (503, 502, 504) and the REST error ``type``."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind = status, kind


class Tee:
    """A copy of a body as it streams past, up to ``limit`` bytes; past it, the copy is dropped (``over``)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self.over = False
        self._parts: list[bytes] = []

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.over:
            return
        if self.size > self.limit:
            self.over = True
            self._parts.clear()
        else:
            self._parts.append(chunk)

    def body(self) -> bytes | None:
        return None if self.over else b"".join(self._parts)


def forwarded_headers(headers: CIMultiDictProxy[str] | Mapping[str, str]) -> CIMultiDict[str]:
    """The end-to-end headers, each as often and in the order it came, ``Authorization`` included."""
    named = {v.strip().lower() for v in headers.get("Connection", "").split(",") if v.strip()}
    out: CIMultiDict[str] = CIMultiDict()
    for key, value in headers.items():
        if key.lower() not in HOP_BY_HOP and key.lower() not in named:
            out.add(key, value)
    return out


def error_response(status: int, kind: str, message: str) -> web.Response:
    """An answer in the REST error model (``ErrorModel``)."""
    body = {"error": {"message": message, "type": kind, "code": status}}
    return web.json_response(body, status=status)


async def _streamed(content: aiohttp.StreamReader, tee: Tee | None) -> AsyncIterator[bytes]:
    async for chunk in content.iter_chunked(_CHUNK):
        if tee is not None:
            tee.add(chunk)
        yield chunk


class BodyTimeout(Exception):
    """The client did not send the request's body in time (``proxy.body_timeout_s``)."""


async def request_body(request: web.Request, tee: Tee | None, timeout_s: float) -> AsyncIterator[bytes]:
    """The request's body as it arrives, all of it within ``timeout_s`` (a client that drips it holds nothing
    longer), copied into ``tee``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    chunks = request.content.iter_chunked(_CHUNK).__aiter__()
    while True:
        try:
            chunk = await asyncio.wait_for(chunks.__anext__(), max(0.0, deadline - loop.time()))
        except StopAsyncIteration:
            return
        except asyncio.TimeoutError:
            raise BodyTimeout(f"the request's body did not arrive within {timeout_s:g} s") from None
        if tee is not None:
            tee.add(chunk)
        yield chunk


async def send(session: aiohttp.ClientSession, upstream: str, request: web.Request, tee: Tee | None,
               body_timeout_s: float) -> aiohttp.ClientResponse:
    """The request sent upstream (method, path and query as sent, body streamed), once its answer's head arrived.
    A body that does not arrive within ``body_timeout_s`` is answered 408: the upstream got it cut, so nothing of
    it took effect."""
    url = upstream + request.rel_url.raw_path_qs
    data = request_body(request, tee, body_timeout_s) if request.body_exists else None
    try:
        return await session.request(request.method, URL(url, encoded=True),
                                     headers=forwarded_headers(request.headers), data=data, allow_redirects=False,
                                     skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"))
    except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError):
        raise UpstreamError(503, "ServiceUnavailableException", "the upstream catalog cannot be reached") from None
    except (asyncio.TimeoutError, aiohttp.SocketTimeoutError):
        raise UpstreamError(504, "CommitStateUnknownException" if request.method == "POST" else "ServiceFailureException",
                            "the upstream catalog did not answer in time; the request's outcome is unknown") from None
    except aiohttp.ClientError as exc:
        if isinstance(exc.__cause__, BodyTimeout):
            raise UpstreamError(408, "RequestTimeoutException", str(exc.__cause__)) from None
        raise UpstreamError(502, "CommitStateUnknownException" if request.method == "POST" else "ServiceFailureException",
                            "the connection to the upstream catalog failed after the request was sent; "
                            "the request's outcome is unknown") from None


async def relay(request: web.Request, upstream: aiohttp.ClientResponse,
                tee: Tee | None) -> tuple[web.StreamResponse, bool]:
    """The upstream's answer streamed back as it came: status, reason, end-to-end headers, body; and whether it
    came whole from the upstream. A client that went away meanwhile does not stop the read: the request took
    effect upstream (a commit landed), so its answer is still read to the end for lineage."""
    response = web.StreamResponse(status=upstream.status, reason=upstream.reason,
                                  headers=forwarded_headers(upstream.headers))
    client = await _to_client(response.prepare(request))
    try:
        async for chunk in _streamed(upstream.content, tee):
            client = client and await _to_client(response.write(chunk))
    except (aiohttp.ClientError, asyncio.TimeoutError):
        # the head is out: the engine can only see a cut connection, never a body that looks complete
        LOG.warning("iceberg-lineage proxy: the upstream catalog's answer broke off; connection closed")
        if request.transport is not None:
            request.transport.close()
        response.force_close()
        return response, False
    if client:
        await _to_client(response.write_eof())
    return response, True


async def _to_client(writing: Awaitable[object]) -> bool:
    """Whether a write reached the client's connection (False once the client closed it)."""
    try:
        await writing
    except ConnectionResetError:  # aiohttp: "Cannot write to closing transport"
        return False
    return True


def decoded(body: bytes, encoding: str | None, limit: int) -> bytes:
    """A body without its ``Content-Encoding`` (gzip, deflate), bounded to ``limit`` bytes once inflated."""
    codings = [c.strip().lower() for c in (encoding or "").split(",") if c.strip() and c.strip().lower() != "identity"]
    for coding in reversed(codings):
        if coding in ("gzip", "x-gzip"):
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif coding == "deflate":
            inflater = zlib.decompressobj()
        else:
            raise ValueError(f"unsupported content-encoding {coding}")
        body = inflater.decompress(body, limit + 1)
        if len(body) > limit:
            raise ValueError(f"body inflates past {limit} bytes")
    return body


async def config_response(request: web.Request, upstream: aiohttp.ClientResponse, public_uri: str,
                          endpoint: str, limit: int,
                          seen: Callable[[dict], None] | None = None) -> web.StreamResponse:
    """``/v1/config`` with an override ``uri`` pointed at the proxy, and ``endpoint`` listed when the answer lists
    endpoints; any answer that is not such a JSON object passes unchanged."""
    body = await _head(upstream.content, limit)
    headers = forwarded_headers(upstream.headers)
    try:
        if upstream.status != 200 or len(body) > limit:
            raise ValueError("not a config answer")
        config = json.loads(decoded(body, upstream.headers.get("Content-Encoding"), limit))
        if not isinstance(config, dict):
            raise ValueError("not a config object")
    except ValueError:
        if len(body) > limit:
            return await _rest_of(request, upstream, headers, body)
        return web.Response(status=upstream.status, reason=upstream.reason, headers=headers, body=body)
    if seen is not None:  # the upstream's own answer, before the rewrite
        seen(config)
    rewrite_config(config, public_uri, endpoint)
    for name in ("Content-Length", "Content-Encoding"):
        headers.popall(name, None)
    return web.Response(status=200, headers=headers, body=json.dumps(config).encode())


async def _head(content: aiohttp.StreamReader, limit: int) -> bytes:
    """The body to its end, or its first bytes past ``limit`` (``read(n)`` returns only what has arrived yet)."""
    parts: list[bytes] = []
    size = 0
    async for chunk in content.iter_chunked(_CHUNK):
        parts.append(chunk)
        size += len(chunk)
        if size > limit:
            break
    return b"".join(parts)


def rewrite_config(config: dict, public_uri: str, endpoint: str) -> None:
    overrides = config.get("overrides")
    if isinstance(overrides, dict) and "uri" in overrides:
        overrides["uri"] = public_uri
    endpoints = config.get("endpoints")
    if isinstance(endpoints, list) and endpoint not in endpoints:
        endpoints.append(endpoint)


async def _rest_of(request: web.Request, upstream: aiohttp.ClientResponse, headers: CIMultiDict[str],
                   head: bytes) -> web.StreamResponse:
    response = web.StreamResponse(status=upstream.status, reason=upstream.reason, headers=headers)
    await response.prepare(request)
    await response.write(head)
    async for chunk in upstream.content.iter_chunked(_CHUNK):
        await response.write(chunk)
    await response.write_eof()
    return response

