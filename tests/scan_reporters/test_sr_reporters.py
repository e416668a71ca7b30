"""Built-in reporters end to end: rest against a real local HTTP server, jsonl and logging configured only
through catalog properties with ``install()`` + ``load_catalog``, and graceful registry failures."""

from __future__ import annotations

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import sr_helpers as h
from sr_helpers import catalog, instrumented, memory, no_install_leak  # noqa: F401 - pytest fixtures

import scan_reporters
from scan_reporters.reporters.base import CompositeMetricsReporter, load_reporters, reporter_options
from scan_reporters.reporters.jsonl import JsonlMetricsReporter
from scan_reporters.reporters.memory import InMemoryMetricsReporter
from scan_reporters.reporters.rest import RestMetricsReporter
from scan_reporters.reports import CommitReport, ScanReport, from_rest_request


class Recorder(BaseHTTPRequestHandler):
    """Serves ``GET /v1/config`` (for RestCatalog) and records every POST; answers with ``server.status``."""

    def do_GET(self) -> None:  # noqa: N802
        body = json.dumps({"defaults": {}, "overrides": {"prefix": "pfx"}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers["Content-Length"])
        self.server.requests.append((self.path, dict(self.headers), json.loads(self.rfile.read(length))))  # type: ignore[attr-defined]
        self.send_response(self.server.status)  # type: ignore[attr-defined]
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    srv.requests = []  # type: ignore[attr-defined]
    srv.status = 204  # type: ignore[attr-defined]
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_rest_reporter_posts_report_metrics_requests(instrumented, memory, server):
    url = f"http://127.0.0.1:{server.server_port}"
    rest = RestMetricsReporter()
    rest.initialize(reporter_options({"metrics-reporter.rest.url": url, "metrics-reporter.rest.token": "s3cr3t"}, "rest"))
    scan_reporters.instrument(instrumented, CompositeMetricsReporter([rest, memory]))
    table = h.simple_table(instrumented, "db.rest", batches=1)
    table.scan(row_filter="id > 3").to_arrow()
    rest.flush()
    assert [path for path, _, _ in server.requests] == ["/v1/namespaces/db/tables/rest/metrics"] * 2
    (_, headers, commit_body), (_, _, scan_body) = server.requests
    assert headers["Content-Type"] == "application/json" and headers["Authorization"] == "Bearer s3cr3t"
    assert commit_body["report-type"] == "commit-report" and scan_body["report-type"] == "scan-report"
    assert from_rest_request(commit_body) == memory.commit_reports[0]
    assert from_rest_request(scan_body) == memory.scan_reports[0]


def test_rest_reporter_logs_a_failing_server_and_never_raises(server, caplog):
    server.status = 500
    rest = RestMetricsReporter(url=f"http://127.0.0.1:{server.server_port}/", prefix="warehouse")
    report = CommitReport.from_json({"table-name": "c.ns.tbl", "snapshot-id": 1, "sequence-number": 1, "operation": "append", "metrics": {}})
    with caplog.at_level(logging.ERROR, logger="scan_reporters"):
        rest.report(report)
        rest.flush()
        unreachable = RestMetricsReporter(url="http://127.0.0.1:9", timeout=0.5)
        unreachable.report(report)
        unreachable.close()
    # not bound to a catalog: every part but the last is taken as the namespace
    assert server.requests[0][0] == "/v1/warehouse/namespaces/c%1Fns/tables/tbl/metrics"
    assert "HTTP 500" in caplog.text and "Failed to send metrics report" in caplog.text
    rest.close()


def test_rest_reporter_reuses_a_rest_catalogs_uri_prefix_and_session(server):
    from pyiceberg.catalog.rest import RestCatalog

    catalog = RestCatalog("r", uri=f"http://127.0.0.1:{server.server_port}", token="cat-token")
    rest = RestMetricsReporter()
    rest.bind_catalog(catalog)
    rest.report(ScanReport.from_json({
        "table-name": "r.a.b.tbl", "snapshot-id": 1, "filter": True, "schema-id": 0,
        "projected-field-ids": [], "projected-field-names": [], "metrics": {},
    }))
    rest.close()
    ((path, headers, body),) = server.requests
    assert path == "/v1/pfx/namespaces/a%1Fb/tables/tbl/metrics"
    assert headers["Authorization"] == "Bearer cat-token"
    assert body["report-type"] == "scan-report"


def test_jsonl_and_logging_configured_by_catalog_properties(tmp_path, caplog):
    import pyiceberg.catalog

    out = tmp_path / "reports" / "metrics.jsonl"
    scan_reporters.install()
    scan_reporters.install()  # idempotent
    with caplog.at_level(logging.INFO, logger="scan_reporters.metrics"):
        catalog = pyiceberg.catalog.load_catalog(
            "x",
            type="sql",
            uri=f"sqlite:///{tmp_path}/c.db",
            warehouse=f"file://{tmp_path}/wh",
            **{"metrics-reporter-impl": "jsonl, logging", "metrics-reporter.jsonl.path": str(out)},
        )
        catalog.create_namespace("db")
        table = h.simple_table(catalog, "db.j", batches=2)
        assert table.scan(row_filter="cat == 'a'").to_arrow().num_rows == 10
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["report-type"] for line in lines] == ["commit-report", "commit-report", "scan-report"]
    assert [line["snapshot-id"] for line in lines[:2]] == [s.snapshot_id for s in table.snapshots()]
    assert lines[2]["metrics"]["result-data-files"]["value"] == 1
    logged = [r.getMessage() for r in caplog.records if r.name == "scan_reporters.metrics"]
    assert len(logged) == 3 and all(m.startswith("Received metrics report: {") for m in logged)
    assert json.loads(logged[2].split(": ", 1)[1]) == lines[2]

    scan_reporters.uninstall()
    assert not scan_reporters.is_instrumented(catalog)
    assert not hasattr(pyiceberg.catalog.load_catalog, "__wrapped__")
    plain = pyiceberg.catalog.load_catalog("y", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}/wh")
    assert not scan_reporters.is_instrumented(plain)


def test_unknown_reporters_fail_gracefully(caplog):
    with caplog.at_level(logging.ERROR, logger="scan_reporters"):
        composite = load_reporters({"metrics-reporter-impl": "memory, openlineage, nope, no.such.Module"})
    assert isinstance(composite.reporters[0], InMemoryMetricsReporter)
    assert "Could not load metrics reporter 'nope'" in caplog.text
    assert "Could not load metrics reporter 'no.such.Module'" in caplog.text
    # 'openlineage' lives in iceberg_lineage and may or may not be importable here: either way nothing raised


def test_default_reporter_is_logging_and_dotted_paths_get_their_options(tmp_path):
    (default,) = load_reporters({}).reporters
    assert type(default).__name__ == "LoggingMetricsReporter"
    dotted = "scan_reporters.reporters.jsonl.JsonlMetricsReporter"
    (colon,) = load_reporters({"metrics-reporter-impl": "scan_reporters.reporters.memory:InMemoryMetricsReporter"}).reporters
    assert isinstance(colon, InMemoryMetricsReporter)
    (jsonl,) = load_reporters({"metrics-reporter-impl": dotted, f"metrics-reporter.{dotted}.path": str(tmp_path / "o.jsonl")}).reporters
    assert isinstance(jsonl, JsonlMetricsReporter) and jsonl.path == tmp_path / "o.jsonl"


def test_composite_deduplicates_and_isolates():
    memory = InMemoryMetricsReporter()
    inner = CompositeMetricsReporter([memory])
    composite = CompositeMetricsReporter([inner, memory])
    assert composite.reporters == (memory,)
    assert composite.before_commit(None, (1, 2)) == (1, 2)  # type: ignore[arg-type]
