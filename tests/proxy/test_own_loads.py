"""The proxy's own table loads (with its own credentials) run on threads of their own, bounded: pending drops of
tables the proxy never saw, whose loads hang, never starve the relay (aiohttp resolves the upstream's host name on
the default thread pool), and a load that drips its answer never holds lineage behind one table. Tests by order of
arrival: the other requests are answered, and the later commits' COMPLETEs queued, while the stuck loads are held."""
from __future__ import annotations

import json
import os
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from iceberg_lineage.config import Settings
from iceberg_lineage.proxy.capture import Capture
from iceberg_lineage.proxy.routes import Route
from tests.proxy.reports import lineage_end, relayed
from tests.proxy.test_relay import relay_through
from tests.support.proxy import get, wait_until

#: More pending drops than the default thread pool has threads (``ThreadPoolExecutor``'s default size).
DROPS = min(32, (os.cpu_count() or 1) + 4) + 2


class StuckCatalog:
    """A REST catalog whose table loads (GET of a table) hang until ``release`` (``drip``: their answer's head comes
    one byte at a time meanwhile, which restarts a read timeout with each byte); drops answer 204."""

    def __init__(self, drip: bool = False) -> None:
        self.release = threading.Event()
        self.loads: list[str] = []
        catalog = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                if self.path.startswith("/v1/config"):
                    self._answer(200, b'{"defaults": {}, "overrides": {}}')
                    return
                catalog.loads.append(self.path)
                if drip:
                    self.wfile.write(b"HTTP/1.1 404 Not Found\r\n")
                    while not catalog.release.wait(0.2):
                        self.wfile.write(b"X")
                        self.wfile.flush()
                    return
                catalog.release.wait(120)
                self._answer(404, b'{"error": {"message": "no", "type": "NoSuchTableException", "code": 404}}')

            def do_DELETE(self) -> None:  # noqa: N802
                self._answer(204, b"")

            def _answer(self, status: int, body: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    def stop(self) -> None:
        self.release.set()
        self.httpd.shutdown()


def delete(url: str, answers: list) -> None:
    request = urllib.request.Request(url, method="DELETE")
    with urllib.request.urlopen(request, timeout=120) as response:
        answers.append(response.status)


def test_pending_drops_of_unknown_tables_never_starve_the_relay():
    upstream = StuckCatalog()
    try:
        # the upstream by host name: aiohttp resolves it on the default thread pool
        url, _ = relay_through(f"http://localhost:{upstream.port}", own_load_timeout_s=120.0)
        answers: list = []
        drops = [threading.Thread(target=delete, args=(f"{url}/v1/namespaces/db/tables/t{i}", answers), daemon=True)
                 for i in range(DROPS)]
        for drop in drops:
            drop.start()
        assert wait_until(lambda: upstream.loads)  # the own loads hang
        assert get(url + "/v1/config")[0] == 200  # answered while they are held
        assert not upstream.release.is_set() and answers == []
        upstream.release.set()
        for drop in drops:
            drop.join(120)
        assert answers == [204] * DROPS  # and every drop went on once its load ended
    finally:
        upstream.stop()


def commit_capture(table: str) -> Capture:
    md = relayed(("db", table)).metadata
    last = md["snapshots"][-1]
    request = {"requirements": [], "updates": [{"action": "add-snapshot", "snapshot": last}]}
    return Capture(Route("commit", None, ("db",), table), 200, request=json.dumps(request).encode(),
                   response=json.dumps({"metadata-location": None, "metadata": md}).encode())


def test_one_stuck_own_load_never_holds_lineage_behind_it(tmp_path):
    upstream = StuckCatalog(drip=True)
    try:
        settings = Settings().updated({"proxy.own_load_timeout_s": 1.0, "proxy.report_wait_s": 0})
        interp, queued = lineage_end(settings, tmp_path / "state.db", upstream=f"http://127.0.0.1:{upstream.port}")
        stuck = {"table-changes": [{"identifier": {"namespace": ["db"], "name": "stuck"}, "requirements": [],
                                    "updates": json.loads(commit_capture("stuck").request)["updates"]}]}
        captures = [Capture(Route("transaction", None), 204, request=json.dumps(stuck).encode()),
                    *(commit_capture(f"t{i}") for i in range(5))]
        threading.Thread(target=lambda: [interp.interpret(c) for c in captures], daemon=True).start()

        def completes() -> list:
            return [e for batch in list(queued.items) for e in batch.events() if e.eventType.value == "COMPLETE"]

        assert len(wait_until(lambda: len(completes()) == 5 and completes(), timeout=60)) == 5
        assert upstream.loads == ["/v1/namespaces/db/tables/stuck"] and not upstream.release.is_set()
        assert sorted(e.job.name for e in completes()) == [f"db.t{i}.commit" for i in range(5)]
    finally:
        upstream.stop()
