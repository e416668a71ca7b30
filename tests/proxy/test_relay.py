"""The serving process's application in this process (``make_app`` on a thread, its captures on a plain queue):
``/v1/config`` answers read to their end up to the limit (300 KiB rewritten, 1 MiB + 1 passed unchanged), and a
commit whose client went away before its answer is still captured (it landed upstream)."""
from __future__ import annotations

import json
import queue
import socket
import threading

from iceberg_lineage.config import ProxySection, Settings
from iceberg_lineage.proxy.app import CONFIG_MAX_BYTES, make_app
from iceberg_lineage.proxy.capture import ByteBudget, CaptureQueue, Channel
from iceberg_lineage.proxy.routes import METRICS_ENDPOINT
from iceberg_lineage.proxy.tables import TableLoader
from tests.support.lineage_server import Answer, LineageServer
from tests.support.proxy import get, serve_in_thread, wait_until

PUBLIC = "http://proxy.example:8181"


def relay_through(upstream: str, own_load_timeout_s: float = 5.0) -> tuple[str, queue.Queue]:
    """A serving process's application in front of ``upstream``; its URL and its channel."""
    channel: queue.Queue = queue.Queue()

    async def make():
        loader = TableLoader(upstream, {}, own_load_timeout_s)
        captures = CaptureQueue(Channel(channel, ByteBudget(1 << 30)), loader, 100)
        return make_app(ProxySection(upstream=upstream, public_uri=PUBLIC), Settings(), captures)

    return serve_in_thread(make), channel


def config_of(size: int) -> dict:
    """A ``/v1/config`` answer whose JSON is exactly ``size`` bytes."""
    config = {"defaults": {"pad": ""}, "overrides": {"uri": "http://internal:8181"}, "endpoints": ["GET /v1/config"]}
    config["defaults"]["pad"] = "x" * (size - len(json.dumps(config)))
    assert len(json.dumps(config)) == size
    return config


def test_a_config_answer_of_300_kib_is_read_whole_and_rewritten():
    config = config_of(300 * 1024)
    with LineageServer(get_body=config) as upstream:
        url, _ = relay_through(upstream.url)
        status, body = get(url + "/v1/config")
    assert status == 200
    assert json.loads(body) == {**config, "overrides": {"uri": PUBLIC},
                                "endpoints": ["GET /v1/config", METRICS_ENDPOINT]}


def test_a_config_answer_past_the_limit_passes_unchanged():
    config = config_of(CONFIG_MAX_BYTES + 1)
    with LineageServer(get_body=config) as upstream:
        url, _ = relay_through(upstream.url)
        status, body = get(url + "/v1/config")
    assert (status, len(body)) == (200, CONFIG_MAX_BYTES + 1)
    assert body == json.dumps(config).encode()


def test_a_commit_whose_client_went_away_before_its_answer_is_still_captured():
    metadata = {"format-version": 2, "table-uuid": "u", "location": "s3://w/db/t"}
    answer = json.dumps({"metadata-location": "s3://w/db/t/metadata/v2.metadata.json", "metadata": metadata}).encode()

    def script(_n: int, _body: bytes) -> Answer:
        gone.wait(30)  # the commit landed upstream; the client leaves before its answer
        return Answer(200, {"Content-Type": "application/json"}, body=answer)

    gone = threading.Event()
    request = b'{"requirements": [], "updates": []}'
    with LineageServer(script=script) as upstream:
        url, channel = relay_through(upstream.url)
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.sendall(b"POST /v1/w/namespaces/db/tables/t HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                           b"\r\nContent-Length: %d\r\n\r\n%s" % (len(request), request))
            assert wait_until(lambda: upstream.requests)
        gone.set()
        capture = channel.get(timeout=30)
        assert [r.body for r in upstream.requests] == [request]
    assert (capture.route.kind, capture.route.table, capture.status) == ("commit", "t", 200)
    assert (capture.request, capture.response) == (request, answer)
