"""Apache Iceberg's own REST catalog server (``RESTCatalogServer`` 1.11, the server of the apache/iceberg-rest-fixture
image) for the tests, from the jars ``make provision`` copies into ``.cache/interop/iceberg-rest/lib``: a JDBC
catalog in SQLite behind it, its warehouse on local files. Unlike SeaweedFS it sends an ``ETag`` with ``loadTable``
and answers ``If-None-Match`` with 304.

The session fixture ``iceberg_rest`` starts it once on a free port and stops it at the end. The server takes its
port from ``CATALOG_REST_PORT`` and has no host setting: Jetty listens on every interface of that port.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from tests.support.engines import INTEROP, _provision_error, require
from tests.support.lineage_server import free_port
from tests.support.processes import log_tail, stop_process_group, wait_started

ICEBERG_REST_LIB = INTEROP / "iceberg-rest" / "lib"
#: Seconds the server may take to answer after its start (about 2 here).
START_TIMEOUT_S = 60.0
_JAVA_OPTIONS = ["-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true"]


def missing_iceberg_rest() -> str | None:
    """Why the server cannot run here (one line), or None."""
    if not shutil.which("java"):
        return "no java on PATH"
    if not any(ICEBERG_REST_LIB.glob("iceberg-open-api-*-test-fixtures.jar")):
        return f"no Iceberg REST server jars in {ICEBERG_REST_LIB} (make provision){_provision_error('iceberg-rest')}"
    return None


@dataclass(frozen=True)
class IcebergRestServer:
    uri: str
    warehouse: Path

    def catalog(self, name: str = "rest"):
        """A PyIceberg ``RestCatalog`` on the server."""
        from pyiceberg.catalog.rest import RestCatalog

        return RestCatalog(name, uri=self.uri)


def _answers(uri: str) -> bool:
    try:
        with urllib.request.urlopen(f"{uri}/v1/config", timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="session")
def iceberg_rest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IcebergRestServer]:
    """The session's Iceberg REST server (started once, stopped at the end)."""
    require("iceberg-rest")
    root = tmp_path_factory.mktemp("iceberg-rest")
    port = free_port()
    env = {**os.environ, "CATALOG_REST_PORT": str(port), "CATALOG_WAREHOUSE": (root / "warehouse").as_uri(),
           "CATALOG_URI": f"jdbc:sqlite:file:{root / 'catalog.db'}"}
    log = root / "server.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(["java", *_JAVA_OPTIONS, "-cp", f"{ICEBERG_REST_LIB}/*",
                                    "org.apache.iceberg.rest.RESTCatalogServer"],
                                   stdout=out, stderr=out, env=env, start_new_session=True)
    uri = f"http://127.0.0.1:{port}"
    wait_started(process, lambda: _answers(uri), timeout=START_TIMEOUT_S, what="Iceberg's REST server",
                 output=log_tail(log, 3))
    try:
        yield IcebergRestServer(uri, root / "warehouse")
    finally:
        stop_process_group(process, timeout=30)
