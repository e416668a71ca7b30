"""``POST /v1/{prefix}/namespaces/{ns}/tables/{table}/metrics``: the scan and commit reports engines post (Iceberg
Java's ``RESTMetricsReporter`` does whenever ``/v1/config`` lists the endpoint, which the proxy makes sure of).

The report is forwarded upstream and the engine gets the upstream's answer; a 404 is the spec's NoSuchTable and
passes on. Only an upstream that does not implement the endpoint gets the proxy's own 204: it answered 405, 406 or
501 (``UnsupportedOperationException``), or its ``/v1/config`` listed ``endpoints`` without it (then the report is not
forwarded at all). An accepted report's body, as the engine encoded it, goes to the lineage process (``accepted``),
which decodes and reads it off the request path.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import aiohttp
from aiohttp import web

from iceberg_lineage.proxy.forward import BodyTimeout, Tee, UpstreamError, error_response, relay, request_body, send

#: Upstream answers that mean "this endpoint is not implemented here".
NOT_IMPLEMENTED = frozenset({405, 406, 501})


class MetricsSupport:
    """Whether the upstream implements the metrics endpoint, as far as this process saw its ``/v1/config``."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.unlisted = False

    def note_config(self, config: Mapping[str, Any]) -> None:
        """A ``/v1/config`` answer as the upstream sent it (before the proxy adds the endpoint)."""
        endpoints = config.get("endpoints")
        if isinstance(endpoints, list):
            self.unlisted = self.endpoint not in endpoints


async def handle_metrics(request: web.Request, session: aiohttp.ClientSession, upstream: str,
                         support: MetricsSupport, limit: int, body_timeout_s: float,
                         accepted: Callable[[bytes | None], None]) -> web.StreamResponse:
    """Forward a report and relay the answer; ``accepted`` gets the report's body as sent (``None`` past ``limit``)
    once the upstream, or the proxy in its place, accepted it."""
    if support.unlisted:
        sent = Tee(limit)
        try:
            async for _ in request_body(request, sent, body_timeout_s):
                pass
        except BodyTimeout as exc:
            return error_response(408, "RequestTimeoutException", str(exc))
        accepted(sent.body())
        return web.Response(status=204)
    sent = Tee(limit)
    try:
        answer = await send(session, upstream, request, sent, body_timeout_s)
    except UpstreamError as exc:
        return error_response(exc.status, exc.kind, str(exc))
    async with answer:
        if answer.status in NOT_IMPLEMENTED:
            response: web.StreamResponse = web.Response(status=204)
        else:
            response, _ = await relay(request, answer, None)
    if 200 <= answer.status < 300 or answer.status in NOT_IMPLEMENTED:
        accepted(sent.body())
    return response
