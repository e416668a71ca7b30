"""The readers' shortcuts against the slow paths they replace, on every file of the real fixture tables: Avro records
decoded with the simplified writer schema, headers known by their bytes, and old metadata files read for their modes
with snapshots kept as facts only."""
from __future__ import annotations

import io
import json

import fastavro
import pytest

from iceberg_lineage.read import avro
from iceberg_lineage.read.avro import inert_logical_types, iter_records, read_header
from iceberg_lineage.read.modes import FACTS_ONLY, version_of
from iceberg_lineage.read.source import _decode_metadata
from tests.support.fixture_tables import FIXTURES

AVRO_FILES = sorted(FIXTURES.glob("*/metadata/*.avro"))
METADATA_FILES = sorted(FIXTURES.glob("*/metadata/*.metadata.json"))


def test_the_fixtures_hold_manifests_with_map_logical_types():
    assert len(AVRO_FILES) > 40 and len(METADATA_FILES) > 30
    assert any(b'"logicalType": "map"' in p.read_bytes() or b'"logicalType":"map"' in p.read_bytes()
               for p in AVRO_FILES)


@pytest.mark.parametrize("path", AVRO_FILES, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_records_decode_as_fastavro_decodes_them_with_the_schema_as_written(path):
    data = path.read_bytes()
    stream = io.BytesIO(data)
    ours = list(iter_records(stream, read_header(stream, str(path)), str(path)))
    assert ours == list(fastavro.reader(io.BytesIO(data)))
    assert ours  # a test over no record could not fail


def test_known_headers_read_as_fastavro_reads_them(monkeypatch):
    """Every fixture file's header twice (the second time by its known bytes, the fixtures' manifests sharing their
    header bytes), and once more with another sync marker: what fastavro's reader finds, and the records after it."""
    monkeypatch.setattr(avro, "_KNOWN_HEADERS", {})
    for data in [p.read_bytes() for p in AVRO_FILES] * 2:
        expected = fastavro.reader(io.BytesIO(data))
        stream = io.BytesIO(data)
        header = read_header(stream, "f")
        assert (header.sync, header.codec) == (expected._header["sync"], expected.codec)
        assert header.schema_json == expected.metadata["avro.schema"].encode()
        assert list(iter_records(stream, header, "f")) == list(expected)
    monkeypatch.setattr(avro, "_KNOWN_HEADERS", {})
    data = AVRO_FILES[0].read_bytes()
    read_header(io.BytesIO(data), "f")
    (known,) = avro._KNOWN_HEADERS
    end = len(known)
    other = data[:end] + bytes(16) + data[end + 16 :].replace(data[end : end + 16], bytes(16))
    stream = io.BytesIO(other)
    header = read_header(stream, "f")
    assert header.sync == bytes(16) and list(iter_records(stream, header, "f")) == list(fastavro.reader(io.BytesIO(other)))
    monkeypatch.setattr(avro, "KNOWN_HEADER_BYTES", end - 1)  # a longer header is read, not remembered
    monkeypatch.setattr(avro, "_KNOWN_HEADERS", {})
    stream = io.BytesIO(data)
    header = read_header(stream, "f")
    assert header.sync == data[end : end + 16] and not avro._KNOWN_HEADERS
    assert list(iter_records(stream, header, "f")) == list(fastavro.reader(io.BytesIO(data)))


def test_only_logical_types_without_a_reader_are_dropped():
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "m", "type": ["null", {"type": "array", "logicalType": "map", "items": "int"}]},
        {"name": "d", "type": {"type": "int", "logicalType": "date"}},
        {"name": "u", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "x", "type": {"type": "fixed", "name": "f", "size": 2, "logicalType": "decimal", "precision": 4}},
    ]}
    plain = inert_logical_types(schema)
    assert "logicalType" not in plain["fields"][0]["type"][1]
    assert [f["type"]["logicalType"] for f in plain["fields"][1:]] == ["date", "uuid", "decimal"]
    assert schema["fields"][0]["type"][1]["logicalType"] == "map"  # the input is left as it was


def _hostile_snapshots() -> list[str]:
    base = next(doc for p in METADATA_FILES if (doc := json.loads(p.read_text())).get("snapshots"))
    out = []
    for edit in ({"snapshot-id": "17"}, {"snapshot-id": True}, {"parent-snapshot-id": 2 ** 70}, {"timestamp-ms": None},
                 {"summary": []}):
        doc = json.loads(json.dumps(base))
        doc["snapshots"][0].update(edit)
        out.append(json.dumps(doc))
    doc = json.loads(json.dumps(base))
    doc["snapshots"] = [[1, 2, 3]]
    return [*out, json.dumps(doc)]


@pytest.mark.parametrize("text", [p.read_text() for p in METADATA_FILES] + _hostile_snapshots())
def test_facts_only_reads_give_the_version_a_full_read_gives(text):
    data = text.encode()
    expected = version_of(json.loads(data))
    assert version_of(_decode_metadata(data, "v.metadata.json")) == expected
    assert version_of(_decode_metadata(data, "v.metadata.json", FACTS_ONLY)) == expected
