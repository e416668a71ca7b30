"""Sail for the tests: a Spark Connect server written in Rust (``pysail``), the one engine here whose merge-on-read
DELETE writes equality deletes.

``make provision`` installs it with its client (``pyspark-client`` 4) in a virtualenv of its own,
``.cache/interop/sail/venv``: that client is the same ``pyspark`` package as .venv's pyspark 3.5. So the tests talk
to Sail through that virtualenv's Python: :meth:`Sail.sql` runs a short client program there. One server per test
session (fixture ``sail``), on 127.0.0.1 with a free port, in a temporary folder, stopped at the session's end.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.support.engines import INTEROP, _provision_error, require
from tests.support.lineage_server import free_port
from tests.support.processes import log_tail, stop_process_group, wait_started

SAIL_VENV = INTEROP / "sail" / "venv"
START_TIMEOUT_S = 30.0
CLIENT_TIMEOUT_S = 120.0

#: Run in Sail's virtualenv: the statements (JSON on stdin) one by one, each answer's rows as JSON on stdout.
#: Timestamps are UTC: Sail maps TIMESTAMP to Iceberg ``timestamptz`` and accepts no other zone for it.
_CLIENT = """
import json, sys, warnings
warnings.simplefilter("ignore")
from pyspark.sql import SparkSession
spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
spark.conf.set("spark.sql.session.timeZone", "UTC")
for statement in json.load(sys.stdin):
    print(json.dumps([list(row) for row in spark.sql(statement).collect()], default=str), flush=True)
"""


@dataclass(frozen=True)
class Sail:
    """Where the session's Sail server listens."""

    url: str  # sc://127.0.0.1:PORT
    root: Path

    def sql(self, *statements: str) -> list[list[list]]:
        """Each statement's rows (values as JSON gives them), through Sail's own Spark Connect client."""
        proc = subprocess.run([str(SAIL_VENV / "bin" / "python"), str(self.root / "client.py"), self.url],
                              input=json.dumps(statements), capture_output=True, text=True,
                              timeout=CLIENT_TIMEOUT_S)
        if proc.returncode != 0:
            lines = [line for line in proc.stderr.splitlines() if line.strip()]
            raise AssertionError(f"Sail failed after {len(proc.stdout.splitlines())} statement(s): "
                                 f"{lines[-1] if lines else 'no output'}")
        return [json.loads(line) for line in proc.stdout.splitlines()]


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def start_sail(root: Path) -> tuple[subprocess.Popen, Sail]:
    """``sail spark server`` in ``root`` once its port accepts connections; its log is ``root/sail.log``."""
    port = free_port()
    (root / "client.py").write_text(_CLIENT)  # a file: under ``python -c`` pyspark-client looks for a SPARK_HOME
    log = open(root / "sail.log", "wb")
    process = subprocess.Popen([str(SAIL_VENV / "bin" / "sail"), "spark", "server", "--ip", "127.0.0.1",
                                "--port", str(port), "--directory", str(root)],
                               cwd=root, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                               env={**os.environ, "RUST_LOG": "warn"})
    log.close()
    wait_started(process, lambda: _listening(port), timeout=START_TIMEOUT_S, what="sail spark server",
                 output=log_tail(root / "sail.log"))
    return process, Sail(f"sc://127.0.0.1:{port}", root)


def missing_sail() -> str | None:
    if (SAIL_VENV / "bin" / "sail").exists():
        return None
    return f"no Sail in {SAIL_VENV} (make provision){_provision_error('sail')}"


@pytest.fixture(scope="session")
def sail(tmp_path_factory) -> Sail:
    """One Sail server for the whole run, stopped at its end."""
    require("sail")
    process, server = start_sail(tmp_path_factory.mktemp("sail"))
    try:
        yield server
    finally:
        stop_process_group(process)
