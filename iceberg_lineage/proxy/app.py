"""The proxy's aiohttp application, run by each serving process: every request passes through to the upstream
catalog; the accepted ones lineage reads (``/metrics`` reports included) leave as a
:class:`~iceberg_lineage.proxy.capture.Capture` for the lineage process once the upstream's answer came whole."""
from __future__ import annotations

import logging
import time
from typing import AsyncIterator

import aiohttp
from aiohttp import web

from iceberg_lineage.config import ProxySection, Settings
from iceberg_lineage.proxy.capture import Capture, CaptureQueue
from iceberg_lineage.proxy.forward import Tee, UpstreamError, config_response, error_response, relay, send
from iceberg_lineage.proxy.metrics import MetricsSupport, handle_metrics
from iceberg_lineage.proxy.routes import METRICS_ENDPOINT, REQUEST_PARSED, RESPONSE_PARSED, Route, classify

LOG = logging.getLogger(__name__)
#: The largest ``/v1/config`` answer rewritten (a config is a few hundred bytes); a bigger one passes unchanged.
CONFIG_MAX_BYTES = 1024 * 1024

SESSION = web.AppKey("session", aiohttp.ClientSession)


def make_app(options: ProxySection, settings: Settings, captures: CaptureQueue) -> web.Application:
    upstream = options.upstream.rstrip("/")
    limit = settings.proxy.max_body_bytes
    metrics = MetricsSupport(METRICS_ENDPOINT)

    async def client_session(app: web.Application) -> AsyncIterator[None]:
        """The upstream client's lifetime is the application's."""
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=settings.proxy.connect_timeout_s,
                                        sock_read=settings.proxy.upstream_timeout_s)
        connector = aiohttp.TCPConnector(limit=0, enable_cleanup_closed=True)
        async with aiohttp.ClientSession(timeout=timeout, auto_decompress=False, cookie_jar=aiohttp.DummyCookieJar(),
                                         connector=connector) as session:
            app[SESSION] = session
            yield

    async def handle(request: web.Request) -> web.StreamResponse:
        began = time.monotonic()
        route = classify(request.method, request.rel_url.raw_path)
        if route.kind == "metrics":
            def accepted(body: bytes | None) -> None:  # decoded and built into events in the lineage process
                if body is not None:
                    captures.submit(Capture(route, 204, request=body,
                                            request_encoding=request.headers.get("Content-Encoding")))

            return await handle_metrics(request, request.app[SESSION], upstream, metrics, limit,
                                        settings.proxy.body_timeout_s, accepted)
        if route.kind == "drop" and route.identifier is not None:
            await captures.ensure_known(route.prefix, route.identifier)
        sent = Tee(limit) if route.kind in REQUEST_PARSED else None
        received = Tee(limit) if route.kind in RESPONSE_PARSED else None
        try:
            answer = await send(request.app[SESSION], upstream, request, sent, settings.proxy.body_timeout_s)
        except UpstreamError as exc:
            return error_response(exc.status, exc.kind, str(exc))
        async with answer:
            if route.kind == "config":
                return await config_response(request, answer, options.uri, METRICS_ENDPOINT, CONFIG_MAX_BYTES,
                                             metrics.note_config)
            response, whole = await relay(request, answer, received)
        if whole and route.kind != "other" and 200 <= answer.status < 300:
            _capture(captures, route, answer, request, sent, received, began)
        return response

    app = web.Application()
    app.cleanup_ctx.append(client_session)
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


def _capture(captures: CaptureQueue, route: Route, answer: aiohttp.ClientResponse, request: web.Request,
             sent: Tee | None, received: Tee | None, began: float) -> None:
    for tee, what in ((sent, "request"), (received, "answer")):
        if tee is not None and tee.over:
            LOG.warning("iceberg-lineage proxy: a %s %s of %d bytes is larger than proxy.max_body_bytes (%d); "
                        "passed through unparsed, nothing reported for it", route.kind, what, tee.size, tee.limit)
            return
    captures.submit(Capture(
        route, answer.status,
        request=sent.body() if sent is not None else None, request_encoding=request.headers.get("Content-Encoding"),
        response=received.body() if received is not None else None,
        response_encoding=answer.headers.get("Content-Encoding"),
        elapsed_ms=round((time.monotonic() - began) * 1000),
    ))
