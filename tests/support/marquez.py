"""A real Marquez 0.51.1 (the reference OpenLineage server) on a real PostgreSQL, for the tests in tests/peers.

``make provision`` copies Marquez's api jar and its loopback ``marquez.yml`` into ``.cache/interop/marquez`` and its
runtime jars into ``lib``, and installs Debian's PostgreSQL. Marquez takes about 50 s to start (92 Flyway
migrations), so this plugin starts one Marquez and its PostgreSQL in a thread as soon as collection shows a test
that asks for the ``marquez`` fixture: the start overlaps the tests that run first. Both stop when the session ends;
their logs are under pytest's temporary directory (:class:`MarquezServer` says where PostgreSQL's data goes).
Without the component the tests skip with one line (fail under ``CI=true``, :func:`tests.support.engines.require`).
"""
from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Iterable, Iterator

import pytest

from tests.support.engines import INTEROP, _provision_error, require
from tests.support.lineage_server import free_port
from tests.support.processes import stop_process_group

MARQUEZ = INTEROP / "marquez"
MARQUEZ_JAR = MARQUEZ / "marquez-api-0.51.1.jar"
#: Seconds Marquez may take to answer (about 50 on 2 busy cores, most of it Flyway's migrations).
START_TIMEOUT_S = 240.0
_JAVA_OPTIONS = ["-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true"]


def _pg_bin() -> Path | None:
    """Debian's PostgreSQL server programs (``initdb`` and ``pg_ctl`` are not on PATH there)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def missing_marquez() -> str | None:
    """Why Marquez cannot run here (one line), or None."""
    if not shutil.which("java"):
        return "no java on PATH"
    if not MARQUEZ_JAR.exists() or not any((MARQUEZ / "lib").glob("*.jar")):
        return f"no Marquez jars in {MARQUEZ} (make provision){_provision_error('marquez')}"
    if _pg_bin() is None:
        return "Debian's postgresql is not installed (make provision)"
    if os.geteuid() == 0 and not shutil.which("runuser"):
        return "running as root without runuser: PostgreSQL refuses to run as root"
    return None


class MarquezServer:
    """One PostgreSQL and one Marquez on free loopback ports, with their data and logs in ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.pg_port, self.port, self.admin_port = free_port(), free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # As root, PostgreSQL runs as the postgres user, which cannot enter pytest's folders (pytest keeps
        # /tmp/pytest-of-<user> at 0700 and sets it back at every session's start): its data then lives in a folder
        # of its own in the system's temporary folder, removed at the end.
        self._pg_data = Path(tempfile.mkdtemp(prefix="marquez-pg-")) if os.geteuid() == 0 else root / "pgdata"
        self._java: subprocess.Popen[bytes] | None = None
        self.started_in_s: float | None = None

    def _as_postgres(self, *command: str) -> list[str]:
        """initdb and pg_ctl refuse to run as root (CI runs as root): run them as the postgres user there."""
        return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else list(command)

    def start(self) -> None:
        began = time.monotonic()
        self.root.mkdir(parents=True, exist_ok=True)
        self._pg_data.mkdir(exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(self._pg_data, "postgres", "postgres")
        pg = _pg_bin()
        log = open(self.root / "postgres.log", "ab")  # noqa: SIM115 - kept for the server's life
        subprocess.run(self._as_postgres(str(pg / "initdb"), "-D", str(self._pg_data), "-A", "trust", "-U",
                                         "postgres"), stdout=log, stderr=log, check=True, timeout=120)
        subprocess.run(self._as_postgres(
            str(pg / "pg_ctl"), "start", "-D", str(self._pg_data), "-w", "-t", "60", "-l",
            str(self._pg_data / "server.log"),
            "-o", f"-p {self.pg_port} -c listen_addresses=127.0.0.1 -k {self._pg_data} -c fsync=off"),
            stdout=log, stderr=log, check=True, timeout=90)
        for sql in ("CREATE USER marquez WITH PASSWORD 'marquez'", "CREATE DATABASE marquez OWNER marquez"):
            subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(self.pg_port), "-U", "postgres", "-qc", sql],
                           stdout=log, stderr=log, check=True, timeout=60)
        env = {**os.environ, "POSTGRES_PORT": str(self.pg_port), "MARQUEZ_PORT": str(self.port),
               "MARQUEZ_ADMIN_PORT": str(self.admin_port), "LOG_LEVEL": "WARN"}
        with open(self.root / "marquez.log", "ab") as out:
            self._java = subprocess.Popen(
                ["java", *_JAVA_OPTIONS, "-cp", f"{MARQUEZ_JAR}:{MARQUEZ / 'lib'}/*", "marquez.MarquezApp", "server",
                 str(MARQUEZ / "marquez.yml")], cwd=MARQUEZ, env=env, stdout=out, stderr=out, start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._java.poll() is not None:
                raise RuntimeError(f"Marquez exited ({self._java.returncode}); see {self.root / 'marquez.log'}")
            try:
                self.get("/api/v1/namespaces")
                self.started_in_s = time.monotonic() - began
                return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(f"Marquez did not answer within {START_TIMEOUT_S:.0f} s; see {self.root / 'marquez.log'}")

    def stop(self) -> None:
        java, self._java = self._java, None
        if java is not None:
            stop_process_group(java, timeout=30)
        if (self._pg_data / "postmaster.pid").exists():
            subprocess.run(self._as_postgres(str(_pg_bin() / "pg_ctl"), "-D", str(self._pg_data), "-m", "fast",
                                             "-w", "stop"), capture_output=True, timeout=60)
        if os.geteuid() == 0:
            shutil.rmtree(self._pg_data, ignore_errors=True)

    # -- Marquez's REST API ------------------------------------------------------------------------------------------

    def post(self, events: Iterable[dict[str, Any] | str]) -> None:
        """POST each event to ``/api/v1/lineage`` in order (Marquez answers 201 for an event it stored)."""
        for event in events:
            body = event if isinstance(event, str) else json.dumps(event)
            request = urllib.request.Request(f"{self.url}/api/v1/lineage", data=body.encode(), method="POST",
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=60) as answer:
                assert answer.status == 201, answer.status

    def get(self, path: str, **params: Any) -> Any:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        with urllib.request.urlopen(f"{self.url}{path}{query}", timeout=60) as answer:
            return json.load(answer)

    def dataset(self, namespace: str, name: str) -> dict[str, Any]:
        return self.get(f"/api/v1/namespaces/{_q(namespace)}/datasets/{_q(name)}")

    def versions(self, namespace: str, name: str) -> list[dict[str, Any]]:
        """Every version of the dataset, newest first."""
        return self.get(f"/api/v1/namespaces/{_q(namespace)}/datasets/{_q(name)}/versions", limit=100)["versions"]

    def runs(self, namespace: str, job: str) -> list[dict[str, Any]]:
        """The job's runs, newest first."""
        return self.get(f"/api/v1/namespaces/{_q(namespace)}/jobs/{_q(job)}/runs", limit=100)["runs"]

    def jobs(self, namespace: str) -> list[dict[str, Any]]:
        return self.get(f"/api/v1/namespaces/{_q(namespace)}/jobs", limit=1000)["jobs"]

    def job_of_run(self, run_id: str) -> str:
        """The node id of a run's job as Marquez names it: a run with a ``parent`` facet is filed under
        ``<parent job>.<job>``."""
        job = self.get(f"/api/v1/jobs/runs/{_q(run_id)}")["jobVersion"]
        return job_node(job["namespace"], job["name"])

    def lineage(self, node_id: str, depth: int = 2) -> dict[str, dict[str, Any]]:
        """``/api/v1/lineage`` around a node (``dataset:<ns>:<name>`` or ``job:<ns>:<name>``), by node id."""
        graph = self.get("/api/v1/lineage", nodeId=node_id, depth=depth)["graph"]
        return {node["id"]: node for node in graph}


def _q(part: str) -> str:
    return urllib.parse.quote(part, safe="")


def dataset_node(namespace: str, name: str) -> str:
    return f"dataset:{namespace}:{name}"


def job_node(namespace: str, name: str) -> str:
    return f"job:{namespace}:{name}"


def edges(graph: dict[str, dict[str, Any]]) -> set[tuple[str, str]]:
    """Every (origin, destination) edge of a lineage graph."""
    return {(edge["origin"], edge["destination"]) for node in graph.values() for edge in node["outEdges"]}


# -- the session's server, started in the background -----------------------------------------------------------------

class _Background:
    """The session's Marquez, started on a thread; ``get`` waits for it (and raises what its start raised)."""

    def __init__(self, root: Path) -> None:
        self.server = MarquezServer(root)
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._start, name="marquez-start", daemon=True)
        self._thread.start()

    def _start(self) -> None:
        try:
            self.server.start()
        except BaseException as exc:  # noqa: BLE001 - reported by the fixture, on the test's thread
            self.error = exc

    def get(self) -> MarquezServer:
        self._thread.join()
        if self.error is not None:
            raise RuntimeError(f"Marquez did not start: {self.error}") from self.error
        return self.server

    def stop(self) -> None:
        self._thread.join()
        self.server.stop()


_SESSION: dict[str, _Background] = {}


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Start Marquez as soon as the session is known to need it, so its start overlaps the tests before."""
    if any("marquez" in getattr(item, "fixturenames", ()) for item in items) and missing_marquez() is None:
        _SESSION["server"] = _Background(config._tmp_path_factory.mktemp("marquez"))  # the tmp_path_factory


def pytest_sessionfinish(session: pytest.Session) -> None:
    background = _SESSION.pop("server", None)
    if background is not None:
        background.stop()


@pytest.fixture(scope="session")
def marquez() -> Iterator[MarquezServer]:
    """The session's Marquez (started in the background at collection, stopped when the session ends)."""
    require("marquez")
    background = _SESSION.get("server")
    if background is None:  # collected without the hook's knowledge (a plugin reordered items): start it now
        pytest.fail("Marquez was not started at collection", pytrace=False)
    yield background.get()
