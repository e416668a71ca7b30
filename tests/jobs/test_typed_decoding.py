"""The typed decoding of ``jobs`` (msgspec, only the keys counted) against the standard library's reading of the same
lines: a line of the usual shape is decoded by msgspec, anything else (NaN, a byte order mark, a null where an
absent key means something else, a key of another type, invalid UTF-8 in a key never read) goes to the standard
library, and the report is the same either way."""
from __future__ import annotations

import copy
import json
import random

import pytest

from iceberg_lineage.jobs import JobsAggregator, jobs_of_events, read_jobs
from iceberg_lineage.jobs.decode import decode_keys
from tests.jobs.eventlog import generated_log, output, run_event

_ODD_VALUES = [None, 1, 1.0, True, "x", "", [], {}, [1], {"a": 1}, 10**30, "\ud800"]
_PATHS = [("eventType",), ("eventTime",), ("run",), ("run", "runId"), ("run", "facets"),
          ("run", "facets", "errorMessage"), ("run", "facets", "errorMessage", "message"), ("job",),
          ("job", "namespace"), ("job", "name"), ("inputs",), ("outputs",), ("inputs", 0), ("inputs", 0, "name"),
          ("outputs", 0), ("outputs", 0, "namespace"), ("outputs", 0, "facets"), ("outputs", 0, "facets", "version"),
          ("outputs", 0, "facets", "version", "datasetVersion"), ("outputs", 0, "outputFacets"),
          ("outputs", 0, "outputFacets", "outputStatistics"),
          ("outputs", 0, "outputFacets", "outputStatistics", "rowCount"),
          ("outputs", 0, "outputFacets", "outputStatistics", "size")]


def _odd_log(n: int = 3000, seed: int = 3) -> list[bytes]:
    """Events of the generated log with one key (or none) replaced by a value of another type or removed, and
    lines that only the standard library reads."""
    rng = random.Random(seed)
    base = [json.loads(line) for line in generated_log()[0]]
    lines = []
    for _ in range(n):
        event = copy.deepcopy(rng.choice(base))
        event["outputs"] = event["outputs"] or [output(f"t{rng.randrange(5)}", rng.randrange(100), 7,
                                                       str(rng.randrange(9)))]
        event["inputs"] = event["inputs"] or [{"namespace": "s3://lake", "name": f"in{rng.randrange(5)}"}]
        event["run"]["runId"] = f"r{rng.randrange(400)}"
        event["eventType"] = rng.choice(["START", "RUNNING", "COMPLETE", "FAIL", "ABORT", "complete", "OTHER"])
        *parents, last = rng.choice(_PATHS)
        node = event
        for key in parents:
            node = node[key] if isinstance(node, dict) and key in node or isinstance(node, list) and node else None
        if isinstance(node, dict) and rng.random() < 0.2:
            node.pop(last, None)
        elif isinstance(node, dict) or isinstance(node, list) and node:
            node[last] = rng.choice(_ODD_VALUES)
        text = json.dumps(event)
        draw = rng.random()
        if draw < 0.02:
            text = text.replace('"producer"', '"nan": NaN, "producer"')  # the standard library's extension
        elif draw < 0.04:
            text = "\ufeff" + text
        elif draw < 0.06:
            text = text.replace('"producer"', '"note": "d\u00e9j\u00e0 \u4e2d", "producer"')
        lines.append(text.encode("utf-8", "surrogatepass"))
    return lines


def _stdlib_only(lines: list[bytes]):
    """The report of the same lines each parsed by the standard library first (no typed decoding)."""
    parsed = []
    for raw in lines:
        try:
            parsed.append(json.loads(raw))
        except ValueError:
            parsed.append(raw)  # a bad line: read (and refused) the same way
    return jobs_of_events(parsed)


def test_both_readings_give_the_same_report(tmp_path):
    lines = _odd_log()
    typed = sum(decode_keys(line) is not None for line in lines)
    assert len(lines) // 4 < typed < len(lines) * 3 // 4  # both readings are exercised
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    report, expected = read_jobs(path), _stdlib_only(lines)
    assert report.bad_lines > 0 and len(report.jobs) > 1 and report.events > 1000
    assert report.jobs == expected.jobs and report.timeline == expected.timeline
    assert (report.events, report.ignored, report.duplicates, report.bad_lines) == (
        expected.events, expected.ignored, expected.duplicates, expected.bad_lines)
    assert [(b.line, b.reason) for b in report.bad_line_samples] == [
        (b.line, b.reason) for b in expected.bad_line_samples]


GOOD = run_event("COMPLETE", "r1", "j", 0, outputs=[output("t", 5, 50, "v1")])


@pytest.mark.parametrize("line, typed", [
    (json.dumps(GOOD).encode(), True),
    (json.dumps(GOOD).replace('"producer"', '"x": NaN, "producer"').encode(), False),
    (b"\xef\xbb\xbf" + json.dumps(GOOD).encode(), False),
    (json.dumps(GOOD).replace('"producer"', '"x": "\\ud800", "producer"').encode(), False),  # a lone surrogate
    (json.dumps(dict(GOOD, job={"namespace": "ns", "name": "\ud800"})).encode(), False),
    (json.dumps(GOOD).replace('"producer"', '"x": "d\u00e9j\u00e0", "producer"').encode(), True),
    (json.dumps(GOOD).replace('"eventType": "COMPLETE"', '"eventType": "START", "eventType": "COMPLETE"').encode(),
     True),
])
def test_a_line_msgspec_refuses_is_read_by_the_standard_library(line, typed):
    assert (decode_keys(line) is not None) is typed
    report = jobs_of_events([line])
    assert (report.bad_lines, report.jobs[0].completed, report.jobs[0].rows_written) == (0, 1, 5)


def test_invalid_utf8_in_a_key_never_read_is_still_a_bad_line():
    line = json.dumps(GOOD).replace('"producer"', '"x": "@", "producer"').encode().replace(b"@", b"\xff")
    assert decode_keys(line) is None
    report = jobs_of_events([line, json.dumps(GOOD)])
    assert [(b.line, b.reason) for b in report.bad_line_samples] == [(1, "not UTF-8")]


@pytest.mark.parametrize("key, value, rows", [
    ("facets", None, None),  # null facets: the statistics are not read (absent facets: read, without a version)
    ("facets", "absent", 5),
    ("outputFacets", None, None),
    ("rowCount", 5.0, None),  # not an integer: unknown
    ("rowCount", True, None),
])
def test_odd_output_keys_count_as_they_always_did(key, value, rows):
    event = copy.deepcopy(GOOD)
    out = event["outputs"][0]
    target = out["outputFacets"]["outputStatistics"] if key == "rowCount" else out
    if value == "absent":
        del target[key]
    else:
        target[key] = value
    report = jobs_of_events([json.dumps(event).encode()])
    assert (report.jobs[0].completed, report.jobs[0].rows_written) == (1, rows)
    assert jobs_of_events([event]).jobs == report.jobs


def _utf8_odd_log() -> list[bytes]:
    """The odd log without its lines of invalid UTF-8 (those send a whole block to the line-at-a-time reading)."""
    kept = []
    for line in _odd_log():
        try:
            line.decode()
        except UnicodeError:
            continue
        kept.append(line)
    return kept


@pytest.mark.parametrize("block", [64, 700, 1 << 18])
@pytest.mark.parametrize("tail", [b"\n", b""])
def test_a_file_read_a_block_at_a_time_is_read_as_lines_are(tmp_path, monkeypatch, block, tail):
    """Blocks of lines (each line decoded straight into its keys) give the report of the same lines added one at a
    time, with lines across block ends, odd lines, blank lines, a last line without its newline, and under a cap."""
    lines = _utf8_odd_log() + [b"", b"  ", b"[1, 2]"] + [line.encode() for line in generated_log()[0]]
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"\n".join(lines) + tail)
    monkeypatch.setattr("iceberg_lineage.jobs.source._BLOCK", block)
    blocks = []
    add_lines = JobsAggregator.add_lines
    monkeypatch.setattr(JobsAggregator, "add_lines", lambda self, *a: blocks.append(a[2]) or add_lines(self, *a))
    for cap in (None, max(map(len, lines)) - 1):
        report = read_jobs(path, max_line_bytes=cap)
        expected = jobs_of_events([line if cap is None or len(line) <= cap else b'"over"' for line in lines])
        assert report.jobs == expected.jobs and report.timeline == expected.timeline
        assert (report.events, report.ignored, report.duplicates, report.bad_lines) == (
            expected.events, expected.ignored, expected.duplicates, expected.bad_lines)
        over = [n for n, line in enumerate(lines, 1) if cap is not None and len(line) > cap]
        assert [(b.line, b.reason) for b in report.bad_line_samples if b.line not in over] == [
            (b.line, b.reason) for b in expected.bad_line_samples if b.line not in over]
    assert sum(b.count(b"\n") for b in blocks) > len(lines) // 2  # most lines were read a block at a time
