"""Hostile metadata, built for real: every case ends in one line naming the table and the file, with an exit code,
or in figures that are honest about what is unknown. Nothing here may allocate in proportion to a number it read.
"""
from __future__ import annotations

import bz2
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import threading
import tracemalloc
import zlib
from pathlib import Path

import fastavro
import pytest
import zstandard
from click.testing import CliRunner

from iceberg_lineage.cli import main
from iceberg_lineage.errors import ManifestTooLargeError
from iceberg_lineage.read import avro
from iceberg_lineage.read.metadata_json import parse_metadata
from iceberg_lineage.stats import table_history
from tests.support.fixture_tables import FIXTURES, copied_table
from tests.support.fixture_tables import EDITABLE_METADATA, EDITABLE_TABLE
from tests.support.fixture_tables import current_manifest as _current_manifest, current_metadata as _meta
from tests.support.scan import catalog_env, cli, write_table

TABLE = EDITABLE_TABLE
CURRENT = EDITABLE_METADATA
CLI = [sys.executable, "-m", "iceberg_lineage.cli"]
NAME = "t"  # the directory of the copy: the fixture's location is relative
RECORDED_DIR = "data/persistent/equality_deletes/warehouse/mydb/mytable/metadata"


def _limit_memory() -> None:
    """Run a child in 3 GB of address space: a regression fails the test instead of taking the machine."""
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


def stats(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENLINEAGE", "ICEBERG_LINEAGE"))}
    return subprocess.run([*CLI, "stats", *args], capture_output=True, text=True, timeout=120,
                          env={**base, **(env or {})}, preexec_fn=_limit_memory)


def stats_here(*args: str) -> subprocess.CompletedProcess:
    """The same entry point in this process, for cases that can neither hang nor take memory (a subprocess costs
    ~1.5 s of imports)."""
    result = CliRunner().invoke(main, ["stats", *args], prog_name="iceberg-lineage")
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)


@pytest.fixture
def table(tmp_path) -> Path:
    return copied_table(tmp_path, TABLE)


def _edit(table: Path, edit) -> None:
    doc = json.loads(_meta(table).read_text())
    edit(doc)
    _meta(table).write_text(json.dumps(doc))


def _recorded(manifest: Path) -> str:
    """The path the manifest list records (relative to where the writer ran): the file errors name."""
    return f"{RECORDED_DIR}/{manifest.name}"


def _error_line(proc: subprocess.CompletedProcess) -> str:
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


# -- item 9: last-sequence-number 2^62 ---------------------------------------------------------------------------

def test_a_huge_last_sequence_number_is_a_gap_counted_not_enumerated(sql_catalog, tmp_path):
    """The 2.6 KB metadata file that got ``scan --dry-run`` killed at 24 GB: the gap is computed as a range."""
    table = write_table(sql_catalog, "db.t", 2)
    path = Path(table.metadata_location.removeprefix("file://"))
    doc = json.loads(path.read_text())
    doc["last-sequence-number"] = 1 << 62
    path.write_text(json.dumps(doc))
    assert path.stat().st_size < 4096
    proc = cli("--dry-run", "--format", "json", "--no-progress", "--state", str(tmp_path / "s.db"),
               env=catalog_env(sql_catalog), cwd=tmp_path, preexec_fn=_limit_memory)
    assert proc.returncode == 0, proc.stderr
    # the dry run prints each snapshot's START and COMPLETE, and the scan's own run
    assert len(proc.stdout.splitlines()) == 2 * 2 + 2
    [gap] = json.loads(proc.stderr.splitlines()[-1])["gaps"]  # the summary goes to stderr
    assert (gap["table"], gap["count"]) == ("test.db.t", (1 << 62) - 2)
    assert gap["first_ms"] <= gap["last_ms"]


# -- item 10: decompression bombs ---------------------------------------------------------------------------------

def _header(schema: dict, codec: str) -> bytes:
    """An Avro container header for ``codec``, written without the codec's library (fastavro's writer needs it)."""
    head = io.BytesIO()
    fastavro.writer(head, schema, [], codec="null")  # header only: no records, no block
    parsed = fastavro.schemaless_reader(io.BytesIO(head.getvalue()), avro._HEADER_SCHEMA)
    parsed["meta"]["avro.codec"] = codec.encode()
    out = io.BytesIO()
    fastavro.schemaless_writer(out, avro._HEADER_SCHEMA, parsed)
    return out.getvalue()


def _compressor(codec: str):
    if codec == "bzip2":
        return bz2.BZ2Compressor(9)
    if codec == "zstandard":
        return zstandard.ZstdCompressor(level=3).compressobj()
    return zlib.compressobj(9, zlib.DEFLATED, -15)


def _bomb(manifest: Path, codec: str, records: int, inflated: int) -> None:
    """Replace a manifest by its own header and one block of ``records`` records that inflates to ``inflated``
    zero bytes, compressed a MiB at a time (the test never holds the inflated block)."""
    with open(manifest, "rb") as f:
        schema = fastavro.reader(f).writer_schema
    header = _header(schema, codec)
    sync = header[-16:]
    compressor = _compressor(codec)
    chunk = bytes(1 << 20)
    data = b"".join(compressor.compress(chunk) for _ in range(inflated >> 20)) + compressor.flush()
    block = io.BytesIO()
    block.write(_zigzag(records) + _zigzag(len(data)) + data + sync)
    manifest.write_bytes(header + block.getvalue())


def _zigzag(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def test_a_bzip2_bomb_stops_at_the_configured_cap(table):
    manifest = _current_manifest(table)
    _bomb(manifest, "bzip2", records=1000, inflated=16 << 20)
    assert manifest.stat().st_size < 8192
    proc = stats("--metadata", str(_meta(table)), "--format", "json",
                 env={"ICEBERG_LINEAGE__MANIFEST__MAX_BLOCK_BYTES": str(4 << 20)})
    assert proc.returncode == 1
    assert _error_line(proc) == (
        f"iceberg-lineage: error: table {NAME}, file {_recorded(manifest)}: an Avro block of 1000 record(s) takes more than "
        f"4194304 bytes (manifest.max_block_bytes is 4194304, and a record may take at most 1048576 bytes)"
    )


def test_a_deflate_bomb_stops_at_one_mib_per_declared_record(table):
    manifest = _current_manifest(table)
    _bomb(manifest, "deflate", records=2, inflated=16 << 20)
    proc = stats("--metadata", str(_meta(table)), "--format", "json")  # the default cap: 256 MiB
    assert proc.returncode == 1
    assert _error_line(proc).endswith(
        f"table {NAME}, file {_recorded(manifest)}: an Avro block of 2 record(s) takes more than 2097152 bytes "
        f"(manifest.max_block_bytes is 268435456, and a record may take at most 1048576 bytes)"
    )


@pytest.mark.parametrize("codec, inflated", [("deflate", 16 << 20), ("zstandard", 32 << 20)])
def test_the_cap_bounds_the_memory_of_the_read(table, monkeypatch, codec, inflated):
    """In process, the inflated bytes held at once stay near the cap, not the bomb's 16 or 32 MiB: each codec
    inflates incrementally (zstd through ``zstandard``'s stream reader) and stops past the cap."""
    manifest = _current_manifest(table)
    _bomb(manifest, codec, records=100, inflated=inflated)
    monkeypatch.setenv("ICEBERG_LINEAGE__MANIFEST__MAX_BLOCK_BYTES", str(2 << 20))
    avro.max_block_bytes.cache_clear()
    tracemalloc.start()
    try:
        with pytest.raises(ManifestTooLargeError, match="takes more than 2097152 bytes") as info:
            table_history(str(_meta(table)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        avro.max_block_bytes.cache_clear()
    assert info.value.file == _recorded(manifest)
    assert peak < 8 << 20


def test_a_zstd_manifest_reads_through_pyicebergs_zstandard(table):
    """fastavro alone cannot read zstd blocks here (it wants ``backports.zstd``); the reader inflates them with
    ``zstandard``, which PyIceberg already depends on, and gets the same figures as from the deflate original."""
    before = [(s.snapshot_id, s.data_files, s.records) for s in table_history(str(_meta(table)))]
    manifest = _current_manifest(table)
    with open(manifest, "rb") as f:
        reader = fastavro.reader(f)
        schema, records = reader.writer_schema, list(reader)
    header = _header(schema, "zstandard")
    body = io.BytesIO()
    for record in records:
        fastavro.schemaless_writer(body, schema, record)
    data = zstandard.ZstdCompressor().compress(body.getvalue())
    manifest.write_bytes(header + _zigzag(len(records)) + _zigzag(len(data)) + data + header[-16:])
    assert [(s.snapshot_id, s.data_files, s.records) for s in table_history(str(_meta(table)))] == before
    assert len(records) >= 1


# -- item 11: a block declaring more records than it has bytes -----------------------------------------------------

def _null_typed(schema: dict) -> dict:
    """The manifest schema with every leaf typed ``null``: names still those of a manifest entry, records 0 bytes."""
    def strip(t):
        if isinstance(t, dict) and t.get("type") == "record":
            return {**t, "fields": [{**f, "type": strip(f["type"])} for f in t["fields"]]}
        if isinstance(t, list):
            records = [x for x in t if isinstance(x, dict) and x.get("type") == "record"]
            return strip(records[0]) if records else "null"
        return "null"
    return strip(schema)


def test_a_manifest_declaring_ten_million_entries_in_a_few_kb_is_corrupt(table):
    """The lying manifest: 10 M declared records of a schema whose records take no bytes. It took 110 s and printed
    ``data_files: 4`` next to ``file_sizes.count: 10000003``."""
    manifest = _current_manifest(table)
    with open(manifest, "rb") as f:
        schema = fastavro.reader(f).writer_schema
    head = io.BytesIO()
    fastavro.writer(head, _null_typed(schema), [])
    header = head.getvalue()
    padding = bytes(2048)
    manifest.write_bytes(header + _zigzag(10_000_000) + _zigzag(len(padding)) + padding + header[-16:])
    assert manifest.stat().st_size < 8192
    proc = stats("--metadata", str(_meta(table)), "--format", "json")
    assert proc.returncode == 1
    assert _error_line(proc) == (
        f"iceberg-lineage: error: table {NAME}, file {_recorded(manifest)}: corrupt Avro data "
        f"(ValueError: block declares 10000000 records in 2048 bytes)"
    )


# -- item 12: values that do not fit --------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "edit,reason",
    [
        (lambda d: d["snapshots"][0].update({"snapshot-id": 1 << 64}),
         "invalid table metadata: snapshot-id: 18446744073709551616 is outside the long range"),
        (lambda d: d["snapshots"][0].update({"sequence-number": float("inf")}),
         "invalid table metadata: sequence-number: expected an integer, got inf"),
        (lambda d: d["snapshots"][0].update({"timestamp-ms": -(1 << 63) - 1}),
         "invalid table metadata: timestamp-ms: -9223372036854775809 is outside the long range"),
        (lambda d: d.update({"last-sequence-number": -3}), "invalid table metadata: last-sequence-number: -3 is negative"),
        (lambda d: d["refs"]["main"].update({"snapshot-id": 1 << 63}),
         "invalid table metadata: ref main: 9223372036854775808 is outside the long range"),
        (lambda d: d["snapshots"].append(dict(d["snapshots"][0])),
         "invalid table metadata: snapshot id {sid} is listed twice"),
    ],
    ids=["id-above-2^63", "infinity", "timestamp-below-long", "negative-count", "ref-above-long", "duplicate-id"],
)
def test_values_outside_the_long_range_are_one_line_errors(table, edit, reason):
    _edit(table, edit)
    sid = json.loads(_meta(table).read_text())["snapshots"][0]["snapshot-id"]
    proc = stats_here("--metadata", str(_meta(table)), "--format", "json")
    assert proc.returncode == 1
    assert _error_line(proc) == f"iceberg-lineage: error: table {NAME}, file {_meta(table)}: {reason.format(sid=sid)}"


def test_infinity_written_as_json_is_a_one_line_error(table):
    """``Infinity`` is what the attack wrote: Python's JSON reader takes it as a float."""
    _meta(table).write_text(_meta(table).read_text().replace('"sequence-number" : 1,', '"sequence-number" : Infinity,', 1))
    assert "Infinity" in _meta(table).read_text()
    proc = stats_here("--metadata", str(_meta(table)), "--format", "json")
    assert proc.returncode == 1
    assert _error_line(proc).endswith(f"file {_meta(table)}: invalid table metadata: sequence-number: expected an "
                                      "integer, got inf")


def test_a_5000_digit_integer_is_a_one_line_error(table):
    _meta(table).write_text(_meta(table).read_text().replace('"last-sequence-number" : ', '"last-sequence-number" : '
                                                              + "9" * 5000, 1))
    proc = stats_here("--metadata", str(_meta(table)), "--format", "json")
    assert proc.returncode == 1
    assert _error_line(proc).startswith(f"iceberg-lineage: error: file {_meta(table)}: not valid JSON (Exceeds the limit")


def test_absurd_or_negative_summary_counts_become_unknown_with_the_reason(table):
    def edit(d):
        current = next(s for s in d["snapshots"] if s["snapshot-id"] == d["current-snapshot-id"])
        current["summary"].update({"total-records": "1" + "0" * 30, "added-data-files": "-4", "total-data-files": "²"})

    _edit(table, edit)
    proc = stats_here("--metadata", str(_meta(table)), "--format", "json", "--depth", "summary")
    assert proc.returncode == 0, proc.stderr
    snap = json.loads(proc.stdout)["snapshots"][0]
    assert (snap["records"], snap["added_data_files"], snap["data_files"]) == (None, None, None)
    assert snap["sources"]["records"] == (
        "invalid summary total-records: '1000000000000000000000000000000' is not a count in 0..2^63-1")
    assert snap["sources"]["added_data_files"] == "invalid summary added-data-files: '-4' is not a count in 0..2^63-1"
    assert snap["sources"]["data_files"] == "invalid summary total-data-files: '²' is not a count in 0..2^63-1"
    deep = json.loads(stats_here("--metadata", str(_meta(table)), "--format", "json").stdout)["snapshots"][0]
    # read deeper, every figure is known again, from the cheapest source that holds it
    assert (deep["records"], deep["sources"]["records"]) == (6, "manifest_list")
    assert (deep["data_files"], deep["sources"]["data_files"]) == (deep["file_sizes"]["count"], "manifest_list")


# -- item 20: hostile or odd values -----------------------------------------------------------------------------

@pytest.mark.parametrize("ndv", ["²", "9" * 5000, "-1"])
def test_a_hostile_ndv_is_bad_data_not_usage(table, ndv):
    def edit(d):
        d["statistics"] = [{
            "snapshot-id": d["current-snapshot-id"], "statistics-path": "s.puffin", "file-size-in-bytes": 1,
            "file-footer-size-in-bytes": 1,
            "blob-metadata": [{"type": "apache-datasketches-theta-v1", "snapshot-id": d["current-snapshot-id"],
                               "sequence-number": 1, "fields": [1], "properties": {"ndv": ndv}}],
        }]

    _edit(table, edit)
    proc = stats_here("--metadata", str(_meta(table)), "--format", "json")
    assert proc.returncode == 1
    shown = repr(ndv) if len(repr(ndv)) <= 40 else repr(ndv)[:37] + "..."
    assert _error_line(proc) == (f"iceberg-lineage: error: table {NAME}, file {_meta(table)}: invalid table metadata: "
                                 f"statistics blob ndv: {shown} is not a count")


def test_http_metadata_is_a_one_line_usage_error():
    proc = stats_here("--metadata", "http://127.0.0.1:9/t/metadata/v1.metadata.json", "--format", "json")
    assert proc.returncode == 2
    assert _error_line(proc).startswith(
        "iceberg-lineage: error: file http://127.0.0.1:9/t/metadata/v1.metadata.json: http:// locations cannot be read"
    )


def test_hdfs_without_a_hadoop_client_is_one_line(tmp_path):
    proc = stats("--metadata", "hdfs://nn:8020/t/metadata/v1.metadata.json", "--format", "json",
                 env={"JAVA_HOME": str(tmp_path), "HADOOP_HOME": str(tmp_path)})
    assert proc.returncode == 1
    assert _error_line(proc) == (
        f"iceberg-lineage: error: file hdfs://nn:8020/t/metadata/v1.metadata.json: HDFS needs a Hadoop client: "
        f"no libjvm.so under JAVA_HOME ({tmp_path}); set JAVA_HOME to a JDK"
    )


# -- item 7 (regular files only) and item 21 (relocation errors) ---------------------------------------------------

def _feed_nothing_later(fifo: Path) -> threading.Thread:
    """Unblock a reader that did open the pipe (the old behaviour) after the test gave up, so no thread hangs."""
    def unblock():
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
        except OSError:
            pass  # nobody reading: nothing to unblock
    return threading.Thread(target=unblock, daemon=True)


def test_a_named_pipe_as_metadata_file_is_a_one_line_error(tmp_path):
    fifo = tmp_path / "v1.metadata.json"
    os.mkfifo(fifo)
    proc = stats("--metadata", str(fifo), "--format", "json")
    assert proc.returncode == 1
    assert _error_line(proc) == (
        f"iceberg-lineage: error: file {fifo}: cannot read metadata file: {fifo} is a named pipe, not a regular file"
    )


def test_a_named_pipe_as_manifest_is_a_one_line_error(table):
    manifest = _current_manifest(table)
    manifest.unlink()
    os.mkfifo(manifest)
    try:
        proc = stats("--metadata", str(_meta(table)), "--format", "json")
    finally:
        _feed_nothing_later(manifest).start()
    assert proc.returncode == 1
    assert _error_line(proc) == (
        f"iceberg-lineage: error: table {NAME}, file {_recorded(manifest)}: cannot read manifest: {manifest} is a named pipe, "
        "not a regular file"
    )


def test_not_found_under_relocate_names_both_paths(tmp_path):
    """A table whose files are recorded under /written/by/spark, relocated to a copy that lacks its manifest list."""
    copy = tmp_path / "copy"
    shutil.copytree(FIXTURES / TABLE, copy)
    doc = json.loads((copy / "metadata" / CURRENT).read_text())
    current = next(s for s in doc["snapshots"] if s["snapshot-id"] == doc["current-snapshot-id"])
    listed = Path(current["manifest-list"]).name
    for s in doc["snapshots"]:
        s["manifest-list"] = "/written/by/spark/t/metadata/" + Path(s["manifest-list"]).name
    (copy / "metadata" / CURRENT).write_text(json.dumps(doc))
    (copy / "metadata" / listed).unlink()
    proc = stats_here("--metadata", str(copy / "metadata" / CURRENT), "--format", "json",
                 "--relocate", f"/written/by/spark/t={copy}")
    assert proc.returncode == 1
    assert _error_line(proc) == (
        f"iceberg-lineage: error: table copy, file /written/by/spark/t/metadata/{listed}: manifest list not found at "
        f"{copy}/metadata/{listed} (relocated from the recorded path)"
    )


# -- item 8: refs over many branches ----------------------------------------------------------------------------------

def _long_chain(snapshots: int, branches: int) -> dict:
    snaps = [{"snapshot-id": i, "sequence-number": i, "timestamp-ms": 1000 + i, "manifest-list": f"/t/{i}.avro",
              "summary": {"operation": "append"}, **({"parent-snapshot-id": i - 1} if i > 1 else {})}
             for i in range(1, snapshots + 1)]
    refs = {"main": {"snapshot-id": snapshots, "type": "branch"}, "first": {"snapshot-id": 1, "type": "tag"}}
    refs |= {f"feature-{b:05d}": {"snapshot-id": snapshots - b % 3, "type": "branch"} for b in range(branches)}
    return {"format-version": 2, "table-uuid": "u", "location": "/t", "last-sequence-number": snapshots,
            "last-updated-ms": 1, "schemas": [{"schema-id": 0, "type": "struct", "fields": []}],
            "current-schema-id": 0, "snapshots": snaps, "current-snapshot-id": snapshots, "refs": refs}


def test_ten_thousand_branches_over_a_long_chain_are_linear():
    """Each chain walked once; snapshots with the same branches share one tuple (it took 51 s and 1.76 GB)."""
    md = parse_metadata(_long_chain(2000, 10_000), "/t/metadata/v1.metadata.json")
    tracemalloc.start()
    try:
        refs = md.refs_by_snapshot()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(refs) == 2000
    everything = sorted(md.refs)
    assert list(refs[1]) == everything and list(refs[1997]) == [n for n in everything if n != "first"]
    assert len(refs[2000]) == 1 + 3334  # main and the branches at the head
    assert len({id(refs[i]) for i in range(2, 1998)}) == 1  # one shared tuple down the chain
    assert peak < 8 << 20


def test_refs_of_a_parent_cycle_still_cover_the_cycle():
    doc = _long_chain(5, 2)
    doc["snapshots"][0]["parent-snapshot-id"] = 5  # the oldest points at the newest
    refs = parse_metadata(doc, "/t/metadata/v1.metadata.json").refs_by_snapshot()
    assert {sid: names for sid, names in refs.items()} == {
        sid: tuple(sorted({"feature-00000", "feature-00001", "main"} | ({"first"} if sid == 1 else set())))
        for sid in range(1, 6)
    }


def _spread(snapshots: int, branches: int) -> dict:
    """The audit's shape: ``branches`` branches spread along one chain (each tip a new set of names below it)."""
    doc = _long_chain(snapshots, 0)
    doc["refs"] |= {f"b{b:05d}": {"snapshot-id": 1 + b * snapshots // branches, "type": "branch"}
                    for b in range(branches)}
    return doc


def _brute_refs(doc: dict, wanted: set[int]) -> dict[int, tuple[str, ...]]:
    """The independent answer: each branch's history walked whole, a tag at its own snapshot."""
    parent = {s["snapshot-id"]: s.get("parent-snapshot-id") for s in doc["snapshots"]}
    found: dict[int, set[str]] = {}
    for name, ref in doc["refs"].items():
        sid, seen = ref["snapshot-id"], set()
        while sid in parent and sid not in seen:
            seen.add(sid)
            if sid in wanted:
                found.setdefault(sid, set()).add(name)
            if ref["type"] != "branch":
                break
            sid = parent[sid]
    return {sid: tuple(sorted(names)) for sid, names in found.items()}


def test_refs_of_a_few_snapshots_stay_linear_with_ten_thousand_branches_spread_along_a_chain():
    """refs_by_snapshot builds one set per branch tip, 50 million names here; the walk for the current snapshot,
    the oldest and one between holds none of them."""
    doc = _spread(20_000, 10_000)
    md = parse_metadata(doc, "/t/metadata/v1.metadata.json")
    wanted = {20_000, 1, 10_001}
    tracemalloc.start()
    try:
        refs = md.refs_of(wanted)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert refs == _brute_refs(doc, wanted)
    assert len(refs[1]) == 10_002 and refs[20_000] == ("main",) and len(refs[10_001]) == 1 + 5_000
    assert peak < 16 << 20, peak


@pytest.mark.parametrize("wanted", [{1}, {3}, {5}, {1, 2, 3, 4, 5}, {2, 4}])
def test_refs_of_agree_with_refs_by_snapshot_on_a_parent_cycle(wanted):
    doc = _long_chain(5, 2)
    doc["snapshots"][0]["parent-snapshot-id"] = 5
    doc["refs"]["side"] = {"snapshot-id": 3, "type": "branch"}
    md = parse_metadata(doc, "/t/metadata/v1.metadata.json")
    every = md.refs_by_snapshot()
    assert md.refs_of(wanted) == {sid: every[sid] for sid in wanted if sid in every}
