"""Secrets planted in catalog properties, catalog URIs and transport settings never leave: not in events, stdout,
stderr, log records, spool or state files, nor in error messages."""
from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from openlineage.client import OpenLineageClient
from openlineage.client.transport.file import FileConfig, FileTransport
from pyiceberg.types import StringType
from tests.support.security import (
    PLANTED,
    REST_URI,
    assert_no_leak,
    assert_no_leak_in_files,
    dead_port,
    http_transport_with_secrets,
    openlineage_config,
    personal_rows,
    planted_catalog,
    run_cli,
    write_pyiceberg_config,
)

from iceberg_lineage.delivery.emitter import EMITTERS
from iceberg_lineage.config import Settings
from iceberg_lineage.lineage.events import history_events
from iceberg_lineage.lineage.serde import to_json
from iceberg_lineage.redact import catalog_facet_properties
from iceberg_lineage.read.source import open_table
from iceberg_lineage.stats import table_history


@pytest.fixture
def catalog(tmp_path):
    catalog = planted_catalog(tmp_path)
    table = catalog.create_table("db.t", schema=personal_rows().schema)
    table.append(personal_rows(0))
    table.append(personal_rows(10))
    return catalog


@pytest.fixture
def pyiceberg_home(tmp_path, catalog, monkeypatch) -> Path:
    home = tmp_path / "pyiceberg-home"
    write_pyiceberg_config(home, catalog)
    monkeypatch.setenv("PYICEBERG_HOME", str(home))
    return home


def test_catalog_facet_and_symlinks_keep_no_secret(catalog):
    """A REST catalog whose URI carries a password and a token: the facet and symlink name it without them."""
    loaded = open_table(catalog.load_table("db.t"))
    props = {**PLANTED, "uri": REST_URI, "warehouse": "s3://wh-user:PLANTED-PASS-11@bucket/wh", "mysql.pwd":
             "PLANTED-PWD-12", "s3.region": "eu-west-1"}
    for table in (loaded, dataclasses.replace(loaded, catalog_type="rest", catalog_properties=props)):
        events = history_events(table, table_history(table), Settings())
        assert len(events) == 2
        docs = [to_json(e) for e in events]
        assert_no_leak(**{f"event{i}": d for i, d in enumerate(docs)})
        dataset = json.loads(docs[0])["outputs"][0]
        facet = dataset["facets"]["catalog"]
        expected = {k: v for k, v in catalog_facet_properties(table.catalog_properties).items()
                    if k not in ("uri", "warehouse")}
        assert facet["catalogProperties"] == expected
    assert facet["metadataUri"] == "https://catalog.example.com/api?realm=x"
    assert facet["warehouseUri"] == "s3://bucket/wh"
    assert facet["catalogProperties"] == {"s3.region": "eu-west-1"}
    assert dataset["facets"]["symlinks"]["identifiers"] == [
        {"namespace": "https://catalog.example.com/api?realm=x", "name": "db.t", "type": "TABLE"}]


def test_events_cli_prints_and_sends_no_secret(tmp_path, catalog, pyiceberg_home):
    printed = run_cli("events", "--catalog", "sec", "--table", "db.t", "--all-snapshots")
    assert printed.returncode == 0, printed.stderr
    assert len(printed.stdout.splitlines()) == 2 * 2  # two runs, START and COMPLETE
    assert_no_leak(stdout=printed.stdout, stderr=printed.stderr)

    events_file = tmp_path / "sent" / "events.jsonl"
    events_file.parent.mkdir()
    env = openlineage_config(tmp_path, {"type": "file", "log_file_path": str(events_file), "append": True})
    sent = run_cli("events", "--catalog", "sec", "--table", "db.t", "--all-snapshots", "--emit", env=env)
    assert sent.returncode == 0, sent.stderr
    assert len(events_file.read_text().splitlines()) == 2 * 2  # two runs, START and COMPLETE
    assert_no_leak(stdout=sent.stdout, stderr=sent.stderr)
    assert_no_leak_in_files(events_file)


def test_unreachable_secret_catalog_fails_without_secrets(tmp_path, monkeypatch):
    """A REST catalog that cannot be reached: the one-line error names it, never its credentials."""
    home = tmp_path / "pyiceberg-home"
    home.mkdir()
    rest = {"type": "rest", "uri": f"http://planted-user:PLANTED-PASS-9@127.0.0.1:{dead_port()}/api?token=PLANTED-Q",
            **PLANTED}
    (home / ".pyiceberg.yaml").write_text(yaml.safe_dump({"catalog": {"down": rest}}))
    monkeypatch.setenv("PYICEBERG_HOME", str(home))
    for args in (("events", "--catalog", "down", "--table", "db.t"), ("scan", "--catalog", "down", "--no-progress")):
        done = run_cli(*args)
        assert done.returncode in (1, 2), done.stderr
        assert "down" in done.stderr
        assert_no_leak(stdout=done.stdout, stderr=done.stderr)


def test_hook_events_and_logs_keep_no_secret(tmp_path, caplog):
    from iceberg_lineage.hook.reporter import observe

    caplog.set_level(logging.DEBUG)
    EMITTERS.shutdown()
    events_file = tmp_path / "hook.jsonl"
    client = OpenLineageClient(transport=FileTransport(FileConfig(log_file_path=str(events_file), append=True)))
    catalog = observe(planted_catalog(tmp_path), client=client)
    table = catalog.create_table("db.h", schema=personal_rows().schema)
    table.append(personal_rows(0))
    table.update_schema().add_column("note", StringType()).commit()
    table.scan(row_filter="id > 0").plan_files()
    assert EMITTERS.flush_all(30)
    EMITTERS.shutdown()
    kinds = [json.loads(line)["job"]["name"] for line in events_file.read_text().splitlines()]
    # CREATE, append, ALTER, the schema alert's checks run (issue 18), scan: START and COMPLETE each
    assert kinds == ["db.h.pyiceberg"] * 6 + ["db.h.checks"] * 2 + ["db.h.scan"] * 2
    assert_no_leak_in_files(events_file)
    assert_no_leak(logs="\n".join(r.getMessage() for r in caplog.records), log_text=caplog.text)


def test_scanner_dry_run_and_file_transport_keep_no_secret(tmp_path, catalog, pyiceberg_home):
    dry = run_cli("scan", "--catalog", "sec", "--dry-run", "--no-progress")
    assert dry.returncode == 0, dry.stderr
    assert len(dry.stdout.splitlines()) == 2 * 2 + 2  # two runs, START and COMPLETE, and the scan's own run
    assert_no_leak(stdout=dry.stdout, stderr=dry.stderr)

    events_file = tmp_path / "scan-events.jsonl"
    env = openlineage_config(tmp_path, {"type": "file", "log_file_path": str(events_file), "append": True})
    real = run_cli("scan", "--catalog", "sec", "--no-progress", "--state", str(tmp_path / "state" / "s.db"), env=env)
    assert real.returncode == 0, real.stderr
    assert json.loads(real.stderr.splitlines()[-1])["snapshots"]["emitted"] == 2
    assert_no_leak(stdout=real.stdout, stderr=real.stderr)
    assert_no_leak_in_files(events_file, tmp_path / "state")


def test_spooled_events_and_state_keep_no_secret(tmp_path, catalog, pyiceberg_home):
    """The lineage server is down: the events go to the spool; neither the catalog's nor the transport's secrets
    (URL password, API key, custom header) reach the spool, the state or the output; nor does a failed replay."""
    env = {**openlineage_config(tmp_path, http_transport_with_secrets(dead_port())),
           "ICEBERG_LINEAGE__SPOOL__PATH": str(tmp_path / "spool")}
    done = run_cli("scan", "--catalog", "sec", "--no-progress", "--state", str(tmp_path / "state" / "s.db"), env=env)
    assert done.returncode == 3, done.stderr  # done, the events wait in the spool
    assert "6 spooled" in done.stderr  # two runs, START and COMPLETE, and the scan's own run
    assert_no_leak(stdout=done.stdout, stderr=done.stderr)
    spool = assert_no_leak_in_files(tmp_path / "spool", tmp_path / "state")
    assert any(b"alice@" in data for data in spool.values())  # the events did reach the spool (bounds are on)
    replay = run_cli("replay", env=env)
    assert replay.returncode == 1, replay.stderr
    assert_no_leak(stdout=replay.stdout, stderr=replay.stderr)


def test_in_process_scan_logs_keep_no_secret(tmp_path, catalog, pyiceberg_home, caplog, monkeypatch):
    """Every log record of a scan whose delivery fails, at DEBUG, from every logger (ours, openlineage's, urllib3's)."""
    from iceberg_lineage.cli import main

    caplog.set_level(logging.DEBUG)
    for key, value in {**openlineage_config(tmp_path, http_transport_with_secrets(dead_port())),
                       "ICEBERG_LINEAGE__SPOOL__PATH": str(tmp_path / "spool")}.items():
        monkeypatch.setenv(key, value)
    result = CliRunner().invoke(main, ["scan", "--catalog", "sec", "--no-progress", "--state",
                                       str(tmp_path / "state" / "s.db")])
    assert result.exit_code == 3, result.output  # done, the events wait in the spool
    assert any("spool" in r.getMessage() for r in caplog.records)
    assert_no_leak(output=result.output, logs="\n".join(r.getMessage() for r in caplog.records), log_text=caplog.text)
