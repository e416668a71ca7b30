"""``/metrics`` forwarding: the upstream's answer reaches the engine (404 included); the proxy answers 204 itself
only for an upstream that does not implement the endpoint (405, 406, 501, or ``endpoints`` without it), and hands on
exactly the reports that were accepted."""
from __future__ import annotations

import json

import pytest

from iceberg_lineage.proxy.metrics import MetricsSupport, handle_metrics
from iceberg_lineage.proxy.routes import METRICS_ENDPOINT
from tests.proxy.reports import scan_report
from tests.support.lineage_server import Answer, LineageServer
from tests.support.proxy import post, serve_in_thread

PATH = "/v1/warehouse/namespaces/db/tables/a/metrics"
NO_TABLE = json.dumps({"error": {"message": "Table does not exist: db.a", "type": "NoSuchTableException",
                                 "code": 404}}).encode()


def serve(upstream: str, support: MetricsSupport, accepted: list) -> str:
    """The handler alone in an aiohttp app on a thread; its URL."""
    import aiohttp
    from aiohttp import web

    async def make() -> web.Application:
        session = aiohttp.ClientSession(auto_decompress=False)

        async def handle(request: web.Request) -> web.StreamResponse:
            return await handle_metrics(request, session, upstream, support, 1 << 20, 30.0, accepted.append)

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handle)
        return app

    return serve_in_thread(make)


@pytest.mark.parametrize("status, body, engine_gets, handed_on", [
    (204, b"", 204, True),
    (404, NO_TABLE, 404, False),
    (405, b"", 204, True),
    (406, b"", 204, True),
    (501, b'{"error": {"type": "UnsupportedOperationException"}}', 204, True),
    (500, b'{"error": {"type": "ServiceFailureException"}}', 500, False),
])
def test_the_upstream_answers_unless_it_does_not_implement_the_endpoint(status, body, engine_gets, handed_on):
    report = json.dumps(scan_report(7)).encode()
    with LineageServer(script=lambda _n, _b: Answer(status, {"Content-Type": "application/json"}, body=body)) as up:
        accepted: list = []
        got = post(serve(up.url, MetricsSupport(METRICS_ENDPOINT), accepted) + PATH, report)
        assert [(r.path, r.body) for r in up.requests] == [(PATH, report)]
    assert got == (engine_gets, body if engine_gets != 204 else b"")
    assert accepted == ([report] if handed_on else [])


def test_an_upstream_whose_config_lists_endpoints_without_metrics_is_not_asked():
    support = MetricsSupport(METRICS_ENDPOINT)
    support.note_config({"defaults": {}, "endpoints": ["GET /v1/{prefix}/namespaces"]})
    report = json.dumps(scan_report(7)).encode()
    with LineageServer() as up:
        accepted: list = []
        assert post(serve(up.url, support, accepted) + PATH, report) == (204, b"")
        assert up.requests == []
    assert accepted == [report]
    support.note_config({"endpoints": ["GET /v1/{prefix}/namespaces", METRICS_ENDPOINT]})
    assert support.unlisted is False


def test_a_relayed_answer_is_the_handlers_response_not_an_error_logged_per_report(caplog):
    """The relayed answer is the handler's return value: aiohttp logs no "Web-handler should return a response"
    error (with its traceback) for every forwarded report, and keeps the engine's connection."""
    report = json.dumps(scan_report(7)).encode()
    with LineageServer(script=lambda _n, _b: Answer(204)) as up:
        accepted: list = []
        url = serve(up.url, MetricsSupport(METRICS_ENDPOINT), accepted)
        got = [post(url + PATH, report) for _ in range(3)]
    assert got == [(204, b"")] * 3
    assert accepted == [report] * 3
    assert [r.getMessage()[:40] for r in caplog.records if r.levelno >= 40] == []
