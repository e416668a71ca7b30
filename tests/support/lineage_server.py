"""A real HTTP endpoint on 127.0.0.1 for tests: it records every request and answers as each test scripts it
(status, headers, delay, or a wait on a gate). One implementation for every test that needs an OpenLineage or
Iceberg REST server."""
from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass(frozen=True)
class Answer:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    body: bytes = b""
    #: The body is sent again and again, with no length, until the client hangs up (an endless answer).
    endless: bool = False


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


#: (request index, body) -> how to answer
Script = Callable[[int, bytes], Answer]


def always_ok(_n: int, _body: bytes) -> Answer:
    return Answer()


def free_port() -> int:
    """A port nothing listens on (connection refused) until a test starts a server there."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LineageServer:
    """Records every POST (``requests``, ``received``) and those answered 2xx (``accepted``); GETs answer
    ``get_body`` as JSON (an Iceberg REST ``/v1/config``, for instance)."""

    def __init__(self, port: int = 0, script: Script = always_ok, get_body: Any = None) -> None:
        self.script = script
        self.requests: list[Request] = []
        self.accepted: list[bytes] = []
        #: Paths of the GET requests (a client that followed a redirect as a GET).
        self.gets: list[str] = []
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._busy = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                with server._lock:
                    server.gets.append(self.path)
                body = json.dumps(get_body if get_body is not None else {}).encode()
                self._answer(Answer(200, {"Content-Type": "application/json"}, body=body))

            def do_POST(self) -> None:  # noqa: N802
                with server._idle:
                    server._busy += 1
                try:
                    body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                    with server._lock:
                        n = len(server.requests)
                        server.requests.append(Request("POST", self.path, dict(self.headers), body))
                    answer = server.script(n, body)
                    time.sleep(answer.delay)
                    if 200 <= answer.status < 300:
                        with server._lock:
                            server.accepted.append(body)
                    self._answer(answer)
                finally:
                    with server._idle:
                        server._busy -= 1
                        server._idle.notify_all()

            def _answer(self, answer: Answer) -> None:
                try:
                    self.send_response(answer.status)
                    for k, v in answer.headers.items():
                        self.send_header(k, v)
                    if answer.endless:
                        self.send_header("Connection", "close")
                        self.end_headers()
                        while True:
                            self.wfile.write(answer.body)
                    self.send_header("Content-Length", str(len(answer.body)))
                    self.end_headers()
                    self.wfile.write(answer.body)
                except OSError:  # the client gave up waiting
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def received(self) -> list[bytes]:
        return [r.body for r in self.requests]

    def events(self) -> list[dict[str, Any]]:
        """The bodies received, parsed."""
        return [r.json() for r in self.requests]

    def accepted_events(self) -> list[dict[str, Any]]:
        """The bodies answered 2xx, parsed."""
        return [json.loads(b) for b in self.accepted]

    def wait_idle(self, timeout: float = 30) -> bool:
        """Wait until no request is being handled (one a killed client sent is still counted once it lands)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._busy == 0, timeout)

    def clear(self) -> None:
        """Forget what was received so far."""
        with self._lock:
            self.requests.clear()
            self.accepted.clear()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "LineageServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
