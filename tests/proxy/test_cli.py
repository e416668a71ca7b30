"""``iceberg-lineage proxy`` at start: an upstream URL with user information is refused with exit 2 and one line
that does not print the secret (aiohttp would fail every request carrying an engine's ``Authorization``)."""
from __future__ import annotations

import subprocess
import sys

from tests.support.proxy import proxy_env


def test_credentials_in_the_upstream_url_are_refused_at_start_without_printing_them(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "iceberg_lineage.cli", "proxy", "--upstream",
         "http://lake-user:S3cr3t-Passw0rd@127.0.0.1:9/catalog", "--listen", "127.0.0.1:0"],
        env=proxy_env(tmp_path, None), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert len(lines) == 1
    assert "S3cr3t-Passw0rd" not in lines[0] and "lake-user" not in lines[0]
    assert "--upstream must not carry user information (http://127.0.0.1:9/catalog without it)" in lines[0]


def test_an_upstream_that_is_not_http_is_refused_at_start(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "iceberg_lineage.cli", "proxy", "--upstream", "ftp://127.0.0.1:9/",
         "--listen", "127.0.0.1:0"], env=proxy_env(tmp_path, None), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert (done.stdout + done.stderr).strip().splitlines() == [
        "iceberg-lineage: error: --upstream must be an http:// or https:// URL"]
