"""The upstream's failures come back in the REST error model and emit nothing: no connection 503, a connection
lost after the request was sent 502, no answer in time 504; an answer that breaks off reaches the engine cut,
never looking complete. A lineage server that is down costs no event: the
proxy spools them and ``replay`` sends them."""
from __future__ import annotations

import http.client
import json
import subprocess
import sys
import time
import urllib.request

import pyarrow as pa
import pytest

from iceberg_lineage.delivery.spool import Spool
from iceberg_lineage.lineage.events import snapshot_run_id
from tests.support.lineage_server import LineageServer, free_port
from tests.support.olschema import validate_event
from tests.support.proxy import get, hang_up_server, own_properties, post, proxy_env, start_proxy

COMMIT = "/v1/warehouse/namespaces/ns/tables/t"
BODY = json.dumps({"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "v"}}]}).encode()


def error_of(body: bytes) -> dict:
    return json.loads(body)["error"]


def test_upstream_down_is_503_and_nothing_is_emitted(tmp_path):
    with LineageServer() as lineage:
        proxy = start_proxy(f"http://127.0.0.1:{free_port()}", tmp_path, lineage.url)
        try:
            status, body = post(proxy.uri + COMMIT, BODY, {"Authorization": "Bearer t0k3n-abcdefgh"})
            config_status, _ = get(proxy.uri + "/v1/config")
        finally:
            proxy.stop()
        assert (status, config_status) == (503, 503)
        assert error_of(body) == {"message": "the upstream catalog cannot be reached",
                                  "type": "ServiceUnavailableException", "code": 503}
        assert lineage.requests == []


def commit_to(server, url: str, tmp_path, **env: str) -> tuple[int, bytes, list]:
    """One commit through a proxy in front of a failing upstream ``server``: the answer, and what reached the
    lineage server."""
    with LineageServer() as lineage:
        proxy = start_proxy(url, tmp_path, lineage.url, **env)
        try:
            status, body = post(proxy.uri + COMMIT, BODY)
        finally:
            proxy.stop()
            server.close()
        return status, body, lineage.requests


def test_upstream_dropping_the_connection_after_a_commit_is_502(tmp_path):
    status, body, emitted = commit_to(*hang_up_server(), tmp_path)
    assert status == 502
    assert error_of(body)["type"] == "CommitStateUnknownException"
    assert error_of(body)["code"] == 502
    assert emitted == []


def test_an_answer_that_breaks_off_reaches_the_engine_cut_never_complete(tmp_path):
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    server, url = hang_up_server(partial=head + b'{"metadata": ')
    proxy = start_proxy(url, tmp_path, None)
    try:
        request = urllib.request.Request(proxy.uri + "/v1/warehouse/namespaces/ns/tables/t")
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 200
            with pytest.raises(http.client.IncompleteRead) as cut:
                response.read()
    finally:
        proxy.stop()
        server.close()
    assert cut.value.partial == b'{"metadata": '
    log = proxy.output().splitlines()
    assert [line for line in log if line.startswith(("WARNING", "ERROR", "Traceback"))] == [
        "WARNING iceberg-lineage proxy: the upstream catalog's answer broke off; connection closed"]


def test_upstream_silent_after_a_commit_is_504(tmp_path):
    status, body, emitted = commit_to(*hang_up_server(delay=5.0), tmp_path,
                                      ICEBERG_LINEAGE__PROXY__UPSTREAM_TIMEOUT_S="0.5")
    assert status == 504
    assert error_of(body) == {"message": "the upstream catalog did not answer in time; the request's outcome "
                                         "is unknown", "type": "CommitStateUnknownException", "code": 504}
    assert emitted == []


def dead_transport(port: int) -> dict[str, str]:
    """An HTTP transport to a port nobody listens on, without openlineage-python's retries (seconds each)."""
    return {"OPENLINEAGE__TRANSPORT__TYPE": "http", "OPENLINEAGE__TRANSPORT__URL": f"http://127.0.0.1:{port}",
            "OPENLINEAGE__TRANSPORT__RETRY__TOTAL": "0"}


def test_lineage_server_down_spools_then_replay_sends(seaweed, tmp_path):
    port = free_port()
    proxy = start_proxy(seaweed.uri, tmp_path, None, *own_properties(seaweed),
                        ICEBERG_LINEAGE__DELIVERY__BREAKER_COOLDOWN_S="600", **dead_transport(port))
    try:
        catalog = seaweed.catalog("spooling", uri=proxy.uri)
        catalog.create_namespace_if_not_exists("spooled")
        table = catalog.create_table("spooled.t", pa.schema([("id", pa.int64())]))
        table.append(pa.table({"id": [1, 2]}))
        table.append(pa.table({"id": [3]}))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (not Spool.exists(proxy.spool_path)
                                               or Spool(proxy.spool_path).count() < 6):
            time.sleep(0.1)
    finally:
        proxy.stop()
    md = seaweed.catalog("direct").load_table("spooled.t").metadata
    with LineageServer(port=port) as lineage:
        replay = subprocess.run([sys.executable, "-m", "iceberg_lineage.cli", "replay"], cwd=tmp_path,
                                env=proxy_env(tmp_path, lineage.url), capture_output=True, text=True, timeout=60)
        assert replay.returncode == 0, replay.stderr
        events = lineage.accepted_events()
    for event in events:
        validate_event(event)
    runs = sorted(e["run"]["runId"] for e in events if e["job"]["name"] == "spooled.t.commit")
    # each run's START and COMPLETE
    assert runs == sorted(2 * [str(snapshot_run_id(str(md.table_uuid), s.snapshot_id, s.timestamp_ms))
                               for s in md.snapshots])
    # the CREATE run: START and COMPLETE
    assert [e["job"]["name"] for e in events if e["job"]["name"].endswith(".catalog")] == ["spooled.t.catalog"] * 2
