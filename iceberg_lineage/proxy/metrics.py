"""``POST /v1/{prefix}/namespaces/{ns}/tables/{table}/metrics``: the scan and commit reports engines post (Iceberg
Java's ``RESTMetricsReporter`` does whenever ``/v1/config`` lists the endpoint, which the bridge makes sure of).

The report is forwarded upstream and the engine gets the upstream's answer; a 404 is the spec's NoSuchTable and
passes on. Only an upstream that does not implement the endpoint gets the bridge's own 204: it answered 405, 406 or
501 (``UnsupportedOperationException``), or its ``/v1/config`` listed ``endpoints`` without it (then the report is not
forwarded at all). Accepted reports go to the :class:`~iceberg_lineage.proxy.applications.ApplicationTracker`, off
the request path.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import aiohttp
from aiohttp import web

from iceberg_lineage.proxy.forward import Tee, UpstreamError, decoded, error_response, relay, send

#: Upstream answers that mean "this endpoint is not implemented here".
NOT_IMPLEMENTED = frozenset({405, 406, 501})


class MetricsSupport:
    """Whether the upstream implements the metrics endpoint, as far as this process saw its ``/v1/config``."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.unlisted = False

    def note_config(self, config: Mapping[str, Any]) -> None:
        """A ``/v1/config`` answer as the upstream sent it (before the bridge adds the endpoint)."""
        endpoints = config.get("endpoints")
        if isinstance(endpoints, list):
            self.unlisted = self.endpoint not in endpoints


async def handle_metrics(request: web.Request, session: aiohttp.ClientSession, upstream: str,
                         support: MetricsSupport, limit: int,
                         accepted: Callable[[bytes], None]) -> web.StreamResponse:
    """Forward a report and relay the answer; ``accepted`` gets the (decoded, bounded) report once the upstream,
    or the bridge in its place, accepted it."""
    if support.unlisted:
        body = await request.read()
        _accept(accepted, body, request.headers.get("Content-Encoding"), limit)
        return web.Response(status=204)
    sent = Tee(limit)
    try:
        answer = await send(session, upstream, request, sent)
    except UpstreamError as exc:
        return error_response(exc.status, exc.kind, str(exc))
    async with answer:
        if answer.status in NOT_IMPLEMENTED:
            response: web.StreamResponse = web.Response(status=204)
        else:
            response, _ = await relay(request, answer, None)
    if (200 <= answer.status < 300 or answer.status in NOT_IMPLEMENTED) and sent.body() is not None:
        _accept(accepted, sent.body() or b"", request.headers.get("Content-Encoding"), limit)
    return response


def _accept(accepted: Callable[[bytes], None], body: bytes, encoding: str | None, limit: int) -> None:
    try:
        accepted(decoded(body, encoding, limit))
    except ValueError:
        pass  # a body we cannot inflate reports nothing; the engine's answer is already decided
