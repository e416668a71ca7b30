"""Planted secrets and the check that none of them ever shows up in anything the tool produced."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml

#: Catalog properties holding secrets: every kind of name the redaction must recognise.
PLANTED: dict[str, str] = {
    "s3.secret-access-key": "PLANTED-SECRET-1",
    "s3.session-token": "PLANTED-TOKEN-2",
    "token": "PLANTED-TOKEN-3",
    "client.secret": "PLANTED-SECRET-4",
    "credential": "planted-client:PLANTED-CRED-5",
    "jdbc.password": "PLANTED-PASS-6",
    "s3.access-key-id": "PLANTED-KEYID-7",
    "header.Authorization": "Bearer PLANTED-BEARER-8",
}
#: A REST catalog URI with a password in its userinfo and a token in its query.
REST_URI = "https://planted-user:PLANTED-PASS-9@catalog.example.com/api?token=PLANTED-QTOKEN-10&realm=x"
#: The fragments no output may contain (the user name is no secret, its password is).
SECRETS: tuple[str, ...] = ("PLANTED-",)

#: A column holding personal data, with values that must never leave through column statistics.
PERSONAL = pa.schema([
    pa.field("id", pa.int64(), nullable=False),
    pa.field("email", pa.string()),
    pa.field("score", pa.float64()),
])
EMAILS = ["alice@example.com", "bob@example.org"]
#: What of :data:`EMAILS` may survive in an output (string bounds are truncated to a 16-character prefix).
EMAIL_FRAGMENTS = ("alice@", "bob@")

CLI = "from iceberg_lineage.cli import main; main()"


def personal_rows(start: int = 0) -> pa.Table:
    return pa.table({"id": [start, start + 1], "email": EMAILS, "score": [1.5, 2.5]}, schema=PERSONAL)


def planted_catalog(tmp_path: Path, name: str = "sec") -> Any:
    """A SqlCatalog (SQLite in tmp_path) configured with every planted secret; SqlCatalog keeps extra properties."""
    from pyiceberg.catalog.sql import SqlCatalog

    warehouse = tmp_path / "warehouse"
    warehouse.mkdir(exist_ok=True)
    catalog = SqlCatalog(name, **{"uri": f"sqlite:///{tmp_path}/catalog.db", "warehouse": f"file://{warehouse}",
                                  **PLANTED})
    catalog.create_namespace("db")
    return catalog


def write_pyiceberg_config(home: Path, catalog: Any) -> Path:
    """A ``.pyiceberg.yaml`` naming ``catalog`` with all its properties (planted secrets included)."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / ".pyiceberg.yaml"
    path.write_text(yaml.safe_dump({"catalog": {catalog.name: {"type": "sql", **catalog.properties}}}))
    return path


def dead_port() -> int:
    """A local port nothing listens on (a lineage server or catalog that is down)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def openlineage_config(directory: Path, transport: dict[str, Any]) -> dict[str, str]:
    """An ``openlineage.yml`` with this transport; returns the environment that selects it."""
    path = directory / "openlineage.yml"
    path.write_text(yaml.safe_dump({"transport": transport}))
    return {"OPENLINEAGE_CONFIG": str(path)}


def http_transport_with_secrets(port: int) -> dict[str, Any]:
    """An HTTP transport (no retries: the server is down) whose URL, API key and custom header carry secrets."""
    return {"type": "http", "url": f"http://planted-user:PLANTED-PASS-13@127.0.0.1:{port}", "timeout": 0.5,
            "retry": {"total": 0}, "auth": {"type": "api_key", "apiKey": "PLANTED-APIKEY-14"},
            "custom_headers": {"X-Lineage-Token": "PLANTED-HEADER-15"}}


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CLI, *args], env={**os.environ, **(env or {})},
                          capture_output=True, text=True, timeout=120, check=False)


def leaks(text: str | bytes, secrets: Iterable[str] = SECRETS) -> list[str]:
    """Where secrets occur in ``text``, with some context (bytes are searched raw and as UTF-16, SQLite's other
    text encoding)."""
    blobs = [text] if isinstance(text, str) else [text.decode("latin-1"), text.decode("utf-16-le", "replace")]
    return [blob[max(0, i - 60) : i + 40] for s in secrets for blob in blobs for i in _find_all(blob, s)]


def _find_all(text: str, fragment: str) -> list[int]:
    found, at = [], text.find(fragment)
    while at >= 0:
        found.append(at)
        at = text.find(fragment, at + 1)
    return found


def files_under(*roots: Path) -> dict[Path, bytes]:
    """Every file below ``roots`` (state and spool databases with their -wal/-journal files, event files)."""
    out: dict[Path, bytes] = {}
    for root in roots:
        paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        out.update({p: p.read_bytes() for p in paths})
    return out


def assert_no_leak(**outputs: str | bytes) -> None:
    found = {where: hits for where, text in outputs.items() if (hits := leaks(text))}
    assert not found, f"planted secrets leaked: {found}"


def assert_no_leak_in_files(*roots: Path) -> dict[Path, bytes]:
    files = files_under(*roots)
    assert files, f"nothing was written under {roots}"
    found = {str(p): hits for p, data in files.items() if (hits := leaks(data))}
    assert not found, f"planted secrets leaked into files: {found}"
    return files
