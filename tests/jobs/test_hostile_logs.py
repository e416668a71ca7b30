"""Hostile event logs for ``jobs``: an over-long line (plain or inflated from gzip) is a bad line read in bounded
memory, only regular files or ``-`` are read (a device never ends, a FIFO blocks at open), times outside years
1..9999 are bad lines, and a job of one run costs little memory."""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tracemalloc
import zlib

import pytest
from click.testing import CliRunner

from iceberg_lineage.cli import main
from iceberg_lineage.jobs import JobsAggregator, jobs_of_events, read_jobs
from tests.jobs.eventlog import generated_log, run_event

GOOD = json.dumps(run_event("COMPLETE", "r1", "j", 0))


def _jobs(*args: str, **kwargs):
    return CliRunner().invoke(main, ["jobs", "--format", "json", *args], **kwargs)


def test_a_line_over_the_cap_is_a_bad_line_and_the_rest_counts(tmp_path):
    path = tmp_path / "events.jsonl"
    long_event = json.dumps(run_event("COMPLETE", "r2" + "x" * 500, "j", 1))
    path.write_text("\n".join([GOOD, long_event, GOOD.replace("r1", "r3")]) + "\n")
    report = read_jobs(path, max_line_bytes=len(GOOD) + 1)  # a line exactly at the cap (newline aside) is read
    assert [(b.line, b.reason) for b in report.bad_line_samples] == [
        (2, f"longer than jobs.max_line_bytes ({len(GOOD) + 1:,} bytes)")]
    assert (report.events, report.jobs[0].completed) == (2, 2)
    assert read_jobs(path, max_line_bytes=len(GOOD)).jobs[0].completed == 2  # the newline does not count
    assert read_jobs(path, max_line_bytes=len(GOOD) - 1).bad_lines == 3


def test_the_cap_is_a_setting(tmp_path, monkeypatch):
    path = tmp_path / "events.jsonl"
    path.write_text(GOOD + "\n")
    assert json.loads(_jobs("--events", str(path)).stdout)["bad_lines"] == 0
    monkeypatch.setenv("ICEBERG_LINEAGE__JOBS__MAX_LINE_BYTES", "10")
    result = _jobs("--events", str(path))
    assert result.exit_code == 0 and json.loads(result.stdout)["bad_lines"] == 1
    assert f"{path}:1: longer than jobs.max_line_bytes (10 bytes)" in result.stderr


def test_a_gzip_inflating_to_one_huge_line_is_read_in_bounded_memory(tmp_path):
    """64 MiB of one line inflated from 64 KiB of gzip, under a 1 MiB cap: Python's peak allocation stays a few
    MiB (the same bound holds for the 3 GiB line of the audit, only slower)."""
    path = tmp_path / "bomb.jsonl.gz"
    with gzip.open(path, "wb", compresslevel=9) as f:
        for _ in range(64):
            f.write(b"[" * (1 << 20))
        f.write(b"\n" + GOOD.encode() + b"\n")
    assert path.stat().st_size < 1 << 20
    tracemalloc.start()
    try:
        report = read_jobs(path, max_line_bytes=1 << 20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, peak
    assert (report.bad_lines, report.jobs[0].completed) == (1, 1)
    assert report.bad_line_samples[0].reason.startswith("longer than jobs.max_line_bytes")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_device_is_refused():
    result = _jobs("--events", "/dev/zero")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "iceberg-lineage: error: file /dev/zero: not a regular file (a device or a FIFO); give '-' to read standard input"]


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "events.fifo"
    os.mkfifo(fifo)
    result = _jobs("--events", str(fifo))  # opening it would block until a writer came
    assert result.exit_code == 2 and "not a regular file" in result.stderr


def test_standard_input_stays_readable():
    result = subprocess.run([sys.executable, "-m", "iceberg_lineage.cli", "jobs", "--events", "-", "--format", "json"],
                            input=GOOD + "\n", capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and json.loads(result.stdout)["jobs"][0]["completed"] == 1, result.stderr


@pytest.mark.parametrize("when", ["9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00", "10000-01-01T00:00:00Z",
                                  "0000-12-31T00:00:00Z"])
def test_a_time_outside_years_1_to_9999_is_a_bad_line(tmp_path, when):
    path = tmp_path / "events.jsonl"
    odd = dict(run_event("COMPLETE", "r2", "j", 0), eventTime=when)
    path.write_text("\n".join([GOOD, json.dumps(odd)]) + "\n")
    result = _jobs("--events", str(path))
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["bad_lines"], doc["jobs"][0]["completed"]) == (1, 1)


def test_the_ends_of_the_calendar_are_counted():
    aggregator = JobsAggregator()
    aggregator.add(dict(run_event("COMPLETE", "r1", "a", 0), eventTime="0001-01-01T00:00:00Z"))
    aggregator.add(dict(run_event("COMPLETE", "r2", "b", 0), eventTime="9999-12-31T23:59:59.999Z"))
    report = aggregator.report()
    assert [j.completed for j in report.jobs] == [1, 1] and sum(b.completed for b in report.timeline) == 2
    assert report.timeline[0].start.year == 1


def test_a_job_of_one_timed_run_costs_little_memory():
    """The duration sketch is sparse: 2,000 jobs of one START and one COMPLETE each take under 2 KiB a job (a dense
    9 KiB array per job made 100,000 jobs take 1.1 GB)."""
    events = [run_event(kind, f"r{n}", f"job{n}", n + (kind == "COMPLETE")) for n in range(2000)
              for kind in ("START", "COMPLETE")]
    aggregator = JobsAggregator(recent_runs=2)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for event in events:
            aggregator.add(event)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held / 2000 < 2048, held / 2000
    assert [j.duration_p50_s for j in aggregator.report().jobs] == [pytest.approx(1.0, rel=0.01)] * 2000


def test_the_json_written_a_job_at_a_time_is_the_report():
    lines, _ = generated_log()
    report = jobs_of_events(lines, max_failure_rate="5%")
    assert "".join(report.json_chunks()) == json.dumps(report.to_json())
    empty = jobs_of_events([])
    assert json.loads("".join(empty.json_chunks())) == empty.to_json()


def _line_by_line(path) -> tuple[int, int, list[tuple[int, str]]]:
    """Events and bad lines of a gzip log read with ``readline``, the way ``jobs`` read before it read blocks."""
    aggregator = JobsAggregator()
    n = 0
    with gzip.open(path, "rb") as stream:
        try:
            for n, line in enumerate(iter(stream.readline, b""), 1):
                aggregator.add_line(str(path), n, line)
        except (OSError, EOFError, zlib.error) as exc:
            aggregator.bad(str(path), n + 1, f"unreadable from here on ({type(exc).__name__}: {exc})")
    report = aggregator.report()
    return report.events, report.bad_lines, [(b.line, b.reason) for b in report.bad_line_samples]


@pytest.mark.parametrize("damage", ["truncated", "corrupt"])
def test_a_broken_gzip_counts_the_lines_a_line_by_line_reading_counted(tmp_path, damage):
    """Blocks of a gzip stream are read at ``readline``'s granularity: what the error loses is what it lost."""
    lines, _ = generated_log()
    data = gzip.compress(("\n".join(lines * 40) + "\n").encode(), compresslevel=1)
    middle = len(data) // 2
    if damage == "truncated":
        data = data[:middle]
    else:
        data = data[:middle] + b"\xff" * 4096 + data[middle + 4096:]  # zlib fails mid-stream: an invalid block type
    path = tmp_path / "events.jsonl.gz"
    path.write_bytes(data)
    report = read_jobs(path)
    expected = _line_by_line(path)
    assert (report.events, report.bad_lines, [(b.line, b.reason) for b in report.bad_line_samples]) == expected
    assert 0 < report.events < len(lines) * 40 and report.bad_lines >= 1
    unreadable = [b.reason for b in report.bad_line_samples if b.reason.startswith("unreadable from here on")]
    assert unreadable and ("EOFError" if damage == "truncated" else "error: Error -3") in unreadable[0]
