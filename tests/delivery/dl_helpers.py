"""Helpers of the delivery tests: real OpenLineage HTTP endpoints on 127.0.0.1 whose answers each test scripts,
and events to send them."""
from __future__ import annotations

import datetime as dt
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from uuid import uuid4

from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import Job, Run, RunEvent, RunState
from openlineage.client.transport.http import HttpConfig, HttpTransport


@dataclass(frozen=True)
class Answer:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


#: (request index, body) -> how to answer
Script = Callable[[int, bytes], Answer]


def always_ok(_n: int, _body: bytes) -> Answer:
    return Answer()


class LineageServer:
    """Records every body that reaches it (``received``) and those it answered 2xx (``accepted``)."""

    def __init__(self, port: int, script: Script = always_ok) -> None:
        self.script = script
        self.received: list[bytes] = []
        self.accepted: list[bytes] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with server._lock:
                    n = len(server.received)
                    server.received.append(body)
                answer = server.script(n, body)
                time.sleep(answer.delay)
                if 200 <= answer.status < 300:
                    with server._lock:
                        server.accepted.append(body)
                try:
                    self.send_response(answer.status)
                    for k, v in answer.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except OSError:  # the client gave up waiting
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def free_port() -> int:
    """A port nothing listens on (connection refused) until a test starts a server there."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_client(url: str, *, timeout: float = 2.0, **retry: Any) -> OpenLineageClient:
    """A client with openlineage-python's HTTP transport; ``retry`` is merged into its default retry."""
    config: dict[str, Any] = {"url": url, "timeout": timeout}
    if retry:
        config["retry"] = retry
    return OpenLineageClient(transport=HttpTransport(HttpConfig.from_dict(config)))


#: Keeps tests fast: openlineage-python's 5 retries, with millisecond backoff.
FAST = {"backoff_factor": 0.01}


def run_event(
    event_type: RunState = RunState.START, run_id: str | None = None, job: str = "db.orders.spark"
) -> RunEvent:
    return RunEvent(
        eventType=event_type,
        eventTime=dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.timezone.utc).isoformat(),
        run=Run(runId=run_id or str(uuid4())),
        job=Job(namespace="iceberg-lineage-tests", name=job),
        producer="https://github.com/example/iceberg-lineage/tests",
    )


def run_pairs(n: int) -> list[RunEvent]:
    """START and COMPLETE of ``n`` runs, in emission order."""
    events = []
    for _ in range(n):
        run_id = str(uuid4())
        events += [run_event(RunState.START, run_id), run_event(RunState.COMPLETE, run_id)]
    return events


def key(body: bytes | str) -> tuple[str, str]:
    doc = json.loads(body)
    return doc["run"]["runId"], doc["eventType"]
