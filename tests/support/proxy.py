"""The proxy in tests: ``iceberg-lineage proxy`` as a real subprocess on a free port (so a test can SIGKILL
it), a recording pass-through between it and the upstream (what the upstream answered, to compare with what the
engine got), and tiny TCP servers that fail in the ways an upstream fails."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, TypeVar

from tests.support.lineage_server import LineageServer, free_port
from tests.support.seaweed import Seaweed

START_TIMEOUT_S = 30.0
#: The header a test client adds to its requests, so the recorder tells them from the proxy's own loads.
CLIENT_MARK = "X-Test-Client"


@dataclass
class Proxy:
    process: subprocess.Popen
    uri: str
    home: Path
    log: Path

    @property
    def state_path(self) -> Path:
        return self.home / "state.db"

    @property
    def spool_path(self) -> Path:
        return self.home / "spool"

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def processes(self) -> list[int]:
        """The proxy's process and its workers (its process group)."""
        return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _group_of(int(p.name)) ==
                self.process.pid]

    def kill(self) -> None:
        """SIGKILL the proxy and its workers at once."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _group_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def proxy_env(home: Path, lineage_url: str | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENLINEAGE", "ICEBERG_LINEAGE", "PYICEBERG"))}
    env.update({
        "ICEBERG_LINEAGE__STATE__PATH": str(home / "state.db"),
        "ICEBERG_LINEAGE__SPOOL__PATH": str(home / "spool"),
        "ICEBERG_LINEAGE__DELIVERY__BREAKER_COOLDOWN_S": "0",
    })
    if lineage_url is not None:
        env["OPENLINEAGE_URL"] = lineage_url
    env.update(extra)
    return env


def scanner_env(seaweed: Any, home: Path, lineage_url: str | None, public_uri: str) -> dict[str, str]:
    """A scanner on the upstream directly (catalog ``sw``), naming tables as the proxy does."""
    props = {"type": "rest", "uri": seaweed.uri, "credential": seaweed.credential, "warehouse": "s3://warehouse/",
             **seaweed.s3_properties()}
    env = proxy_env(home, lineage_url, ICEBERG_LINEAGE__NAMING__REST_URI=public_uri)
    env.update(catalog_env("sw", props))
    return env


def start_proxy(upstream: str, home: Path, lineage_url: str | None, *args: str, **env: str) -> Proxy:
    """The proxy in ``home`` (state, spool, log), once it answers on its port."""
    home.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = home / f"proxy-{port}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "iceberg_lineage.cli", "proxy", "--upstream", upstream,
             "--listen", f"127.0.0.1:{port}", *args],
            cwd=home, env=proxy_env(home, lineage_url, **env), stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True)
    proxy = Proxy(process, f"http://127.0.0.1:{port}", home, log)
    deadline = time.monotonic() + START_TIMEOUT_S
    while not _accepts(port):
        if process.poll() is not None or time.monotonic() > deadline:
            proxy.stop()
            raise RuntimeError(f"the proxy did not start: {proxy.output()[-2000:]}")
        time.sleep(0.05)
    return proxy


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def catalog_env(name: str, properties: dict[str, str]) -> dict[str, str]:
    """A PyIceberg catalog as ``PYICEBERG_CATALOG__<NAME>__*`` variables (``.`` is ``__``, ``-`` is ``_``)."""
    return {f"PYICEBERG_CATALOG__{name.upper()}__{key.upper().replace('.', '__').replace('-', '_')}": value
            for key, value in properties.items()}


from tests.support.processes import wait_until  # noqa: E402 - the proxy and bridge tests import it from here


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def post(url: str, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


@dataclass(frozen=True)
class RecordedAnswer:
    method: str
    path: str
    status: int
    body: bytes



def own_properties(seaweed: Seaweed) -> list[str]:
    """The proxy's own catalog and FileIO properties, as --io-property arguments."""
    props = {"credential": seaweed.credential, "warehouse": "s3://warehouse/", **seaweed.s3_properties()}
    return [arg for key, value in props.items() for arg in ("--io-property", f"{key}={value}")]

@dataclass
class Recorder:
    """A recording pass-through to ``upstream`` (aiohttp, on a thread): the answers the upstream gave to requests
    carrying :data:`CLIENT_MARK`, and the body of every report posted to ``/metrics``."""

    upstream: str
    #: storage credentials to vend: added as ``config`` and ``storage-credentials`` to every answer with table
    #: metadata, and answered at the credentials endpoint
    vend: dict[str, str] | None = None
    exchanges: list[RecordedAnswer] = field(default_factory=list)
    reports: list[bytes] = field(default_factory=list)
    #: every Authorization header that went through
    authorizations: set[str] = field(default_factory=set)
    port: int = 0

    def start(self) -> "Recorder":
        ready = threading.Event()
        self.port = free_port()
        threading.Thread(target=self._run, args=(ready,), daemon=True).start()
        ready.wait(10)
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _vended(self, data: bytes) -> bytes:
        if self.vend is None or not data.startswith(b"{"):
            return data
        answer = json.loads(data)
        if not isinstance(answer.get("metadata"), dict):
            return data
        answer["config"] = {**answer.get("config", {}), **self.vend}
        answer["storage-credentials"] = [{"prefix": "s3://", "config": self.vend}]
        return json.dumps(answer).encode()

    def _run(self, ready: threading.Event) -> None:
        import aiohttp
        from aiohttp import web

        async def handle(request: web.Request) -> web.Response:
            body = await request.read()
            if request.method == "POST" and request.rel_url.path.endswith("/metrics"):
                self.reports.append(body)
            if "Authorization" in request.headers:
                self.authorizations.add(request.headers["Authorization"])
            if self.vend is not None and request.rel_url.path.endswith("/credentials"):
                return web.json_response({"storage-credentials": [{"prefix": "s3://", "config": self.vend}]})
            headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "transfer-encoding")}
            async with aiohttp.ClientSession(auto_decompress=False) as session:
                async with session.request(request.method, self.upstream + request.rel_url.raw_path_qs,
                                           headers=headers, data=body or None, allow_redirects=False) as answer:
                    data = self._vended(await answer.read())
                    if CLIENT_MARK in request.headers:
                        self.exchanges.append(RecordedAnswer(request.method, request.rel_url.raw_path_qs, answer.status,
                                                       data))
                    out = {k: v for k, v in answer.headers.items()
                           if k.lower() not in ("transfer-encoding", "content-length", "connection")}
                    return web.Response(status=answer.status, headers=out, body=data)

        async def main() -> None:
            app = web.Application(client_max_size=1 << 30)
            app.router.add_route("*", "/{tail:.*}", handle)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", self.port).start()
            ready.set()
            await asyncio.Event().wait()

        asyncio.run(main())


def mark_client(catalog: Any, seen: list[RecordedAnswer]) -> None:
    """Mark a PyIceberg RestCatalog's requests, and keep every answer it got (method, path, status, body)."""
    session = catalog._session
    session.headers[CLIENT_MARK] = "1"

    def keep(response: Any, *_args: Any, **_kwargs: Any) -> None:
        seen.append(RecordedAnswer(response.request.method, response.request.path_url, response.status_code,
                             response.content))

    session.hooks["response"].append(keep)


def hang_up_server(delay: float | None = None, partial: bytes = b"") -> tuple[socket.socket, str]:
    """A TCP server that reads a request's head, sends ``partial`` (the start of an answer) and then closes the
    connection (``delay`` None), or keeps it open for ``delay`` seconds without answering."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                conn.sendall(partial)
                if delay is not None:
                    time.sleep(delay)

    threading.Thread(target=serve, daemon=True).start()
    return server, f"http://127.0.0.1:{server.getsockname()[1]}"


def serve_in_thread(make: Any) -> str:
    """The aiohttp application ``make()`` returns (called in its own event loop, on a daemon thread); its URL."""
    from aiohttp import web

    port, ready = free_port(), threading.Event()

    async def main() -> None:
        runner = web.AppRunner(await make(), access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        ready.set()
        await asyncio.Event().wait()

    threading.Thread(target=lambda: asyncio.run(main()), daemon=True).start()
    ready.wait(10)
    return f"http://127.0.0.1:{port}"


@dataclass
class ProxyStack:
    """SeaweedFS <- a recorder (it keeps every report posted to ``/metrics``) <- a proxy subprocess <- the clients;
    events go to a real local lineage server."""

    seaweed: Seaweed
    recorder: Recorder
    proxy: Proxy
    lineage: LineageServer

    def own_properties(self) -> list[str]:
        return own_properties(self.seaweed)


Stack = TypeVar("Stack", bound=ProxyStack)


@contextmanager
def proxy_stack(seaweed: Seaweed, folder: Path, kind: type[Stack]) -> Iterator[Stack]:
    """A :class:`ProxyStack` (or ``kind``) running until the block ends."""
    lineage = LineageServer()
    recorder = Recorder(seaweed.uri).start()
    proxy = start_proxy(recorder.url, folder, lineage.url, *own_properties(seaweed))
    try:
        yield kind(seaweed, recorder, proxy, lineage)
    finally:
        proxy.stop()
        lineage.stop()
