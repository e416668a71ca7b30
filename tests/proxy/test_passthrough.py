"""Requests pass through unchanged but for hop-by-hop headers, answers come back as the upstream sent them, bodies
past proxy.max_body_bytes pass unparsed with one warning, and ``/v1/config`` points engines at the proxy and lists
the metrics endpoint (against a scripted upstream: one proxy for the module)."""
from __future__ import annotations

import json

import pytest

from iceberg_lineage.proxy.routes import METRICS_ENDPOINT, Route, classify
from tests.support.lineage_server import Answer, LineageServer
from tests.support.proxy import get, post, start_proxy, wait_until

CONFIG = {"defaults": {"clients": "4"}, "overrides": {"uri": "http://internal-catalog:8181", "prefix": "w"},
          "endpoints": ["GET /v1/{prefix}/namespaces", "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}"]}
PUBLIC = "https://lineage-proxy.example.com"
LIMIT = 200


def answer(n: int, body: bytes) -> Answer:
    return Answer(207, {"X-Upstream": "kept", "Content-Type": "application/json"}, body=b'{"echo": %d}' % len(body))


@pytest.fixture(scope="module")
def scripted(tmp_path_factory):
    upstream = LineageServer(script=answer, get_body=CONFIG)
    with LineageServer() as lineage:
        proxy = start_proxy(upstream.url, tmp_path_factory.mktemp("scripted"), lineage.url, "--public-uri", PUBLIC,
                            ICEBERG_LINEAGE__PROXY__MAX_BODY_BYTES=str(LIMIT))
        try:
            yield upstream, proxy, lineage
        finally:
            proxy.stop()
            upstream.stop()


def test_config_points_engines_at_the_proxy_and_lists_the_metrics_endpoint(scripted):
    _, proxy, _ = scripted
    status, body = get(proxy.uri + "/v1/config?warehouse=w")
    assert status == 200
    assert json.loads(body) == {**CONFIG, "overrides": {"uri": PUBLIC, "prefix": "w"},
                                "endpoints": [*CONFIG["endpoints"], METRICS_ENDPOINT]}


def test_request_and_answer_pass_through_unchanged_but_hop_by_hop_headers(scripted):
    upstream, proxy, _ = scripted
    upstream.requests.clear()
    status, body = post(proxy.uri + "/v1/w/namespaces/ns/tables/t/plan?x=1%2F2", b'{"snapshot-id": 1}',
                        {"Authorization": "Bearer abc.def", "X-Iceberg-Access-Delegation": "vended-credentials",
                         "Proxy-Authorization": "Basic eA==", "Keep-Alive": "timeout=5"})
    assert (status, body) == (207, b'{"echo": 18}')
    sent = upstream.requests[-1]
    assert sent.path == "/v1/w/namespaces/ns/tables/t/plan?x=1%2F2"
    assert sent.body == b'{"snapshot-id": 1}'
    assert sent.headers["Authorization"] == "Bearer abc.def"
    assert sent.headers["X-Iceberg-Access-Delegation"] == "vended-credentials"
    assert "Proxy-Authorization" not in sent.headers and "Keep-Alive" not in sent.headers
    assert sent.headers["Host"] == upstream.url.removeprefix("http://")


def test_a_body_past_the_bound_passes_unparsed_with_one_warning(scripted):
    upstream, proxy, lineage = scripted
    big = json.dumps({"requirements": [], "updates": [{"action": "set-properties",
                                                       "updates": {"k": "v" * LIMIT}}]}).encode()
    status, body = post(proxy.uri + "/v1/w/namespaces/ns/tables/t", big)
    assert (status, body) == (207, b'{"echo": %d}' % len(big))
    assert upstream.requests[-1].body == big

    def warnings() -> list[str]:
        return [line for line in proxy.output().splitlines() if "larger than proxy.max_body_bytes" in line]

    wait_until(warnings)
    assert warnings() == [f"WARNING iceberg-lineage proxy: a commit request of {len(big)} bytes is larger than "
                        f"proxy.max_body_bytes ({LIMIT}); passed through unparsed, nothing reported for it"]
    assert lineage.requests == []


@pytest.mark.parametrize("method, path, route", [
    ("GET", "/v1/config", Route("config")),
    ("POST", "/v1/w/namespaces/a%1Fb/tables", Route("create", "w", ("a", "b"))),
    ("POST", "/v1/namespaces/a/register", Route("register", None, ("a",))),
    ("POST", "/v1/w/namespaces/a/tables/t%20x", Route("commit", "w", ("a",), "t x")),
    ("DELETE", "/v1/w/namespaces/a/tables/t", Route("drop", "w", ("a",), "t")),
    ("GET", "/v1/w/namespaces/a/tables/t", Route("load", "w", ("a",), "t")),
    ("POST", "/v1/w/tables/rename", Route("rename", "w")),
    ("POST", "/v1/transactions/commit", Route("transaction")),
    ("POST", "/v1/w/namespaces/a/tables/t/metrics", Route("metrics", "w", ("a",), "t")),
    ("GET", "/v1/w/namespaces/a/tables/t/credentials", Route("other")),
    ("POST", "/v1/oauth/tokens", Route("other")),
])
def test_routes(method, path, route):
    assert classify(method, path) == route
