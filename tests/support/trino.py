"""Trino 476 for the tests (issue 30): one single-node server per test session on an Iceberg REST catalog (the
bridge of :mod:`tests.support.live_bridge`), started in the background as the session starts (about a minute and
a half here), with its statements run on a thread, so that both overlap other tests.

``make provision`` unpacks the server with only its iceberg plugin into ``.cache/interop/trino`` and writes the
Java 22+ it found (Trino refuses older ones) to ``java-home``; Trino's Python client lives in a virtualenv of its
own, ``.cache/interop/trino-client/venv``, where :meth:`Trino.sql` runs a short client program.
"""
from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.support.engines import INTEROP, _provision_error, require
from tests.support.lineage_server import free_port
from tests.support.processes import stop_process_group
from tests.support.seaweed import ACCESS_KEY, REGION, SECRET_KEY, WAREHOUSE

TRINO_HOME = INTEROP / "trino" / "trino-server-476"
JAVA_HOME_FILE = INTEROP / "trino" / "java-home"
CLIENT_VENV = INTEROP / "trino-client" / "venv"
CATALOG = "ice"
START_TIMEOUT_S = 300.0
CLIENT_TIMEOUT_S = 300.0

#: Run in the client's virtualenv: the statements (JSON on stdin) one by one, each answer's rows as JSON on stdout.
_CLIENT = """
import json, sys
import trino
cursor = trino.dbapi.connect(host="127.0.0.1", port=int(sys.argv[1]), user="lineage-tests",
                             catalog=sys.argv[2]).cursor()
for statement in json.load(sys.stdin):
    cursor.execute(statement)
    print(json.dumps(cursor.fetchall(), default=str), flush=True)
"""


def run_client(python: Path, program: Path, args: list[str], statements: list[str], engine: str,
               timeout: float = CLIENT_TIMEOUT_S, env: dict[str, str] | None = None) -> list:
    """A client program's answers, one JSON line each, for ``statements`` sent as JSON on its stdin; its last error
    line as an AssertionError when it fails."""
    proc = subprocess.run([str(python), str(program), *args], input=json.dumps(statements), capture_output=True,
                          text=True, timeout=timeout, env=env)
    if proc.returncode != 0:
        lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
        errors = [line for line in lines if "Error" in line or "Exception" in line] or lines
        raise AssertionError(f"{engine} failed after {len(proc.stdout.splitlines())} answer(s): "
                             f"{errors[-1] if errors else 'no output'}")
    return [json.loads(line) for line in proc.stdout.splitlines()]


@dataclass(frozen=True)
class Trino:
    """Where the session's Trino listens; its catalog ``ice`` is the REST catalog at ``catalog_uri``."""

    port: int
    root: Path
    catalog_uri: str

    def sql(self, *statements: str) -> list:
        """Each statement's rows, through Trino's own Python client."""
        return run_client(CLIENT_VENV / "bin" / "python", self.root / "client.py", [str(self.port), CATALOG],
                          list(statements), "Trino")


def _files(root: Path, port: int, catalog_uri: str, s3_endpoint: str) -> None:
    """``etc``: one coordinator on 127.0.0.1 with small memory limits, quiet logs, and the REST catalog."""
    etc = root / "etc"
    (etc / "catalog").mkdir(parents=True)
    properties = {
        "node.properties": {"node.environment": "tests", "node.id": "lineage-tests", "node.bind-ip": "127.0.0.1",
                            "node.internal-address": "127.0.0.1"},
        "config.properties": {"coordinator": "true", "node-scheduler.include-coordinator": "true",
                              "http-server.http.port": str(port), "discovery.uri": f"http://127.0.0.1:{port}",
                              "query.max-memory": "512MB", "query.max-memory-per-node": "512MB"},
        "log.properties": {"io.trino": "WARN", "io.airlift": "WARN"},
        "catalog/ice.properties": {
            "connector.name": "iceberg", "iceberg.catalog.type": "rest", "iceberg.rest-catalog.uri": catalog_uri,
            "iceberg.rest-catalog.warehouse": f"s3://{WAREHOUSE}/", "iceberg.rest-catalog.security": "OAUTH2",
            "iceberg.rest-catalog.oauth2.credential": f"{ACCESS_KEY}:{SECRET_KEY}", "fs.native-s3.enabled": "true",
            "s3.endpoint": s3_endpoint, "s3.path-style-access": "true", "s3.region": REGION,
            "s3.aws-access-key": ACCESS_KEY, "s3.aws-secret-key": SECRET_KEY},
    }
    for name, values in properties.items():
        (etc / name).write_text("".join(f"{key}={value}\n" for key, value in values.items()))
    (etc / "jvm.config").write_text("-Xmx2G\n-XX:+UseSerialGC\n-XX:+ExitOnOutOfMemoryError\n"
                                    "-Djdk.attach.allowAttachSelf=true\n")
    (root / "client.py").write_text(_CLIENT)


def _started(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/info", timeout=1) as response:
            return json.loads(response.read()).get("starting") is False
    except (OSError, urllib.error.URLError, ValueError):
        return False


def start_trino(root: Path, catalog_uri: str, s3_endpoint: str) -> tuple[subprocess.Popen, Trino]:
    """``launcher run`` in ``root`` with the Java 22+ that provisioning found, once the server says it has started;
    its log is ``root/trino.log``."""
    port = free_port()
    _files(root, port, catalog_uri, s3_endpoint)
    java = JAVA_HOME_FILE.read_text().strip()
    env = {**os.environ, "JAVA_HOME": java, "PATH": f"{java}/bin:{os.environ['PATH']}"}
    log = open(root / "trino.log", "wb")
    process = subprocess.Popen([str(TRINO_HOME / "bin" / "launcher"), "run", f"--etc-dir={root / 'etc'}",
                                f"--data-dir={root / 'data'}"], cwd=root, env=env, stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)
    log.close()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not _started(port):
        if process.poll() is not None or time.monotonic() > deadline:
            stop_process_group(process)
            errors = [line for line in (root / "trino.log").read_text(errors="replace").splitlines() if "ERROR" in line]
            raise RuntimeError(f"Trino did not start: {errors[0] if errors else 'no error logged'}")
        time.sleep(0.5)
    return process, Trino(port, root, catalog_uri)


def missing_trino() -> str | None:
    if not (TRINO_HOME / "bin" / "launcher").exists() or not JAVA_HOME_FILE.exists():
        return f"no Trino in {TRINO_HOME} (make provision){_provision_error('trino')}"
    if not (CLIENT_VENV / "bin" / "python").exists():
        return f"no Trino client in {CLIENT_VENV} (make provision){_provision_error('trino-client')}"
    return None


#: Trino's writes (issue 30), on a v2 table ``a`` and a table ``b`` filled from it, in this order: CREATE (an empty
#: append), INSERT, DELETE (merge-on-read: a position-delete file), UPDATE, MERGE, ADD COLUMN (no snapshot), an
#: INSERT with the new column, optimize (a replace), then ``INSERT INTO b SELECT ... FROM a``.
NAMESPACE = "trinons"
WRITES = (
    f"CREATE SCHEMA IF NOT EXISTS {NAMESPACE}",
    f"CREATE TABLE {NAMESPACE}.a (id BIGINT, name VARCHAR, amount DOUBLE, price DECIMAL(10,2), day DATE, "
    "ts TIMESTAMP(6), flag BOOLEAN, part VARCHAR) WITH (format_version = 2, partitioning = ARRAY['part'])",
    f"INSERT INTO {NAMESPACE}.a SELECT id, IF(id % 6 = 5, NULL, 'customer-with-a-long-name-' || CAST(id AS VARCHAR)), "
    "IF(id % 7 = 3, nan(), IF(id % 5 = 4, NULL, id * 1.5)), CAST(id AS DECIMAL(10,2)) + 0.25, "
    "DATE '2024-01-01' + id % 3 * INTERVAL '1' DAY, TIMESTAMP '2024-01-01 10:00:00' + id * INTERVAL '1' MINUTE, "
    "id % 2 = 0, IF(id < 20, 'a', 'b') FROM UNNEST(sequence(0, 29)) AS v(id)",
    f"DELETE FROM {NAMESPACE}.a WHERE id % 4 = 1",
    f"UPDATE {NAMESPACE}.a SET amount = -1.0, name = 'updated' WHERE id IN (2, 22)",
    f"MERGE INTO {NAMESPACE}.a t USING (VALUES (4, 'merged'), (100, 'new')) AS s(id, name) ON t.id = s.id "
    "WHEN MATCHED THEN UPDATE SET name = s.name "
    "WHEN NOT MATCHED THEN INSERT (id, name, part) VALUES (s.id, s.name, 'b')",
    f"ALTER TABLE {NAMESPACE}.a ADD COLUMN extra BIGINT",
    f"INSERT INTO {NAMESPACE}.a (id, name, part, extra) VALUES (200, 'with-extra', 'c', 7)",
    f"ALTER TABLE {NAMESPACE}.a EXECUTE optimize",
    f"CREATE TABLE {NAMESPACE}.b (id BIGINT, name VARCHAR) WITH (format_version = 2)",
    f"INSERT INTO {NAMESPACE}.b SELECT id, name FROM {NAMESPACE}.a WHERE part = 'a'",
    f"SELECT count(*) FROM {NAMESPACE}.a",
)


@dataclass
class TrinoRun:
    """The session's Trino and its writes (:data:`WRITES`), which run in the background: :meth:`answers` waits."""

    server: Future
    writes: Future

    def trino(self) -> Trino:
        return self.server.result(timeout=START_TIMEOUT_S + CLIENT_TIMEOUT_S)[1]

    def answers(self) -> list:
        return self.writes.result(timeout=START_TIMEOUT_S + 2 * CLIENT_TIMEOUT_S)


@pytest.fixture(scope="session")
def trino_run(live_bridge, tmp_path_factory) -> TrinoRun:
    """Trino on the bridge, started (and :data:`WRITES` run) on threads; stopped at the session's end."""
    require("trino")
    root = tmp_path_factory.mktemp("trino")
    pool = ThreadPoolExecutor(2, thread_name_prefix="trino")
    server = pool.submit(start_trino, root, live_bridge.proxy.uri, live_bridge.seaweed.s3_endpoint)
    run = TrinoRun(server, pool.submit(lambda: server.result()[1].sql(*WRITES)))
    try:
        yield run
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        if server.exception() is None:
            stop_process_group(server.result()[0])
