"""The public Python API (issue 29): ``iceberg_lineage.scan_catalog``, ``table_stats``, ``table_events`` and
``check_tables`` on real SQLite catalogs return what the CLI prints, with figures checked against PyIceberg's own
reading of the same tables; ``import iceberg_lineage`` loads none of it."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

import iceberg_lineage
from iceberg_lineage.cli import main
from iceberg_lineage.demo.tables import write_demo_table
from iceberg_lineage.lineage.serde import to_json
from tests.support.olschema import validate_event
from tests.support.scan import catalog_env


def cli(monkeypatch, catalog, *args: str) -> list[dict]:
    """The command's JSON output (stdout, else stderr's last line) with ``catalog`` configured as a user would."""
    for name, value in catalog_env(catalog).items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code in (0, 1), result.output
    text = result.stdout.strip() or result.stderr.strip().splitlines()[-1]
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture
def orders(sql_catalog):
    return write_demo_table(sql_catalog, "db.orders", commits=6)


def test_import_is_lazy():
    code = "import sys, iceberg_lineage; print(sorted(m for m in ('pyiceberg', 'openlineage', 'iceberg_lineage.api') " \
           "if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    assert {"scan_catalog", "table_stats", "table_events", "check_tables"} <= set(iceberg_lineage.__all__)


def test_table_stats_counts_what_pyiceberg_reads(orders, sql_catalog, monkeypatch):
    stats = iceberg_lineage.table_stats("db.orders", catalog=sql_catalog)
    current = stats.snapshots[-1]
    assert current.snapshot_id == orders.metadata.current_snapshot_id
    assert current.records == orders.scan().to_arrow().num_rows
    assert current.data_files == len(orders.inspect.files())
    every = iceberg_lineage.table_stats(orders, all_snapshots=True, depth="summary")
    assert [s.snapshot_id for s in every.snapshots] == [s.snapshot_id for s in orders.metadata.snapshots]
    # the same history `stats --format json` prints
    assert [stats.to_json()] == cli(monkeypatch, sql_catalog, "stats", "--catalog", "test", "--table", "db.orders",
                                    "--format", "json")


def test_table_events_are_the_events_command_s(orders, sql_catalog, monkeypatch):
    events = [json.loads(to_json(e)) for e in iceberg_lineage.table_events(orders, all_snapshots=True)]
    for event in events:
        validate_event(event)
    # one run per snapshot, START and COMPLETE, in commit order
    completes = [e for e in events if e["eventType"] == "COMPLETE"]
    assert [int(e["outputs"][0]["facets"]["version"]["datasetVersion"]) for e in completes] == [
        s.snapshot_id for s in orders.metadata.snapshots]
    printed = cli(monkeypatch, sql_catalog, "events", "--catalog", "test", "--table", "db.orders", "--all-snapshots")
    shape = [(e["eventType"], e["job"]["name"], [o.get("name") for o in e.get("outputs") or ()]) for e in events]
    assert shape == [(e["eventType"], e["job"]["name"], [o.get("name") for o in e.get("outputs") or ()])
                     for e in printed]
    (current,) = [e for e in iceberg_lineage.table_events(orders, dataset_events=True)]
    assert json.loads(to_json(current))["dataset"]["name"].endswith("db/orders")


def test_scan_catalog_emits_each_snapshot_once(orders, sql_catalog, tmp_path):
    returns = write_demo_table(sql_catalog, "db.returns", commits=4)
    snapshots = len(orders.metadata.snapshots) + len(returns.metadata.snapshots)

    preview = iceberg_lineage.scan_catalog(sql_catalog, dry_run=True)
    assert preview.summary.snapshots_emitted == snapshots and preview.summary.dry_run
    runs = [json.loads(e) for e in preview.events if json.loads(e)["eventType"] == "COMPLETE"]
    # a run per snapshot, a checks run per schema change (one per table), and the scan's own run
    assert len(runs) == snapshots + 2 + 1
    assert not (tmp_path / ".iceberg-lineage" / "events.jsonl").exists()

    first = iceberg_lineage.scan_catalog([sql_catalog], namespaces=["db"])
    assert (first.summary.tables_scanned, first.summary.snapshots_emitted, first.exit_code) == (2, snapshots, 0)
    assert first.events_to == "file .iceberg-lineage/events.jsonl" and first.events == ()
    sent = (tmp_path / ".iceberg-lineage" / "events.jsonl").read_text().splitlines()
    assert len(sent) == len(preview.events)
    assert first.to_json()["snapshots"]["emitted"] == snapshots

    again = iceberg_lineage.scan_catalog(sql_catalog, tables=["db.orders"])
    assert (again.summary.tables_scanned, again.summary.snapshots_emitted) == (1, 0)


def test_check_tables_gates_like_check(orders, sql_catalog, tmp_path, monkeypatch):
    returns = write_demo_table(sql_catalog, "db.returns", commits=4)
    assert len(returns.metadata.snapshots) <= 5 < len(orders.metadata.snapshots)
    rules = tmp_path / "rules.yml"
    rules.write_text("checks:\n  - tables: '*'\n    rules:\n      row_count: {min: 1, severity: error}\n"
                     "      snapshots: {max: 5, severity: error}\n")
    walked = iceberg_lineage.check_tables(catalog=sql_catalog, rules=rules)
    assert [(r.table, r.snapshot_id) for r in walked] == [
        ("db.orders", orders.metadata.current_snapshot_id),
        ("db.returns", sql_catalog.load_table("db.returns").metadata.current_snapshot_id)]
    by_table = {r.table: {a.name: (a.status, a.actual) for a in r.assertions} for r in walked}
    assert by_table["db.orders"]["snapshots"] == ("fail", str(len(orders.metadata.snapshots)))
    assert by_table["db.returns"]["snapshots"] == ("pass", str(len(returns.metadata.snapshots)))
    assert by_table["db.orders"]["row_count"] == ("pass", str(orders.scan().to_arrow().num_rows))
    assert [r.blocks for r in walked] == [True, False]

    printed = cli(monkeypatch, sql_catalog, "check", "--catalog", "test", "--rules", str(rules), "--format", "json")
    assert [(p["table"], p["assertion"], p["status"], p["actual"]) for p in printed] == [
        (r.table, a.name, a.status, a.actual) for r in walked for a in r.assertions]

    # a configured catalog by name (`cli` configured it), one table
    (one,) = iceberg_lineage.check_tables("db.returns", catalog="test", rules=str(rules))
    assert one.assertions == walked[1].assertions

    (missing,) = iceberg_lineage.check_tables(tmp_path / "nowhere")
    assert missing.blocks and missing.error is not None and "nowhere" in missing.error
