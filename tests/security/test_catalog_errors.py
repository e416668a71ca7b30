"""A catalog's error body is cleaned and cut before any output quotes it; ``--debug`` tracebacks are cleaned like
every other output; the ``catalog`` facet copies only allow-listed catalog properties."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner
from tests.support.security import dead_port, files_under, leaks, openlineage_config, write_pyiceberg_config

from iceberg_lineage.cli import main
from iceberg_lineage.read.catalogs import MESSAGE_LIMIT

REST_TOKEN = "PLANTED-REST-TOKEN-1"
OL_PASSWORD = "PLANTED-OL-PASS-2"
SIGNED = "https://bucket.s3.amazonaws.com/k?X-Amz-Credential=AKIAPLANTED3&X-Amz-Signature=PLANTEDSIG4&x=1"
#: What the catalog answers: its configuration quoted back, presigned URLs, the lineage URL, then 10 KB of text.
BODY = (f"denied: s3.secret-access-key=PLANTED-SECRET-5 token {REST_TOKEN} for {SIGNED} "
        f"(lineage http://ol-user:{OL_PASSWORD}@lineage.example) " + "padding " * 1300)


@pytest.fixture
def unauthorized_catalog(monkeypatch):
    """A REST catalog server answering every request 401 with :data:`BODY`, configured with a token."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's naming
            body = BODY.encode()
            self.send_response(401)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_GET  # noqa: N815

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("PYICEBERG_CATALOG__REST__URI", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv("PYICEBERG_CATALOG__REST__TOKEN", REST_TOKEN)
    monkeypatch.setenv("OPENLINEAGE_URL", f"http://ol-user:{OL_PASSWORD}@127.0.0.1:{dead_port()}")
    yield
    server.shutdown()
    server.server_close()


def test_catalog_error_body_is_cleaned_and_cut(unauthorized_catalog):
    result = CliRunner().invoke(main, ["stats", "--catalog", "rest", "--table", "db.t"])

    assert result.exit_code == 1
    [line] = result.stderr.splitlines()
    prefix = "iceberg-lineage: error: table db.t: cannot load catalog 'rest': UnauthorizedError: "
    assert line.startswith(prefix) and line.endswith("...")
    assert len(line) == len(prefix) - len("UnauthorizedError: ") + MESSAGE_LIMIT
    assert "s3.secret-access-key=***" in line and "X-Amz-Signature=***" in line
    assert leaks(line, ["PLANTED"]) == []


def test_scan_failure_reason_is_cleaned_and_cut(unauthorized_catalog, tmp_path):
    result = CliRunner().invoke(main, ["scan", "--catalog", "rest", "--state", str(tmp_path / "s.db"),
                                       "--dry-run", "--format", "json"])

    assert result.exit_code == 1
    [failure] = json.loads(result.stderr.splitlines()[-1])["failures"]
    assert failure["reason"].startswith("cannot list: cannot load catalog 'rest': UnauthorizedError: ")
    assert len(failure["reason"]) <= len("cannot list: cannot load catalog 'rest': ") + MESSAGE_LIMIT
    assert leaks(result.stderr, ["PLANTED"]) == []


def test_debug_traceback_is_cleaned(unauthorized_catalog):
    result = CliRunner().invoke(main, ["stats", "--debug", "--catalog", "rest", "--table", "db.t"])

    assert result.exit_code == 1
    assert result.stderr.startswith("Traceback (most recent call last):\n")
    assert "iceberg_lineage.errors.CatalogError: table db.t: cannot load catalog 'rest'" in result.stderr
    assert leaks(result.stderr, [REST_TOKEN, OL_PASSWORD, "PLANTEDSIG", "AKIAPLANTED", "PLANTED"]) == []


def test_debug_traceback_of_an_unexpected_error_is_cleaned(tmp_path, monkeypatch):
    """An error no handler expected: with --debug a cleaned traceback, then the one line; never Python's raw one."""
    monkeypatch.setenv("OPENLINEAGE_URL", f"http://ol-user:{OL_PASSWORD}@127.0.0.1:{dead_port()}")

    def broken(*_args, **_kwargs):
        raise RuntimeError(f"boom near {SIGNED} with {OL_PASSWORD}\x1b]0;pwned\x07")

    monkeypatch.setattr("iceberg_lineage.cli.stats.table_history", broken)
    metadata = tmp_path / "m.metadata.json"
    metadata.write_text(json.dumps(_minimal_metadata(tmp_path)))
    result = CliRunner().invoke(main, ["stats", "--debug", "--metadata", str(metadata)])

    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    expected = ("RuntimeError: boom near https://bucket.s3.amazonaws.com/k?X-Amz-Credential=***&X-Amz-Signature=***"
                "&x=1 with ***\\x1b]0;pwned\\x07")
    assert lines[-2:] == [expected, f"iceberg-lineage: error: {expected}"]
    assert leaks(result.stderr, ["PLANTED"]) == []


def _minimal_metadata(tmp_path) -> dict:
    return {"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": str(tmp_path),
            "last-sequence-number": 0, "last-updated-ms": 1700000000000, "last-column-id": 1,
            "current-schema-id": 0, "schemas": [{"type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "id", "required": False, "type": "long"}]}],
            "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}], "last-partition-id": 999,
            "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}], "properties": {},
            "current-snapshot-id": -1, "snapshots": [], "snapshot-log": [], "metadata-log": []}


#: Catalog properties whose names the old deny-list let through, with values that are secrets.
HARMLESS_NAMED = {"x-tenant-header-value": "PLANTED-TENANT-6", "x-tenant-value": "PLANTED-TENANT-7",
                  "client.extra": "PLANTED-EXTRA-8"}


def test_catalog_facet_copies_only_allow_listed_properties(tmp_path, monkeypatch):
    from pyiceberg.catalog.sql import SqlCatalog
    from tests.support.scan import write_table

    (tmp_path / "warehouse").mkdir()
    catalog = SqlCatalog("test", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/warehouse",
                         **{"s3.region": "eu-west-1", **HARMLESS_NAMED})
    write_table(catalog, "db.t", 1)
    write_pyiceberg_config(tmp_path / "pyiceberg-home", catalog)
    monkeypatch.setenv("PYICEBERG_HOME", str(tmp_path / "pyiceberg-home"))
    transport = {"type": "http", "url": f"http://127.0.0.1:{dead_port()}", "retry": {"total": 0}}
    for key, value in openlineage_config(tmp_path, transport).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("ICEBERG_LINEAGE__SPOOL__PATH", str(tmp_path / "spool"))

    dry = CliRunner().invoke(main, ["scan", "--state", str(tmp_path / "s.db"), "--dry-run", "--no-progress"])
    spooled = CliRunner().invoke(main, ["scan", "--state", str(tmp_path / "s.db"), "--no-progress"])

    assert (dry.exit_code, spooled.exit_code) == (0, 3), spooled.output  # 3: the events wait in the spool
    [_, start, event, _] = [json.loads(line) for line in dry.stdout.splitlines()]  # within the scan's own run
    assert start["eventType"] == "START"
    assert event["outputs"][0]["facets"]["catalog"]["catalogProperties"] == {"s3.region": "eu-west-1", "type": "sql"}
    spool = b"".join(files_under(tmp_path / "spool").values())
    assert spool.count(b'"catalogProperties": {"s3.region": "eu-west-1", "type": "sql"}') == 1
    assert leaks(dry.stdout + dry.stderr + spooled.stderr, ["PLANTED"]) == []
    assert leaks(spool, ["PLANTED"]) == []
