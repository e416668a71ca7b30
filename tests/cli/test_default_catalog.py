"""``--catalog default`` in ``stats``, ``events`` and ``scan``: the embedded default catalog (``./warehouse/catalog.db``,
what ``make run`` fills), used only when asked for by name and no catalog of that name is configured; a configured
``default`` wins. (Without any catalog configured and none named, commands stop: tests/cli/test_config_errors.py.)"""
from __future__ import annotations

import json

from click.testing import CliRunner

from iceberg_lineage.cli import main
from iceberg_lineage.read.catalogs import embedded_sql_catalog
from tests.support.scan import write_table


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


def test_stats_and_events_find_the_embedded_default(tmp_path):
    write_table(embedded_sql_catalog(), "demo.orders", commits=2)  # ./warehouse under the test's cwd (tmp_path)
    stats = cli("stats", "--catalog", "default", "--table", "demo.orders", "--all-snapshots", "--format", "json")
    assert stats.exit_code == 0, stats.output
    assert [s["records"] for s in json.loads(stats.stdout)["snapshots"]] == [3, 6]
    events = cli("events", "--catalog", "default", "--table", "demo.orders")
    assert events.exit_code == 0, events.output
    start, event = [json.loads(line) for line in events.stdout.splitlines()]
    assert (start["eventType"], start["run"]) == ("START", event["run"])
    output = event["outputs"][0]
    assert output["name"] == str((tmp_path / "warehouse" / "demo" / "orders").resolve())
    # read through the catalog: its table identifier is the symlink
    assert output["facets"]["symlinks"]["identifiers"] == [
        {"name": "demo.orders", "namespace": f"sqlite:///{(tmp_path / 'warehouse').resolve()}/catalog.db", "type": "TABLE"}]
    assert output["facets"]["version"]["datasetVersion"] == str(json.loads(stats.stdout)["snapshots"][-1]["snapshot_id"])


def test_scan_finds_default_beside_other_catalogs(tmp_path, monkeypatch):
    write_table(embedded_sql_catalog(), "demo.orders", commits=2)
    monkeypatch.setenv("PYICEBERG_CATALOG__OTHER__URI", f"sqlite:///{tmp_path}/other.db")
    scan = cli("scan", "--catalog", "default", "--dry-run", "--no-progress", "--format", "json",
               "--state", str(tmp_path / "state.db"))
    assert scan.exit_code == 0, scan.output
    assert json.loads(scan.stderr)["snapshots"]["emitted"] == 2


def test_other_catalogs_configured_but_not_default(tmp_path, monkeypatch):
    write_table(embedded_sql_catalog(), "demo.orders", commits=1)
    monkeypatch.setenv("PYICEBERG_CATALOG__OTHER__URI", f"sqlite:///{tmp_path}/other.db")
    stats = cli("stats", "--catalog", "default", "--table", "demo.orders", "--format", "json")
    assert stats.exit_code == 0, stats.output
    assert json.loads(stats.stdout)["snapshots"][0]["records"] == 3


def test_a_configured_default_wins(tmp_path, monkeypatch):
    from pyiceberg.catalog.sql import SqlCatalog

    write_table(embedded_sql_catalog(), "demo.orders", commits=1)
    (tmp_path / "mine").mkdir()
    mine = SqlCatalog("default", uri=f"sqlite:///{tmp_path}/mine/c.db", warehouse=f"file://{tmp_path}/mine")
    write_table(mine, "demo.orders", commits=3)
    monkeypatch.setenv("PYICEBERG_CATALOG__DEFAULT__URI", f"sqlite:///{tmp_path}/mine/c.db")
    monkeypatch.setenv("PYICEBERG_CATALOG__DEFAULT__WAREHOUSE", f"file://{tmp_path}/mine")
    stats = cli("stats", "--catalog", "default", "--table", "demo.orders", "--format", "json")
    assert stats.exit_code == 0, stats.output
    assert json.loads(stats.stdout)["snapshots"][0]["records"] == 9


def test_no_embedded_catalog_yet_is_a_usage_error(tmp_path):
    stats = cli("stats", "--catalog", "default", "--table", "demo.orders")
    assert stats.exit_code == 2
    assert stats.stderr.strip() == (
        "iceberg-lineage: error: no catalog named 'default' is configured, and there is no embedded default catalog "
        f"at {tmp_path}/warehouse/catalog.db (`make run` creates one)")
    assert not (tmp_path / "warehouse").exists()
