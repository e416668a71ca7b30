"""Wire JSON of the reports: Java key names and shapes, REST envelope, schema validation, round trips.

Schema validation uses the ``ReportMetricsRequest`` extract of the Iceberg REST OpenAPI copied next to this
file (offline, jsonschema + referencing). Upstream flaw: ``PrimitiveTypeValue`` is a ``oneOf`` whose options
overlap (an integer is also an int64 "long" and a "double"; a string matches string, decimal, binary ...), so
every predicate with a number or string literal -- sanitised ``(hash-...)`` tokens included -- fails strict
``oneOf`` validation. The literal-free part of each request is therefore validated strictly with the
``filter`` replaced by ``true``, the filter's structure is validated against the ``Predicate`` schema with
literals swapped for booleans (the one unambiguous primitive), and the literals are checked separately to be
sanitised tokens.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.support import scan_reporters as h
from tests.support.scan_reporters import catalog  # noqa: F401 - pytest fixture
import yaml
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from scan_reporters import commit_report_from_snapshot
from scan_reporters.commit_metrics import commit_metrics_from_summary, commit_report_from_values
from scan_reporters.reports import (
    COMMIT_METRICS,
    SCAN_METRICS,
    CommitReport,
    CounterResult,
    ScanMetricsResult,
    ScanReport,
    TimerResult,
    from_rest_request,
    kebab_to_camel,
    to_rest_request,
)
from scan_reporters.scan_metrics import plan_with_report

SPEC = yaml.safe_load((Path(__file__).parent / "iceberg-rest-metrics.yaml").read_text())
TOKEN = re.compile(r"\((hash-[0-9a-f]{8}|\d+-digit-(int|float)|date(-today|-\d+-days-(ago|from-now))?|time|timestamp(-about-now|-\d+-(hours|days)-(ago|from-now))?)\)")


def validator(name: str) -> Draft202012Validator:
    registry = Registry().with_resource("urn:rest", DRAFT202012.create_resource(SPEC))
    return Draft202012Validator({"$ref": f"urn:rest#/components/schemas/{name}"}, registry=registry)


def literals(expr: Any) -> list[str]:
    if not isinstance(expr, dict):
        return []
    found = [expr["value"]] if "value" in expr else list(expr.get("values", []))
    return found + [lit for key in ("left", "right", "child") for lit in literals(expr.get(key))]


def without_literals(expr: Any) -> Any:
    if not isinstance(expr, dict):
        return expr
    out = {k: without_literals(v) for k, v in expr.items()}
    if "value" in out:
        out["value"] = True
    if "values" in out:
        out["values"] = [True for _ in out["values"]]
    return out


def assert_valid_request(body: dict[str, Any]) -> None:
    strict = copy.deepcopy(body)
    if "filter" in strict:
        validator("Predicate").validate(without_literals(strict["filter"]))
        assert all(TOKEN.fullmatch(lit) for lit in literals(strict["filter"])), literals(strict["filter"])
        strict["filter"] = True
    validator("ReportMetricsRequest").validate(strict)


@pytest.fixture
def scan_report_json(catalog) -> dict[str, Any]:
    table = h.simple_table(catalog, "db.w", batches=3)
    scan = table.scan(row_filter="cat in ('a', 'b') and not (id < 5 or v >= 1.5) and ts >= '2024-01-01T00:00:00'")
    return to_rest_request(plan_with_report(scan, "t.db.w", {"engine-name": "pyiceberg"}).report)


def test_scan_report_wire_form_is_java_shaped_and_valid(scan_report_json):
    body = scan_report_json
    assert body["report-type"] == "scan-report"
    assert list(body)[:8] == ["report-type", "table-name", "snapshot-id", "filter", "schema-id", "projected-field-ids", "projected-field-names", "metrics"]
    assert set(body["metrics"]) == {spec.name for spec in SCAN_METRICS}
    assert body["metrics"]["total-planning-duration"]["time-unit"] == "nanoseconds"
    assert body["metrics"]["total-file-size-in-bytes"]["unit"] == "bytes"
    assert body["metrics"]["result-data-files"] == {"unit": "count", "value": 1}  # cat b fails v < 1.5 on bounds
    assert body["metadata"] == {"engine-name": "pyiceberg"}
    assert "2024" not in json.dumps(body["filter"]) and "'a'" not in json.dumps(body["filter"])
    assert_valid_request(body)


def test_scan_report_round_trip(scan_report_json):
    report = from_rest_request(scan_report_json)
    assert isinstance(report, ScanReport)
    assert to_rest_request(report) == scan_report_json
    assert ScanReport.from_json(json.dumps(report.to_json())) == report


def test_null_metrics_and_empty_metadata_are_left_out():
    report = ScanReport("c.db.t", 1, True, 0, (1,), ("id",), ScanMetricsResult(result_data_files=CounterResult(3)))
    body = report.to_json()
    assert body["metrics"] == {"result-data-files": {"unit": "count", "value": 3}}
    assert "metadata" not in body
    assert_valid_request(to_rest_request(report))


def test_commit_report_mapping_from_summary_keys():
    summary = {
        "operation": "overwrite",
        "added-data-files": "2",
        "deleted-data-files": "1",
        "added-files-size": "100",
        "removed-files-size": "50",
        "total-files-size": "150",
        "added-position-delete-files": "3",
        "added-position-deletes": "7",
        "deleted-records": "10",
        "entries-processed": "4",
        "added-dvs": "1",
        "manifests-created": "1",
        "manifests-replaced": "2",
        "manifests-kept": "5",
        "total-records": "not-a-number",
        "changed-partition-count": "1",
    }
    report = commit_report_from_values("c.db.t", 9, 3, "overwrite", summary, duration_ns=1234, attempts=2)
    metrics = report.to_json()["metrics"]
    assert metrics == {
        "total-duration": {"count": 1, "time-unit": "nanoseconds", "total-duration": 1234},
        "attempts": {"unit": "count", "value": 2},
        "added-data-files": {"unit": "count", "value": 2},
        "removed-data-files": {"unit": "count", "value": 1},
        "added-positional-delete-files": {"unit": "count", "value": 3},
        "added-dvs": {"unit": "count", "value": 1},
        "removed-records": {"unit": "count", "value": 10},
        "added-files-size-bytes": {"unit": "bytes", "value": 100},
        "removed-files-size-bytes": {"unit": "bytes", "value": 50},
        "total-files-size-bytes": {"unit": "bytes", "value": 150},
        "added-positional-deletes": {"unit": "count", "value": 7},
        "manifests-created": {"unit": "count", "value": 1},
        "manifests-replaced": {"unit": "count", "value": 2},
        "manifests-kept": {"unit": "count", "value": 5},
        "manifest-entries-processed": {"unit": "count", "value": 4},
    }
    body = to_rest_request(report)
    assert body["report-type"] == "commit-report" and body["sequence-number"] == 3
    assert_valid_request(body)
    assert from_rest_request(json.dumps(body)) == report


def test_historical_snapshot_has_no_duration_or_attempts(catalog):
    table = h.simple_table(catalog, "db.hist", batches=2)
    table.delete("id == 3")
    reports = [commit_report_from_snapshot("t.db.hist", s) for s in table.snapshots()]
    assert [r.operation for r in reports] == ["append", "append", "overwrite"]
    for report, snapshot in zip(reports, table.snapshots()):
        assert report.commit_metrics.total_duration is None and report.commit_metrics.attempts is None
        assert report.sequence_number == snapshot.sequence_number
        values = report.commit_metrics.values()
        assert values["total-records"] == int(snapshot.summary["total-records"])
        assert values["total-files-size-bytes"] == int(snapshot.summary["total-files-size"])
        assert ("removed-records" in values) == ("deleted-records" in snapshot.summary.additional_properties)
        assert_valid_request(to_rest_request(report))
    assert reports[2].commit_metrics.values()["removed-records"] == 1 + 9  # the rewritten file held 10 rows


def test_unknown_report_type_parses_to_none():
    assert from_rest_request({"report-type": "cache-report"}) is None


def test_mapping_table_is_the_single_source_of_names():
    assert kebab_to_camel("manifest-entries-processed") == "manifestEntriesProcessed"
    assert [s.name for s in COMMIT_METRICS if s.summary_key and s.summary_key != s.name] == [
        "removed-data-files",
        "added-positional-delete-files",
        "removed-positional-delete-files",
        "removed-records",
        "added-files-size-bytes",
        "removed-files-size-bytes",
        "total-files-size-bytes",
        "added-positional-deletes",
        "removed-positional-deletes",
        "total-positional-deletes",
        "manifest-entries-processed",
    ]
    assert commit_metrics_from_summary({}).to_json() == {}
    assert TimerResult(5, time_unit="milliseconds").total_duration_ns == 5_000_000
    assert isinstance(CommitReport.from_json(to_rest_request(commit_report_from_values("a.b", 1, None, "append", {}))), CommitReport)
