"""Built-in reporters end to end: rest against a real local HTTP server, jsonl and logging configured only
through catalog properties with ``install()`` + ``load_catalog``, and graceful registry failures."""

from __future__ import annotations

import json
import logging

import pytest
from tests.support.lineage_server import Answer, LineageServer
from tests.support import scan_reporters as h
from tests.support.scan_reporters import catalog, instrumented, memory, no_install_leak  # noqa: F401 - pytest fixtures

import scan_reporters
from scan_reporters.reporters.base import CompositeMetricsReporter, load_reporters, reporter_options
from scan_reporters.reporters.jsonl import JsonlMetricsReporter
from scan_reporters.reporters.memory import InMemoryMetricsReporter
from scan_reporters.reporters.rest import RestMetricsReporter
from scan_reporters.reports import CommitReport, ScanReport, from_rest_request


@pytest.fixture
def server():
    """An Iceberg REST endpoint: ``GET /v1/config`` for RestCatalog, and every POST recorded; answers 204 (or
    ``server.status``)."""
    srv = LineageServer(get_body={"defaults": {}, "overrides": {"prefix": "pfx"}})
    srv.status = 204
    srv.script = lambda _n, _body: Answer(srv.status)
    yield srv
    srv.stop()


def posts(server: LineageServer) -> list[tuple[str, dict, dict]]:
    return [(r.path, r.headers, r.json()) for r in server.requests]


def test_rest_reporter_posts_report_metrics_requests(instrumented, memory, server):
    url = server.url
    rest = RestMetricsReporter()
    rest.initialize(reporter_options({"metrics-reporter.rest.url": url, "metrics-reporter.rest.token": "s3cr3t"}, "rest"))
    scan_reporters.instrument(instrumented, CompositeMetricsReporter([rest, memory]))
    table = h.simple_table(instrumented, "db.rest", batches=1)
    table.scan(row_filter="id > 3").to_arrow()
    rest.flush()
    assert [path for path, _, _ in posts(server)] == ["/v1/namespaces/db/tables/rest/metrics"] * 2
    (_, headers, commit_body), (_, _, scan_body) = posts(server)
    assert headers["Content-Type"] == "application/json" and headers["Authorization"] == "Bearer s3cr3t"
    assert commit_body["report-type"] == "commit-report" and scan_body["report-type"] == "scan-report"
    assert from_rest_request(commit_body) == memory.commit_reports[0]
    assert from_rest_request(scan_body) == memory.scan_reports[0]


def test_rest_reporter_logs_a_failing_server_and_never_raises(server, caplog):
    server.status = 500
    rest = RestMetricsReporter(url=f"{server.url}/", prefix="warehouse")
    report = CommitReport.from_json({"table-name": "c.ns.tbl", "snapshot-id": 1, "sequence-number": 1, "operation": "append", "metrics": {}})
    with caplog.at_level(logging.ERROR, logger="scan_reporters"):
        rest.report(report)
        rest.flush()
        unreachable = RestMetricsReporter(url="http://127.0.0.1:9", timeout=0.5)
        unreachable.report(report)
        unreachable.close()
    # not bound to a catalog: every part but the last is taken as the namespace
    assert posts(server)[0][0] == "/v1/warehouse/namespaces/c%1Fns/tables/tbl/metrics"
    assert "HTTP 500" in caplog.text and "Failed to send metrics report" in caplog.text
    rest.close()


def test_rest_reporter_reuses_a_rest_catalogs_uri_prefix_and_session(server):
    from pyiceberg.catalog.rest import RestCatalog

    catalog = RestCatalog("r", uri=server.url, token="cat-token")
    rest = RestMetricsReporter()
    rest.bind_catalog(catalog)
    rest.report(ScanReport.from_json({
        "table-name": "r.a.b.tbl", "snapshot-id": 1, "filter": True, "schema-id": 0,
        "projected-field-ids": [], "projected-field-names": [], "metrics": {},
    }))
    rest.close()
    ((path, headers, body),) = posts(server)
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


def test_install_instruments_catalogs_however_they_are_built(tmp_path):
    """Every catalog passes through PyIceberg's ``Catalog`` constructor: built directly, imported before
    ``install()``, or of a class defined after it. Each is instrumented once, when its whole constructor is done."""
    from pyiceberg.catalog.sql import SqlCatalog

    out = tmp_path / "metrics.jsonl"
    props = {"uri": f"sqlite:///{tmp_path}/c.db", "warehouse": f"file://{tmp_path}/wh", "metrics-reporter-impl": "jsonl"}
    scan_reporters.install()

    class Configured(SqlCatalog):
        def __init__(self, name: str, **properties: str) -> None:
            super().__init__(name, **properties)
            self.properties = {**self.properties, "metrics-reporter.jsonl.path": str(out)}  # after super().__init__

    direct = SqlCatalog("x", **props, **{"metrics-reporter.jsonl.path": str(out)})
    direct.create_namespace("db")
    h.simple_table(direct, "db.direct", batches=1)
    late = Configured("y", **props)
    late.create_namespace("db")
    h.simple_table(late, "db.late", batches=2)
    assert scan_reporters.is_instrumented(direct) and scan_reporters.is_instrumented(late)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["table-name"] for line in lines] == ["x.db.direct", "y.db.late", "y.db.late"]

    scan_reporters.uninstall()
    assert not scan_reporters.is_instrumented(direct) and not scan_reporters.is_instrumented(late)
    assert not hasattr(SqlCatalog.__init__, "__wrapped__")
    assert not scan_reporters.is_instrumented(SqlCatalog("z", **props))


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
