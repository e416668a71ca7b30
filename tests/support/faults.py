"""Storage and servers that fail on purpose: S3 on a moto server behind a fault-injecting proxy, and an
OpenLineage endpoint that fails a deterministic share of requests."""
from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.support.lineage_server import Answer, LineageServer
from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml
from pyarrow.fs import AwsStandardS3RetryStrategy

REGION = "us-east-1"
BUCKET = "lake"

#: S3's throttling answer and its internal error, as S3 spells them.
SLOW_DOWN = (503, (b"<?xml version='1.0' encoding='UTF-8'?><Error><Code>SlowDown</Code>"
                   b"<Message>Please reduce your request rate.</Message></Error>"))
INTERNAL = (500, (b"<?xml version='1.0' encoding='UTF-8'?><Error><Code>InternalError</Code>"
                  b"<Message>We encountered an internal error. Please try again.</Message></Error>"))

#: Decides, for the n-th GET (from 1) of a path, whether to fail it and how; None forwards it.
FaultRule = Callable[[str, int], "tuple[int, bytes] | None"]


class PatientS3RetryStrategy(AwsStandardS3RetryStrategy):
    """PyArrow's standard AWS retry with more attempts (PyIceberg's ``s3.retry-strategy-impl`` takes a class)."""

    def __init__(self) -> None:
        super().__init__(max_attempts=6)


def s3_properties(endpoint: str) -> dict[str, str]:
    """Always credentials, region and endpoint (see the PyIceberg reference, section 4)."""
    return {"s3.endpoint": endpoint, "s3.access-key-id": "testing", "s3.secret-access-key": "testing",
            "s3.region": REGION}


class S3Proxy:
    """Forwards every request to ``upstream`` (a moto server) unchanged, except GETs the rule fails.

    ``faults`` counts the failures answered per path; ``gets`` every GET seen per path.
    """

    def __init__(self, upstream: str, rule: FaultRule) -> None:
        host, port = upstream.removeprefix("http://").split(":")
        self.rule = rule
        self.gets: Counter[str] = Counter()
        self.faults: Counter[str] = Counter()
        lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self) -> None:
                path = self.path.split("?", 1)[0]
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                if self.command == "GET":
                    with lock:
                        proxy.gets[path] += 1
                        fault = proxy.rule(path, proxy.gets[path])
                        if fault:
                            proxy.faults[path] += 1
                    if fault:
                        return self._answer(fault[0], {"Content-Type": "application/xml"}, fault[1])
                conn = http.client.HTTPConnection(host, int(port), timeout=30)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
                    conn.request(self.command, self.path, body=body, headers=headers)
                    response = conn.getresponse()
                    data = response.read()
                    head = self.command == "HEAD"  # its Content-Length is the object's, not of an empty body
                    skip = {"connection", "transfer-encoding"} | (set() if head else {"content-length"})
                    self._answer(response.status, {k: v for k, v in response.getheaders() if k.lower() not in skip},
                                 data, head=head)
                finally:
                    conn.close()

            def _answer(self, status: int, headers: dict[str, str], data: bytes, head: bool = False) -> None:
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                if not head:
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if not head:
                    self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = _forward

            def do_HEAD(self) -> None:
                self._forward()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def first_gets_fail(n: int) -> FaultRule:
    """The first ``n`` GETs of every object fail, throttled and errored in turn."""
    return lambda path, count: (SLOW_DOWN if count % 2 else INTERNAL) if count <= n else None


def prefix_always_fails(prefix: str, suffix: str = "") -> FaultRule:
    """Every GET below ``/BUCKET/prefix`` ending in ``suffix`` answers 500; all others pass."""
    return lambda path, count: INTERNAL if path.startswith(f"/{BUCKET}/{prefix}") and path.endswith(suffix) else None


def small_rows(start: int, n: int = 3) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                     "name": pa.array([f"row {i}" for i in range(start, start + n)], pa.string())})


def failing_server(fails: Callable[[int], bool] = lambda n: False, delay_s: float = 0.0) -> LineageServer:
    """An OpenLineage endpoint that fails the requests ``fails(n)`` picks (n counts from 1), answering 500;
    ``delay_s`` slows each answer (a scan then lasts long enough to be killed)."""
    return LineageServer(script=lambda n, _body: Answer(500 if fails(n + 1) else 200, delay=delay_s))


def snapshot_of(event: dict[str, Any]) -> int | None:
    """The snapshot a run event is about (its output's version facet)."""
    outputs = event.get("outputs") or []
    version = outputs[0]["facets"].get("version") if outputs else None
    return int(version["datasetVersion"]) if version else None


def write_tables(catalog: Any, count: int, commits: int, namespace: str = "db") -> list[Any]:
    """``count`` small tables of ``commits`` snapshots each (one append per snapshot)."""
    tables = []
    for n in range(count):
        table = catalog.create_table(f"{namespace}.t{n:04d}", schema=small_rows(0).schema)
        for i in range(commits):
            table.append(small_rows(10 * i))
        tables.append(table)
    return tables


def every_tenth_fails(n: int) -> bool:
    """10 % of requests, deterministically: the 3rd, 13th, 23rd..."""
    return n % 10 == 3


SCAN_CLI = "import sys; from iceberg_lineage.cli import main; main(['scan', *sys.argv[1:]])"


def configure_catalogs(home: Path, catalogs: dict[str, dict[str, Any]]) -> dict[str, str]:
    """A ``.pyiceberg.yaml`` with these catalogs; returns the environment that points PyIceberg at it."""
    home.mkdir(parents=True, exist_ok=True)
    (home / ".pyiceberg.yaml").write_text(yaml.safe_dump({"catalog": catalogs}))
    return {"PYICEBERG_HOME": str(home)}


def scan_cli(*args: str, env: dict[str, str], **popen: Any) -> subprocess.CompletedProcess:
    """``iceberg-lineage scan`` in a subprocess with a JSON summary on stderr."""
    return subprocess.run([sys.executable, "-c", SCAN_CLI, "--format", "json", "--no-progress", *args],
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=300, check=False,
                          **popen)


def summary_of(done: subprocess.CompletedProcess) -> dict[str, Any]:
    return json.loads(done.stderr.strip().splitlines()[-1])


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
