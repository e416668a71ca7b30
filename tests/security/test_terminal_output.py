"""Names from metadata, end to end: ``stats`` text, ``scan``'s progress lines, summary and failures, and error lines
show control characters as escapes and markup literally; presigned URL credentials are masked; JSON keeps exact
values. A real table (PyIceberg SqlCatalog) carries the hostile column, ref, table and location names."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pytest
from click.testing import CliRunner
from tests.support.security import openlineage_config, write_pyiceberg_config

from iceberg_lineage.cli import main
from iceberg_lineage.printable import printable
from iceberg_lineage.read.source import open_table

BOLD, LINK, TITLE = "[/bold]", "[link=https://evil.example]x[/link]", "\x1b]0;pwned\x07"
FORGED, RTL = "x\nscan: lake.db.orders: 99 snapshot(s) emitted", "abc\u202egnp.exe"
HOSTILE = (BOLD, LINK, TITLE, FORGED, RTL)
#: A table name (no dot: PyIceberg would split it) that sets the title, forges a line and reverses the rest.
EVIL_TABLE = "evil" + TITLE + "\ntables: ALL OK" + RTL
#: A location from them: no newline (the file readers cannot open such a path) nor ``://`` (which reads as a URI).
LOCATION_NAME = f"{BOLD}[link=x]y[/link]{TITLE}{RTL}"
#: What a terminal must never receive raw: C0/C1 controls (but the newlines of our own lines), bidi controls.
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
SIGNED_QUERY = ("?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAPLANTEDKEYID%2F20260101%2Fus-east-1%2Fs3"
                "%2Faws4_request&X-Amz-Date=20260101T000000Z&X-Amz-Signature=PLANTEDSIGNATURE0123456789abcdef")
MASKED_QUERY = "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***&X-Amz-Date=20260101T000000Z&X-Amz-Signature=***"


def hostile_rows(n: int = 2) -> pa.Table:
    return pa.table({name: list(range(n)) for name in ("id", *HOSTILE)})


def make_hostile_table(catalog, identifier, location: str | None = None):
    """A table whose columns and tags carry every hostile name, with one snapshot."""
    table = catalog.create_table(identifier, schema=hostile_rows().schema, location=location)
    table.append(hostile_rows())
    snapshot_id = table.current_snapshot().snapshot_id
    refs = table.manage_snapshots()
    for name in HOSTILE:
        refs = refs.create_tag(snapshot_id, name)
    refs.commit()
    return table.refresh()


@pytest.fixture
def wide_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # rich wraps at 80 columns otherwise


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def assert_no_raw_control(text: str) -> None:
    assert RAW_CONTROL.findall(text) == [], text


def test_stats_text_shows_hostile_names_literally(sql_catalog, tmp_path, wide_terminal):
    location = f"file://{tmp_path}/lake/{LOCATION_NAME}"
    table = make_hostile_table(sql_catalog, "db.hostile", location)

    text = invoke("stats", "--metadata", table.metadata_location, "--format", "text")
    data = invoke("stats", "--metadata", table.metadata_location, "--format", "json")

    assert text.exit_code == 0, text.output
    doc = json.loads(data.stdout)
    [snap] = doc["snapshots"]
    assert doc["table"]["location"] == location  # JSON keeps the exact value
    assert sorted(snap["refs"]) == sorted(["main", *HOSTILE])
    lines = text.stdout.splitlines()
    name = doc["table"]["name"]
    assert TITLE in name
    assert lines[0] == f"{printable(name)}  uuid {table.metadata.table_uuid}  v2  location {printable(location)}"
    refs = ", ".join(printable(r) for r in snap["refs"])
    flat = " ".join(text.stdout.split())  # rich wraps the title at the table's width
    assert f"snapshot {snap['snapshot_id']} · append · " in lines[1] and f" · refs: {refs} ┏" in flat
    for name in HOSTILE:
        assert [line for line in lines if line.startswith(f"│ {printable(name)} ")], name
    assert not [line for line in lines if line.startswith(("scan:", "tables:"))]
    assert_no_raw_control(text.stdout)


def test_error_line_shows_hostile_location_literally(sql_catalog, tmp_path):
    location = f"file://{tmp_path}/lake/{LOCATION_NAME}"
    table = make_hostile_table(sql_catalog, "db.hostile", location)

    loaded = open_table(table.metadata_location)

    result = CliRunner().invoke(main, ["stats", "--metadata", table.metadata_location, "--snapshot", "1"])

    assert result.exit_code == 1
    assert TITLE in loaded.display_name and RTL in loaded.metadata.metadata_location
    assert result.stderr == (f"iceberg-lineage: error: table {printable(loaded.display_name)}, "
                             f"file {printable(loaded.metadata.metadata_location)}: no snapshot 1\n")


def presigned_copy(catalog, tmp_path: Path) -> str:
    """A table registered from a metadata file whose manifest list is a presigned URL that does not exist."""
    source = catalog.create_table("db.source", schema=hostile_rows().schema)
    source.append(hostile_rows())
    doc = json.loads(Path(source.metadata_location.removeprefix("file://")).read_text())
    manifest_list = f"file://{tmp_path}/gone/snap-1.avro{SIGNED_QUERY}"
    for snapshot in doc["snapshots"]:
        snapshot["manifest-list"] = manifest_list
    signed = tmp_path / "signed.metadata.json"
    signed.write_text(json.dumps(doc))
    catalog.drop_table("db.source")
    catalog.register_table("db.signed", f"file://{signed}")
    return manifest_list


@pytest.fixture
def hostile_catalog(sql_catalog, tmp_path, monkeypatch):
    """A catalog with a hostile table (name, columns, refs) and one whose manifest list is presigned and gone;
    events go to a file."""
    make_hostile_table(sql_catalog, ("db", EVIL_TABLE), f"file://{tmp_path}/lake/evil")
    manifest_list = presigned_copy(sql_catalog, tmp_path)
    write_pyiceberg_config(tmp_path / "pyiceberg-home", sql_catalog)
    monkeypatch.setenv("PYICEBERG_HOME", str(tmp_path / "pyiceberg-home"))
    transport = {"type": "file", "log_file_path": str(tmp_path / "events.jsonl"), "append": True}
    for key, value in openlineage_config(tmp_path, transport).items():
        monkeypatch.setenv(key, value)
    return manifest_list


def test_scan_progress_summary_and_failures_are_escaped_and_masked(hostile_catalog, tmp_path):
    masked = hostile_catalog.replace(SIGNED_QUERY, MASKED_QUERY)
    state = str(tmp_path / "state.db")

    text = CliRunner().invoke(main, ["scan", "--state", state, "--workers", "1", "--format", "text"])

    assert text.exit_code == 1, text.output
    evil = printable(EVIL_TABLE)
    failed = f"test.db.signed: FAILED: manifest list not found (file {masked})"
    lines = text.stderr.splitlines()
    assert sorted(line for line in lines if line.startswith("scan: ")) == sorted([
        f"scan: test.db.{evil}: 1 snapshot(s) emitted", f"scan: {failed}"])
    assert re.fullmatch(r"iceberg-lineage scan \(history\): 2 table\(s\) scanned in [0-9.]+ s", lines[-6])
    assert lines[-5:] == [
        "  tables:    0 unchanged, 1 updated, 1 failed",
        "  snapshots: 1 emitted, 0 already emitted by hooks",
        "  sent:      1 delivered, 0 spooled",
        f"  failed:  {failed.replace(': FAILED', '')}",
        f"  events:    file {tmp_path / 'events.jsonl'}",
    ]
    assert_no_raw_control(text.stderr)
    assert "PLANTED" not in text.stderr

    again = CliRunner().invoke(main, ["scan", "--state", state, "--no-progress", "--format", "json"])
    summary = json.loads(again.stderr.splitlines()[-1])
    assert [(f["table"], f["file"]) for f in summary["failures"]] == [("db.signed", masked)]
    assert "PLANTED" not in again.stderr


def test_scan_json_keeps_exact_names(hostile_catalog, tmp_path):
    """The events (JSON) carry the exact names; only human-readable output escapes them."""
    result = CliRunner().invoke(main, ["scan", "--state", str(tmp_path / "state.db"), "--no-progress",
                                       "--table", "db.evil*"])
    assert result.exit_code == 0, result.output
    # the table's run, within the scan's own run
    [_, start, event, _] = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert start["eventType"] == "START"
    facets = event["outputs"][0]["facets"]
    assert [f["name"] for f in facets["schema"]["fields"]] == ["id", *HOSTILE]
    assert facets["symlinks"]["identifiers"][0]["name"] == f"db.{EVIL_TABLE}"
    assert sorted(facets["icebergTableStatistics"]["refs"]) == sorted(["main", *HOSTILE])
