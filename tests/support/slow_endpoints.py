"""Real TCP endpoints on 127.0.0.1 that misbehave below HTTP: one that drips its answer a byte at a time (a socket
read timeout restarts with each byte), and one that accepts each connection and closes it at once (a lineage server
that is down behind a load balancer). Both count what reached them."""
from __future__ import annotations

import socket
import threading
from typing import Callable

#: What the dripping endpoint answers, one byte per interval: a status line, then headers that never end.
DRIP_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: " + b"z" * 100_000
#: Headers sent whole, then a body that drips (the answer's body phase).
DRIP_BODY = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"


def _read_request(conn: socket.socket) -> bytes:
    """The body of one HTTP request with a Content-Length (what openlineage-python and the webhook send)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return b""
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return body


class _Endpoint:
    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.connections = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        conn.close()

    def stop(self) -> None:
        self._stop.set()
        self._listener.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class ClosingEndpoint(_Endpoint):
    """Accepts each connection and closes it before reading anything; ``connections`` counts the attempts."""


class DrippingEndpoint(_Endpoint):
    """Reads each request whole (``bodies``), then sends its answer one byte every ``interval`` seconds, never to
    its end, until the client hangs up. ``while_dripping`` is called before each byte; its truthy results are
    kept in ``seen`` (what was true while a client was still waiting on the answer)."""

    def __init__(self, answer: bytes = DRIP_HEAD, interval: float = 1.0,
                 while_dripping: Callable[[], object] | None = None) -> None:
        self.answer, self.interval, self.while_dripping = answer, interval, while_dripping
        self.bodies: list[bytes] = []
        self.seen: list[object] = []
        #: Requests whose client hung up while the answer dripped.
        self.cut = 0
        super().__init__()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            body = _read_request(conn)
            with self._lock:
                self.bodies.append(body)
            for byte in self.answer:
                if self.while_dripping is not None and (found := self.while_dripping()):
                    self.seen.append(found)
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    with self._lock:
                        self.cut += 1
                    return
                if self._stop.wait(self.interval):
                    return
