"""``iceberg-lineage config``: every setting with its value and its source, secrets masked, each catalog with the
file it came from; exit 2 on a broken file. ``--check`` reaches a real SQLite catalog and a real local HTTP server
(up: exit 0, nothing sent; down: exit 1 naming it)."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from iceberg_lineage.cli.config import config_command
from iceberg_lineage.config import KEYS
from tests.support.lineage_server import LineageServer, free_port

SECRET = "https://hooks.example/T000/XXXXsecret"


def run(tmp_path, monkeypatch, *args: str):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("ICEBERG_LINEAGE_CONFIG", "OPENLINEAGE_URL", "OPENLINEAGE_CONFIG", "PYICEBERG_HOME"):
        monkeypatch.delenv(name, raising=False)
    return CliRunner().invoke(config_command, list(args))


def test_each_setting_has_its_value_and_source(tmp_path, monkeypatch, user_state):
    path = tmp_path / "iceberg-lineage.yml"
    path.write_text(f"alerts:\n  webhook: {SECRET}\nspool:\n  max_bytes: 1000\n")
    monkeypatch.setenv("ICEBERG_LINEAGE__JOB__NAMESPACE", "from-env")
    result = run(tmp_path, monkeypatch, "--format", "json", "--profile", "datahub")
    assert result.exit_code == 0, result.output
    assert SECRET not in result.output
    report = json.loads(result.output)
    rows = {r["key"]: (r["value"], r["source"]) for r in report["settings"]}
    assert list(rows) == list(KEYS)  # every declared setting, in declaration order
    assert rows["alerts.webhook"] == ("***", f"file {path}")
    assert rows["spool.max_bytes"] == (1000, f"file {path}")
    assert rows["job.namespace"] == ("from-env", "env ICEBERG_LINEAGE__JOB__NAMESPACE")
    assert rows["consumer.profile"] == ("datahub", "flag")
    assert rows["events.max_bytes"] == (1_000_000, "default")
    assert rows["column_stats.exclude"] == ([], "default")
    assert (report["state"], report["spool"]) == (str(user_state / "state.db"), str(user_state / "spool"))
    assert report["transport"].startswith(f"file {user_state / 'events.jsonl'}")
    assert not user_state.exists()  # showing the configuration creates nothing


def test_text_format_lines_up_key_value_source(tmp_path, monkeypatch):
    result = run(tmp_path, monkeypatch, "--format", "text")
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("spool.max_rejections"))
    assert line.split() == ["spool.max_rejections", "5", "default"]


def test_a_broken_configuration_is_one_line_and_exit_2(tmp_path, monkeypatch):
    (tmp_path / "iceberg-lineage.yml").write_text(f"alerts:\n  webhook_retries: {SECRET}\n")
    result = run(tmp_path, monkeypatch)
    assert result.exit_code == 2
    assert SECRET not in result.output and len(result.output.strip().splitlines()) == 1
    assert "alerts.webhook_retries must be an integer, at least 0" in result.output


def test_each_catalog_names_the_file_it_came_from(tmp_path, monkeypatch):
    (tmp_path / ".pyiceberg.yaml").write_text("catalog:\n  lake:\n    uri: sqlite:////x/lake.db\n")  # ~ is tmp_path
    monkeypatch.setenv("PYICEBERG_CATALOG__OPS__URI", "sqlite:////x/ops.db")
    monkeypatch.setenv("PYICEBERG_CATALOG__LAKE__WAREHOUSE", "file:///x")  # completes the file's catalog
    result = run(tmp_path, monkeypatch, "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["catalogs"] == [
        {"name": "lake", "source": str(tmp_path / ".pyiceberg.yaml")}, {"name": "ops", "source": "environment"}]
    text = run(tmp_path, monkeypatch, "--format", "text")
    assert f"catalogs   lake ({tmp_path}/.pyiceberg.yaml), ops (environment)" in text.output.splitlines()


@pytest.fixture
def lake(tmp_path, monkeypatch):
    """A real SQLite catalog configured by ``PYICEBERG_CATALOG__LAKE__*``."""
    from pyiceberg.catalog.sql import SqlCatalog

    (tmp_path / "lake").mkdir()
    catalog = SqlCatalog("lake", uri=f"sqlite:///{tmp_path}/lake/c.db", warehouse=f"file://{tmp_path}/lake")
    catalog.create_namespace("db")
    monkeypatch.setenv("PYICEBERG_CATALOG__LAKE__URI", f"sqlite:///{tmp_path}/lake/c.db")
    monkeypatch.setenv("PYICEBERG_CATALOG__LAKE__WAREHOUSE", f"file://{tmp_path}/lake")
    return catalog


def http_transport(tmp_path, url: str) -> None:
    (tmp_path / "openlineage.yml").write_text(f"transport:\n  type: http\n  url: {url}\n")


def test_check_reaches_the_catalog_and_the_endpoint_sending_nothing(tmp_path, monkeypatch, lake):
    with LineageServer() as server:
        http_transport(tmp_path, server.url)
        result = run(tmp_path, monkeypatch, "--check", "--format", "json")
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["check"] == {"unreachable": []}
        assert result.stderr == ""
        assert server.requests == [] and server.gets == []  # a connection, no request


def test_check_names_an_endpoint_that_is_down(tmp_path, monkeypatch, lake):
    port = free_port()
    http_transport(tmp_path, f"http://127.0.0.1:{port}/api")
    result = run(tmp_path, monkeypatch, "--check", "--format", "text")
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines() == [
        f"iceberg-lineage: unreachable: http endpoint http://127.0.0.1:{port}/api: cannot connect to 127.0.0.1:{port} "
        "(Connection refused)"]
    assert "check      1 unreachable" in result.stdout.splitlines()


def test_check_names_a_catalog_that_cannot_be_loaded_and_creates_nothing(tmp_path, monkeypatch, lake):
    port = free_port()
    monkeypatch.setenv("PYICEBERG_CATALOG__GONE__URI", f"sqlite:///{tmp_path}/gone/c.db")
    monkeypatch.setenv("PYICEBERG_CATALOG__DOWN__URI", f"http://127.0.0.1:{port}/api")  # a REST catalog, down
    result = run(tmp_path, monkeypatch, "--check", "--format", "json")
    assert result.exit_code == 1, result.output
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"iceberg-lineage: unreachable: catalog down: cannot load catalog 'down': "
                               f"ConnectionError: HTTPConnectionPool(host='127.0.0.1', port={port})")
    assert lines[1:] == [f"iceberg-lineage: unreachable: catalog gone: no SQLite database at {tmp_path}/gone/c.db"]
    assert not (tmp_path / "gone").exists()
    # the default file transport's folder is writable, and nothing was written there
    assert not (tmp_path / ".iceberg-lineage").exists()


def test_check_with_a_broken_configuration_is_exit_2(tmp_path, monkeypatch, lake):
    (tmp_path / "openlineage.yml").write_text("transport:\n  type: http\n")
    result = run(tmp_path, monkeypatch, "--check")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"iceberg-lineage: error: file {tmp_path}/openlineage.yml: transport.url: missing (the http transport needs it)"]


def test_check_without_any_catalog_is_exit_2(tmp_path, monkeypatch):
    result = run(tmp_path, monkeypatch, "--check")
    assert result.exit_code == 2
    assert result.stderr.startswith("iceberg-lineage: error: no PyIceberg catalog is configured: looked for ")


def test_check_names_kafka_brokers_that_do_not_answer(tmp_path, monkeypatch, lake):
    port = free_port()
    (tmp_path / "openlineage.yml").write_text(
        f"transport:\n  type: kafka\n  topic: lineage\n  config:\n    bootstrap.servers: 127.0.0.1:{port}\n")
    result = run(tmp_path, monkeypatch, "--check", "--format", "json")
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines() == [
        f"iceberg-lineage: unreachable: kafka bootstrap servers 127.0.0.1:{port}: no metadata within 5 s "
        "(KafkaException)"]
