"""``scan --quiet`` (issue 29): for cron and scripts, no progress and no summary, but every error still one line."""
from __future__ import annotations

import json
from pathlib import Path

from tests.support.lineage_server import LineageServer
from tests.support.olschema import validate_event

from tests.support.scan import catalog_env, cli, write_table


def test_quiet_prints_nothing_for_a_clean_scan_and_one_line_per_failed_table(sql_catalog, tmp_path):
    write_table(sql_catalog, "db.a", 2)
    broken = write_table(sql_catalog, "db.b", 1)
    with LineageServer() as server:
        env = {**catalog_env(sql_catalog), "OPENLINEAGE_URL": server.url}

        clean = cli("--quiet", env=env, cwd=tmp_path)
        assert (clean.returncode, clean.stderr, clean.stdout) == (0, "", "")
        sent = server.events()
        for event in sent:
            validate_event(event)
        # still every snapshot's START and COMPLETE, and the scan's own run: quiet changes only what is printed
        assert len(sent) == 2 * 3 + 2

        write_table(sql_catalog, "db.a", 1, start=100)
        broken = write_table(sql_catalog, "db.b", 1, start=900).refresh()  # a new location: read, and broken
        Path(broken.metadata_location.removeprefix("file://")).write_text("not metadata")
        failing = cli("-q", env=env, cwd=tmp_path)
    assert failing.returncode == 1
    lines = failing.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"iceberg-lineage: scan: {sql_catalog.name}.db.b: "), lines
    assert "scan:" not in failing.stdout and "tables" not in failing.stderr  # no progress, no summary


def test_quiet_keeps_an_explicit_json_summary(sql_catalog, tmp_path):
    write_table(sql_catalog, "db.a", 2)
    result = cli("--quiet", "--format", "json", "--dry-run", env=catalog_env(sql_catalog), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["snapshots"]["emitted"] == 2


def test_without_quiet_a_pipe_gets_progress_lines_and_the_summary(sql_catalog, tmp_path):
    write_table(sql_catalog, "db.a", 2)
    result = cli("--dry-run", env=catalog_env(sql_catalog), cwd=tmp_path)
    lines = result.stderr.splitlines()
    assert lines[0] == f"scan: {sql_catalog.name}.db.a: 2 snapshot(s) emitted"
    assert json.loads(lines[-1])["tables"]["updated"] == 1
