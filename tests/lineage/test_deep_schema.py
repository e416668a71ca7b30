"""A schema nested as deep as the metadata reader accepts makes valid events (the schema facet lists 64 levels and
keeps the deeper field's type); deeper metadata is refused in one line, by ``stats`` and ``events`` alike."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from iceberg_lineage.cli import main
from iceberg_lineage.lineage.facets.table import MAX_SCHEMA_DEPTH
from tests.support.fixture_tables import EDITABLE_TABLE, copied_table, current_metadata
from tests.support.olschema import validate_event


def _deep_table(tmp_path: Path, depth: int) -> Path:
    """The fixture table with one more column: ``depth`` structs nested around a string (written as text:
    ``json.dumps`` itself refuses such depth)."""
    path = current_metadata(copied_table(tmp_path, EDITABLE_TABLE))
    doc = json.loads(path.read_text())
    schema = next(s for s in doc["schemas"] if s["schema-id"] == doc["current-schema-id"])
    text = '{"id": 10000, "name": "leaf", "required": false, "type": "string"}'
    for i in range(depth):
        text = ('{"id": %d, "name": "n%d", "required": false, "type": {"type": "struct", "fields": [%s]}}'
                % (10001 + i, i, text))
    schema["fields"].append("DEEP")
    doc["last-column-id"] = 10000 + depth
    path.write_text(json.dumps(doc).replace('"DEEP"', text))
    return path


def _depth(field: dict) -> int:
    levels = 0
    while field.get("fields"):
        field, levels = field["fields"][0], levels + 1
    return levels


def _cli(*args: str) -> subprocess.CompletedProcess:
    """The command as users run it: the depth the reader accepts depends on the stack it is called from."""
    return subprocess.run([sys.executable, "-m", "iceberg_lineage.cli", *args], capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("depth", [300, 320])
def test_events_of_a_schema_as_deep_as_the_reader_accepts(tmp_path, depth):
    metadata = _deep_table(tmp_path, depth)
    assert _cli("stats", "--metadata", str(metadata), "--format", "json").returncode == 0
    result = _cli("events", "--metadata", str(metadata))
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    for event in events:
        validate_event(event)
    schemas = [d["facets"]["schema"] for e in events for d in e.get("outputs", []) if "schema" in d.get("facets", {})]
    assert schemas
    deep = schemas[-1]["fields"][-1]
    assert deep["name"] == "n%d" % (depth - 1) and _depth(deep) == MAX_SCHEMA_DEPTH - 1
    cut = deep
    for _ in range(MAX_SCHEMA_DEPTH - 1):
        cut = cut["fields"][0]
    assert cut == {"name": "n%d" % (depth - MAX_SCHEMA_DEPTH), "ordinal_position": 1, "type": "struct"}


@pytest.mark.parametrize("depth", [400, 900])
def test_deeper_metadata_is_refused_in_one_line(tmp_path, depth):
    metadata = _deep_table(tmp_path, depth)
    for command in ("stats", "events"):
        result = CliRunner().invoke(main, [command, "--metadata", str(metadata)])
        assert result.exit_code in (1, 2) and "Traceback" not in result.output
        assert result.stderr.splitlines() == [
            f"iceberg-lineage: error: file {metadata}: not valid JSON (nested too deeply)"]
