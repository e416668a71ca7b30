"""A scan filter's literals are data (``email == 'alice@example.com'``): the sanitised filter in
``icebergScanReport`` facets and in scan_reporters' own outputs (jsonl, logging) never carries them."""
from __future__ import annotations

import json
import logging

from openlineage.client import OpenLineageClient
from openlineage.client.transport.file import FileConfig, FileTransport
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import EqualTo, In
from tests.support.security import EMAIL_FRAGMENTS, leaks, personal_rows

from iceberg_lineage.delivery.emitter import EMITTERS
from iceberg_lineage.hook.reporter import observe

FILTERS = (
    "email == 'alice@example.com'",
    In("email", ["alice@example.com", "bob@example.org"]),
    EqualTo("email", "bob@example.org"),
)


def test_scan_filter_literals_never_leave(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    EMITTERS.shutdown()
    metrics_file = tmp_path / "metrics.jsonl"
    events_file = tmp_path / "events.jsonl"
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    catalog = SqlCatalog("scans", **{
        "uri": f"sqlite:///{tmp_path}/catalog.db", "warehouse": f"file://{warehouse}",
        "metrics-reporter-impl": "jsonl,logging", "metrics-reporter.jsonl.path": str(metrics_file)})
    catalog.create_namespace("db")
    client = OpenLineageClient(transport=FileTransport(FileConfig(log_file_path=str(events_file), append=True)))
    observe(catalog, client=client)
    table = catalog.create_table("db.people", schema=personal_rows().schema)
    table.append(personal_rows(0))
    for row_filter in FILTERS:
        assert len(table.scan(row_filter=row_filter).plan_files()) == 1
    assert EMITTERS.flush_all(30)
    EMITTERS.shutdown()

    reports = [json.loads(line) for line in metrics_file.read_text().splitlines()]
    scan_reports = [r for r in reports if r["report-type"] == "scan-report"]
    assert len(scan_reports) == len(FILTERS)
    assert all("email" in json.dumps(r["filter"]) for r in scan_reports)  # the column stays, its literal goes
    scan_facets = [i["inputFacets"]["icebergScanReport"]
                   for e in map(json.loads, events_file.read_text().splitlines()) if e["eventType"] != "START"
                   for i in e.get("inputs") or []]  # a scan run's START names its input alone
    assert len(scan_facets) == len(FILTERS)
    assert all('"email"' in f["filterDescription"] and "(hash-" in f["filterDescription"] for f in scan_facets)
    assert any("Received metrics report" in r.getMessage() for r in caplog.records)
    found = {name: leaks(text, EMAIL_FRAGMENTS) for name, text in (
        ("jsonl reporter", metrics_file.read_text()), ("events", events_file.read_text()), ("logs", caplog.text))}
    assert found == {"jsonl reporter": [], "events": [], "logs": []}
