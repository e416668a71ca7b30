"""Long metadata (issue 31, item 17): a ``metadata.json`` is decoded with its ``snapshots`` and ``snapshot-log``
streamed into compact models. What it decodes to, and every error, must be what ``json.loads`` then
``parse_metadata`` give; the memory a snapshot keeps is bounded here, the time in ``benchmarks/long_metadata.py``.
"""
from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from iceberg_lineage.errors import MetadataError
from iceberg_lineage.read import metadata_stream
from iceberg_lineage.read.metadata import Snapshot
from iceberg_lineage.read.metadata_json import parse_metadata
from iceberg_lineage.read.modes import version_of
from iceberg_lineage.read.source import _file_io, load_metadata_path, read_metadata_file


@pytest.fixture(autouse=True, params=["whole", "streamed"])
def decoding(request, monkeypatch):
    """Every test twice: a small file decoded whole then compacted, and streamed as a long one is."""
    if request.param == "streamed":
        monkeypatch.setattr(metadata_stream, "WHOLE_BELOW", 0)
    return request.param


def _doc(snapshots: int, *, unique: bool = True) -> dict:
    """A v2 table of ``snapshots`` appends in one chain, with summaries as writers leave them (running totals)."""
    snaps = []
    for i in range(snapshots):
        summary = {"operation": "append", "added-data-files": "1", "added-records": "10", "total-delete-files": "0",
                   "total-records": str(10 * i + 10) if unique else "10", "total-files-size": str(1000 * i + 1000)}
        snaps.append({"snapshot-id": 7_000_000_000_000_000_000 + i, "sequence-number": i + 1,
                      "timestamp-ms": 1_700_000_000_000 + i * 1000, "schema-id": 0, "summary": summary,
                      "manifest-list": f"/w/t/metadata/snap-{i}-1-0b4f3c1e-8f0c-4d3e-9b1a-2c3d4e5f6a7b.avro",
                      **({"parent-snapshot-id": 7_000_000_000_000_000_000 + i - 1} if i else {})})
    head = snaps[-1]["snapshot-id"] if snaps else None
    return {"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": "/w/t",
            "last-sequence-number": snapshots, "last-updated-ms": 1_800_000_000_000, "last-column-id": 1,
            "current-schema-id": 0, "schemas": [{"schema-id": 0, "type": "struct", "fields": [
                {"id": 1, "name": "s", "required": False, "type": "string"}]}],
            "current-snapshot-id": head, "refs": {"main": {"snapshot-id": head, "type": "branch"}} if snaps else {},
            "snapshots": snaps, "metadata-log": [],
            "snapshot-log": [{"snapshot-id": s["snapshot-id"], "timestamp-ms": s["timestamp-ms"]} for s in snaps]}


def _both(tmp_path: Path, text: str | bytes):
    """What reading the file gives, and what ``json.loads`` then ``parse_metadata`` give: a model or an error."""
    path = tmp_path / "v1.metadata.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())

    def read():
        try:
            raw = read_metadata_file(_file_io(str(path)), str(path))
            return parse_metadata(raw, str(path)), version_of(raw)
        except MetadataError as exc:
            return exc.one_line()

    def standard():
        try:
            raw = json.loads(path.read_bytes())
        except ValueError as exc:
            return MetadataError(f"not valid JSON ({str(exc)[:200]})", file=str(path)).one_line()
        except RecursionError:
            return MetadataError("not valid JSON (nested too deeply)", file=str(path)).one_line()
        try:
            return parse_metadata(raw, str(path)), version_of(raw)
        except MetadataError as exc:
            return exc.one_line()

    return read(), standard()


@pytest.mark.parametrize("shape", ["compact", "indented", "reordered", "empty", "repeated summaries", "utf-16"])
def test_a_file_decodes_as_json_loads_and_parses_to_the_same_model(tmp_path, shape):
    doc = _doc(0 if shape == "empty" else 50, unique=shape != "repeated summaries")
    if shape == "reordered":
        doc = dict(reversed(list(doc.items())))
    text = json.dumps(doc, indent=2 if shape == "indented" else None)
    got, expected = _both(tmp_path, text.encode("utf-16") if shape == "utf-16" else text)
    assert not isinstance(expected, str), expected
    assert got == expected
    (md, _), (md_expected, _) = got, expected
    assert md.snapshots == md_expected.snapshots and md.snapshot_log == md_expected.snapshot_log
    assert [dict(s.summary) for s in md.snapshots] == [s["summary"] for s in doc["snapshots"]]
    if shape != "empty":
        assert md.snapshot_log[-1] == (doc["snapshots"][-1]["snapshot-id"], doc["snapshots"][-1]["timestamp-ms"])


def test_the_last_of_a_repeated_key_wins_as_in_json_loads(tmp_path):
    """The top level is walked by hand: a key written twice (``snapshots`` too) keeps its last value, in the
    place of its first."""
    one, two = json.dumps(_doc(3)["snapshots"]), json.dumps(_doc(5)["snapshots"])
    body = json.dumps(_doc(5))[1:-1]
    got, expected = _both(tmp_path, '{"snapshots": %s, %s, "snapshots": %s}' % (two, body, one))
    assert got == expected and len(got[0].snapshots) == 3


def _spliced(old: str, new: str) -> str:
    text = json.dumps(_doc(4))
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize("text", [
    pytest.param(json.dumps(_doc(3)) + " x", id="data after the object"),
    pytest.param(json.dumps(_doc(3))[:-1], id="cut short"),
    pytest.param(json.dumps(_doc(3)["snapshots"]), id="an array at the top"),
    pytest.param(_spliced('"snapshot-log": [', '"snapshot-log": [1, '), id="a log entry that is no object"),
    pytest.param(_spliced("}], \"metadata-log\"", "},], \"metadata-log\""), id="a trailing comma in snapshots"),
    pytest.param(_spliced('"snapshots": [', '"snapshots" ['), id="a missing colon"),
    pytest.param(_spliced('"sequence-number": 2,', '"sequence-number": 2 '), id="a missing comma in a snapshot"),
    pytest.param(_spliced('"snapshot-id": 7000000000000000001,', '"snapshot-id": "7000000000000000001",'),
                 id="an id written as a string"),
    pytest.param(_spliced('"timestamp-ms": 1700000002000,', '"timestamp-ms": NaN,'), id="NaN as a time"),
    pytest.param(_spliced('"sequence-number": 3,', '"sequence-number": %s,' % ("9" * 5000)), id="5000 digits"),
    pytest.param(_spliced('"sequence-number": 3,', '"sequence-number": -3,'), id="a negative sequence number"),
    pytest.param(_spliced('"summary": {"operation": "append"', '"summary": {"operation": ' + "[" * 100_000),
                 id="nested 100,000 deep inside a snapshot"),
    pytest.param(_spliced('"summary": {"operation": "append",', '"summary": [], "s": {"operation": "append",'),
                 id="a summary that is no object"),
    pytest.param(_spliced('"snapshot-id": 7000000000000000002,', '"snapshot-id": 7000000000000000001,'),
                 id="an id listed twice"),
    pytest.param("\ufeff" + json.dumps(_doc(2)), id="a byte order mark"),
    pytest.param(" \n" + json.dumps(_doc(2), indent=1) + "\n\n", id="whitespace around"),
    pytest.param(json.dumps(_doc(2)).replace("/w/t", "/w/\u00e9t\U0001F600"), id="non-ascii paths"),
])
def test_a_broken_or_unusual_file_fails_or_parses_exactly_as_before(tmp_path, text):
    """The first error in file order, with ``json.loads``' own message; or the same model."""
    got, expected = _both(tmp_path, text)
    assert got == expected


def test_a_snapshot_that_does_not_parse_is_the_one_named_though_the_later_ones_parsed(tmp_path):
    doc = _doc(4)
    doc["snapshots"][1]["timestamp-ms"] = 2 ** 64
    doc["snapshots"][3]["snapshot-id"] = True
    got, expected = _both(tmp_path, json.dumps(doc))
    assert got == expected
    assert "timestamp-ms: 18446744073709551616 is outside the long range" in got


def test_the_decoded_snapshots_are_compact_and_share_the_strings_they_repeat(tmp_path):
    path = tmp_path / "v1.metadata.json"
    path.write_text(json.dumps(_doc(20, unique=False)))
    raw = read_metadata_file(_file_io(str(path)), str(path))
    snapshots = raw["snapshots"]
    assert all(isinstance(s, Snapshot) for s in snapshots)
    assert len({id(s.summary["operation"]) for s in snapshots}) == 1
    assert len({id(k) for s in snapshots for k in s.summary if k == "total-records"}) == 1
    assert len({s.summary["total-files-size"] for s in snapshots}) == 20  # values that differ stay apart


def test_a_snapshot_keeps_under_1200_bytes_and_the_read_peaks_under_twice_the_file(tmp_path):
    """Counted by tracemalloc, not timed. On main a snapshot of this shape (570 bytes of JSON) kept 1,863 bytes:
    its decoded dicts stayed in ``MetadataFile.raw`` beside the model; the read peaked at 2,467 bytes a snapshot."""
    n = 5000
    path = tmp_path / "v1.metadata.json"
    path.write_text(json.dumps(_doc(n)))
    per_file = path.stat().st_size / n
    tracemalloc.start()
    try:
        loaded = load_metadata_path(str(path))
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(loaded.metadata.snapshots) == n
    assert kept / n < 1200, kept / n
    assert peak / n < 2 * per_file + 600, (peak / n, per_file)
