"""Slowloris: half-open requests (headers never finished, or a body that never comes) hold the proxy no longer than
``proxy.header_timeout_s`` and ``proxy.body_timeout_s`` (here 1 s each), and a real request gets through meanwhile.
The idle clients come from other ``127.0.0.x`` addresses, as many clients would."""
from __future__ import annotations

import socket

from tests.support.lineage_server import LineageServer
from tests.support.proxy import get, start_proxy

HALF_OPEN = 300
#: A commit whose body never comes whole.
DRIPPING = (b"POST /v1/w/namespaces/db/tables/t HTTP/1.1\r\nHost: proxy\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n{")


def connect(port: int, source: str, head: bytes) -> socket.socket:
    client = socket.socket()
    client.bind((source, 0))
    client.connect(("127.0.0.1", port))
    client.sendall(head)
    client.settimeout(60)
    return client


def test_half_open_requests_are_cut_at_their_timeouts_and_a_real_request_gets_through(tmp_path):
    with LineageServer(get_body={"defaults": {}, "overrides": {}}) as upstream, LineageServer() as lineage:
        proxy = start_proxy(upstream.url, tmp_path / "proxy", lineage.url,
                            ICEBERG_LINEAGE__PROXY__HEADER_TIMEOUT_S="1", ICEBERG_LINEAGE__PROXY__BODY_TIMEOUT_S="1")
        port = int(proxy.uri.rsplit(":", 1)[1])
        idle: list[socket.socket] = []
        try:
            idle += [connect(port, f"127.0.0.{2 + i % 200}", b"GET /v1/config HTTP/1.1\r\nHost: proxy\r\nX-Wait: ")
                    for i in range(HALF_OPEN)]
            idle.append(dripping := connect(port, "127.0.0.250", DRIPPING))
            assert get(proxy.uri + "/v1/config")[0] == 200
            assert dripping.recv(65536).startswith(b"HTTP/1.1 408 ")  # the body never came: nothing took effect
            # b"": the proxy closed each connection, answering nothing
            closed = [client.recv(1024) for client in idle[:HALF_OPEN]]
            assert closed == [b""] * HALF_OPEN
            assert get(proxy.uri + "/v1/config")[0] == 200
        finally:
            for client in idle:
                client.close()
            proxy.stop()
    assert proxy.process.returncode == 0
