"""Hostile and broken input: every case gets a typed error naming the file, nothing hangs, memory stays bounded.

The fuzzing mutates the real fixture tables (bit flips, truncation, splices) with a fixed seed; at least 500
generated cases (a hang fails the run through pytest-timeout).
"""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.support.fixture_tables import FIXTURES, copied_table
from tests.support.fixture_tables import EDITABLE_METADATA, EDITABLE_TABLE
from tests.support.fixture_tables import current_manifest as _current_manifest, current_metadata as _meta
from iceberg_lineage.errors import IcebergLineageError, ManifestError, ManifestNotFoundError, MetadataError
from iceberg_lineage.stats import table_history

TABLE = EDITABLE_TABLE
CURRENT = EDITABLE_METADATA


@pytest.fixture
def table_copy(tmp_path) -> Path:
    return copied_table(tmp_path, TABLE)


def _walk(table: Path):
    return table_history(str(_meta(table)))


def _edit_metadata(table: Path, edit) -> None:
    path = _meta(table)
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize(
    "text,reason",
    [
        ('{"format-version": 2, "location": ', "not valid JSON"),
        ("\x00\x01garbage", "not valid JSON"),
        ("[1, 2, 3]", "not a JSON object"),
        ("[" * 100_000 + "]" * 100_000, "not valid JSON"),
    ],
)
def test_metadata_that_is_not_table_metadata(table_copy, text, reason):
    _meta(table_copy).write_text(text)
    with pytest.raises(MetadataError, match=reason) as info:
        _walk(table_copy)
    assert CURRENT in str(info.value)


@pytest.mark.parametrize(
    "edit,reason",
    [
        (lambda d: d.update({"format-version": 7}), "unsupported format-version 7"),
        (lambda d: d.update({"format-version": "2"}), "unsupported format-version"),
        (lambda d: d.pop("location"), "missing field 'location'"),
        (lambda d: d.update({"snapshots": [{"snapshot-id": "x", "timestamp-ms": 1}]}), "expected an integer"),
        (lambda d: d.update({"schemas": "nope"}), "invalid table metadata"),
        (lambda d: d.update({"current-schema-id": 99}), "current-schema-id 99"),
        (lambda d: d["snapshots"][0].update({"summary": [1, 2]}), "summary is not an object"),
    ],
)
def test_metadata_with_wrong_shapes(table_copy, edit, reason):
    _edit_metadata(table_copy, edit)
    with pytest.raises(MetadataError, match=reason):
        _walk(table_copy)


def test_snapshot_cycle_terminates(table_copy):
    def cycle(d):
        snaps = d["snapshots"]
        snaps[0]["parent-snapshot-id"] = snaps[-1]["snapshot-id"]  # the oldest points at the newest

    _edit_metadata(table_copy, cycle)
    history = _walk(table_copy)
    assert len(history) == 6 and all(s.refs == ("main",) for s in history)


def test_huge_property_is_carried_not_choked_on(table_copy):
    _edit_metadata(table_copy, lambda d: d["properties"].update({"blob": "x" * 10_000_000}))
    history = _walk(table_copy)
    assert len(history) == 6  # a hang or a choke is caught by pytest-timeout, not by a clock here


@pytest.mark.parametrize(
    "damage,reason",
    [
        (lambda b: b[: len(b) // 2], "corrupt Avro data|not a readable Avro file"),
        (lambda b: b"Xbj\x01" + b[4:], "not a readable Avro file"),
        (lambda b: b"", "not a readable Avro file"),
    ],
)
def test_broken_manifests_are_typed_errors_naming_the_file(table_copy, damage, reason):
    manifest = _current_manifest(table_copy)
    manifest.write_bytes(damage(manifest.read_bytes()))
    with pytest.raises(ManifestError, match=reason) as info:
        _walk(table_copy)
    assert manifest.name in str(info.value)


def test_missing_manifest_of_the_current_snapshot_fails_the_table(table_copy):
    manifest = _current_manifest(table_copy)
    manifest.unlink()
    with pytest.raises(ManifestNotFoundError, match="manifest not found") as info:
        _walk(table_copy)
    assert manifest.name in str(info.value) and "table " in str(info.value)


def test_only_a_missing_file_marks_a_historical_snapshot_expired(table_copy):
    """Expired history is decided by the error's type: a historical manifest list that is there but unreadable fails
    the table instead of being reported as expired."""
    doc = json.loads(_meta(table_copy).read_text())
    lists = [table_copy / "metadata" / Path(s["manifest-list"]).name for s in doc["snapshots"]]
    missing = [path for path in lists if not path.exists()]
    assert missing  # the fixture has one expired snapshot
    assert [s.available for s in _walk(table_copy)].count(False) == len(missing)
    missing[0].write_bytes(b"garbage")
    with pytest.raises(ManifestError, match="not a readable Avro file") as info:
        _walk(table_copy)
    assert not isinstance(info.value, ManifestNotFoundError)


def _rewrite_manifest(path: Path, change) -> None:
    with open(path, "rb") as f:
        reader = fastavro.reader(f)
        schema, meta = reader.writer_schema, dict(reader.metadata)
        records = [change(r) for r in reader]
    meta = {k: v for k, v in meta.items() if not k.startswith("avro.")}
    with open(path, "wb") as f:
        fastavro.writer(f, schema, records, metadata=meta)


@pytest.mark.parametrize("count", [-5, (1 << 63) - 1])
def test_negative_or_huge_record_count(table_copy, count):
    def change(r):
        r["data_file"]["record_count"] = count
        return r

    _rewrite_manifest(_current_manifest(table_copy), change)
    with pytest.raises(ManifestError, match="invalid record_count"):
        _walk(table_copy)


def test_bounds_of_the_wrong_length(table_copy):
    def change(r):
        r["data_file"]["lower_bounds"] = [{"key": 1, "value": b"\x01\x02\x03"}]  # id is an int: 4 bytes
        return r

    _rewrite_manifest(_current_manifest(table_copy), change)
    with pytest.raises(ManifestError, match="wrong length"):
        _walk(table_copy)


def test_manifest_with_a_schema_that_does_not_match(table_copy):
    manifest = _current_manifest(table_copy)
    with open(manifest, "wb") as f:
        fastavro.writer(f, {"type": "record", "name": "x", "fields": [{"name": "a", "type": "int"}]}, [{"a": 1}])
    with pytest.raises(ManifestError) as info:
        _walk(table_copy)
    assert manifest.name in str(info.value)


def _figures(history) -> list[tuple]:
    return [(s.snapshot_id, s.data_files, s.records, s.position_deletes, s.equality_deletes) for s in history]


@pytest.mark.parametrize("codec", ["null", "bzip2", "xz"])
def test_manifests_in_any_codec_fastavro_reads(table_copy, codec):
    """Our container reader decodes blocks with fastavro's codec table, so any codec it supports reads the same."""
    before = _figures(_walk(table_copy))
    manifest = _current_manifest(table_copy)
    with open(manifest, "rb") as f:
        reader = fastavro.reader(f)
        schema, records = reader.writer_schema, list(reader)
    with open(manifest, "wb") as f:
        fastavro.writer(f, schema, records, codec=codec, sync_interval=64)  # several blocks
    assert _figures(_walk(table_copy)) == before


def test_a_sync_marker_that_does_not_match(table_copy):
    manifest = _current_manifest(table_copy)
    data = bytearray(manifest.read_bytes())
    data[-1] ^= 0xFF  # the last block's trailing sync marker
    manifest.write_bytes(bytes(data))
    with pytest.raises(ManifestError, match="sync marker mismatch") as info:
        _walk(table_copy)
    assert manifest.name in str(info.value)


def test_a_manifest_larger_than_its_listed_length_still_reads(table_copy):
    """Small manifests are read whole; a manifest list that understates the size must not truncate the read."""
    before = _figures(_walk(table_copy))
    doc = json.loads(_meta(table_copy).read_text())
    for snap in doc["snapshots"]:
        path = table_copy / "metadata" / Path(snap["manifest-list"]).name
        if not path.exists():  # an expired snapshot
            continue
        with open(path, "rb") as f:
            reader = fastavro.reader(f)
            schema, meta, rows = reader.writer_schema, dict(reader.metadata), list(reader)
        for row in rows:
            row["manifest_length"] = 10
        with open(path, "wb") as f:
            fastavro.writer(f, schema, rows, metadata={k: v for k, v in meta.items() if not k.startswith("avro.")})
    assert _figures(_walk(table_copy)) == before


# ---------------------------------------------------------------------------------------------------------------
# Fuzzing: random mutations of real files; only library errors may escape.
# ---------------------------------------------------------------------------------------------------------------

_FILES = sorted(p.name for p in (FIXTURES / TABLE / "metadata").iterdir())
_PRISTINE = {name: (FIXTURES / TABLE / "metadata" / name).read_bytes() for name in _FILES}


def _mutate(data: bytes, rng: random.Random, kind: str) -> bytes:
    if not data:
        return data
    if kind == "flip":
        buf = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(buf))
            buf[i] ^= 1 << rng.randrange(8)
        return bytes(buf)
    if kind == "truncate":
        return data[: rng.randrange(len(data))]
    if kind == "splice":
        i, j = sorted(rng.randrange(len(data)) for _ in range(2))
        return data[:i] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 16))) + data[j:]
    return data + bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))


@settings(max_examples=520, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(_FILES), st.sampled_from(["flip", "truncate", "splice", "append"]), st.integers(0, 2**32))
def test_fuzzed_tables_raise_only_library_errors(tmp_path_factory, name, kind, seed):
    table = tmp_path_factory.mktemp("fuzz")
    meta = table / "metadata"
    meta.mkdir()
    for other, data in _PRISTINE.items():
        (meta / other).write_bytes(data)
    (meta / name).write_bytes(_mutate(_PRISTINE[name], random.Random(seed), kind))
    try:
        history = table_history(str(meta / CURRENT))
        assert len(history) >= 1
    except IcebergLineageError as exc:
        assert exc.file or exc.table  # every error names where it happened
    shutil.rmtree(table)
