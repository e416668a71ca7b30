"""``iceberg-lineage jobs`` on one million generated events across 1,000 jobs, against a baseline measured in the
same run on the same file: reading it and decoding every line, whole, with the JSON decoder ``jobs`` uses (msgspec:
what any reader of JSON Lines with that decoder pays). A faster decoder alone moves both sides; what ``jobs`` gains
is decoding only the keys it counts (``iceberg_lineage/jobs/decode.py``).

The log interleaves up to ``--concurrency`` runs at a time (START, a RUNNING with an output's statistics for a third
of the runs, then COMPLETE / FAIL / ABORT at 94 / 5 / 1 %; 0.5 % of the runs never end), each event ~700 bytes
with an input, an output, a version facet and ``outputStatistics`` as our hook writes them. Times are the best of
``--repeat`` interleaved passes, in CPU time of this process (both sides are single-threaded and read a file
the page cache holds: CPU time is what other work on the machine disturbs least); peak memory is tracemalloc's peak over one more pass of each (Python allocations only), and the
process's peak RSS is printed too. The report's totals are checked against the generator's.

    .venv/bin/python benchmarks/jobs_million.py [--events 1000000] [--jobs 1000] [--concurrency 2000] [--repeat 2]
        [--breakdown] [--json]

``--breakdown`` also times, in the same interleaved passes, what any ``jobs`` pays before its fold: the file read a
block at a time with the keys decoded (``jobs``'s reading without the fold), and that plus parsing each
``eventTime``; the ratio of the second is what ``jobs`` would reach if pairing runs and counting cost nothing.

``--json`` prints one line for ``benchmarks/report.py``: ``{"row", "ratio", "baseline", "goal"}`` (ratio: the
baseline's time over jobs's, so higher is faster; the goal is at least 0.8).
"""
from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path

import msgspec

GOAL = 0.8

_EVENT = ('{"eventType": "%s", "eventTime": "2026-03-%02dT%02d:%02d:%02d.%03dZ", "producer": "https://example.com/gen", '
          '"schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent", '
          '"run": {"runId": "%s", "facets": {%s}}, "job": {"namespace": "bench", "name": "pipeline_%04d.step"}, '
          '"inputs": [{"namespace": "s3://lake", "name": "raw/source_%04d", "facets": {}}], '
          '"outputs": [{"namespace": "s3://lake", "name": "curated/table_%04d", "facets": {"version": '
          '{"_producer": "https://example.com/gen", "_schemaURL": "x", "datasetVersion": "%d"}}, "outputFacets": %s}]}')
_STATS = ('{"outputStatistics": {"_producer": "https://example.com/gen", "_schemaURL": "https://openlineage.io/spec/'
          'facets/1-0-2/OutputStatisticsOutputDatasetFacet.json", "rowCount": %d, "size": %d, "fileCount": 1}}')
_ERROR = ('"errorMessage": {"_producer": "https://example.com/gen", "_schemaURL": "x", "message": "stage %d failed", '
          '"programmingLanguage": "python"}')


def _line(kind: str, second: int, run_id: str, job: int, version: int, stats: str, error: str = "") -> str:
    day, rest = divmod(second, 86400)
    return _EVENT % (kind, 1 + day % 28, rest // 3600, rest // 60 % 60, rest % 60, second % 1000, run_id, error,
                     job, job, job, version, stats) + "\n"


def generate(path: Path, events: int, jobs: int, concurrency: int, seed: int = 1) -> dict[str, int]:
    """Write the log; return the truth (events, runs by outcome, rows written by finished runs)."""
    rng = random.Random(seed)
    truth = {"events": 0, "completed": 0, "failed": 0, "aborted": 0, "open": 0, "rows": 0}
    running: list[tuple[str, int, int]] = []  # run id, job, version
    second = version = 0
    with open(path, "w") as f:
        while truth["events"] < events:
            second += 1
            if len(running) < concurrency and truth["events"] + 3 <= events:
                run_id, job = str(uuid.UUID(int=rng.getrandbits(128), version=4)), rng.randrange(jobs)
                version += 1
                f.write(_line("START", second, run_id, job, version, "{}"))
                truth["events"] += 1
                if rng.random() < 0.005:
                    truth["open"] += 1
                else:
                    running.append((run_id, job, version))
                continue
            if not running:
                break
            run_id, job, ver = running.pop(rng.randrange(len(running)))
            rows = rng.randrange(1, 10_000)
            if rng.random() < 1 / 3 and truth["events"] + 2 <= events:
                f.write(_line("RUNNING", second, run_id, job, ver, _STATS % (rows, rows * 50)))
                truth["events"] += 1
            draw = rng.random()
            kind, outcome = ("COMPLETE", "completed") if draw < 0.94 else ("FAIL", "failed") if draw < 0.99 else (
                "ABORT", "aborted")
            error = _ERROR % ver if kind == "FAIL" else ""
            f.write(_line(kind, second, run_id, job, ver, _STATS % (rows, rows * 50), error))
            truth["events"] += 1
            truth[outcome] += 1
            truth["rows"] += rows
    truth["open"] += len(running)
    return truth


def baseline(path: Path) -> int:
    decode = msgspec.json.Decoder().decode
    n = 0
    with open(path, "rb") as f:
        for line in f:
            decode(line)
            n += 1
    return n


def keys_only(path: Path, parse_time: bool = False) -> int:
    """``jobs``'s reading (blocks of lines, the keys decoded) without its fold; with each ``eventTime`` parsed."""
    from iceberg_lineage.jobs.eventtime import event_ms
    from iceberg_lineage.jobs.decode import decode_utf8
    from iceberg_lineage.jobs.source import capped_blocks, open_events

    n = 0
    with open_events(path) as stream:
        for block in capped_blocks(stream, 1 << 20):
            for line in block.split(b"\n")[:-1]:
                keys = decode_utf8(line)
                if parse_time:
                    event_ms(keys.eventTime)
                n += 1
    return n


def best_times(fns, repeat: int) -> list[tuple[float, object]]:
    """The best time and last result of each function, their passes interleaved: a machine busy with other work
    slows both sides alike."""
    best = [(float("inf"), None) for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            started = time.process_time()
            result = fn()
            best[i] = (min(best[i][0], time.process_time() - started), result)
    return best


def peak_mib(fn) -> float:
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--breakdown", action="store_true", help="also time the reading without the fold")
    parser.add_argument("--json", action="store_true", help="one line for benchmarks/report.py")
    args = parser.parse_args(argv)
    from iceberg_lineage.jobs import read_jobs

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "events.jsonl"
        started = time.perf_counter()
        truth = generate(path, args.events, args.jobs, args.concurrency)
        print(f"generated {truth['events']:,} events ({path.stat().st_size / 2**20:.0f} MiB) of {args.jobs:,} jobs "
              f"in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        extra = [lambda: keys_only(path), lambda: keys_only(path, parse_time=True)] if args.breakdown else []
        (base_s, lines), (jobs_s, report), *floors = best_times(
            [lambda: baseline(path), lambda: read_jobs(path), *extra], args.repeat)
        base_peak, jobs_peak = peak_mib(lambda: baseline(path)), peak_mib(lambda: read_jobs(path))
    totals = {state: sum(getattr(j, state) for j in report.jobs) for state in ("completed", "failed", "aborted", "open")}
    assert lines == report.events == truth["events"] and report.bad_lines == 0, (lines, report.events)
    assert totals == {k: truth[k] for k in totals}, (totals, truth)
    assert sum(j.rows_written or 0 for j in report.jobs) == truth["rows"]
    result = {
        "events": report.events, "jobs": len(report.jobs), "open_runs": totals["open"],
        "baseline_events_per_s": round(lines / base_s), "jobs_events_per_s": round(report.events / jobs_s),
        "jobs_time_vs_baseline": round(jobs_s / base_s, 2), "speed_vs_baseline": round(base_s / jobs_s, 2),
        "baseline_peak_mib": round(base_peak, 2), "jobs_peak_mib": round(jobs_peak, 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    for name, (seconds, n) in zip(("keys_decoded_only", "keys_and_event_time_only"), floors):
        assert n == lines
        result[f"speed_vs_baseline_{name}"] = round(base_s / seconds, 2)
    if args.json:
        print(json.dumps({"row": f"jobs, {report.events:,} events", "ratio": result["speed_vs_baseline"],
                          "baseline": "read + decode every line (msgspec)", "goal": GOAL, "higher_is_better": True,
                          "detail": f"jobs peak {result['jobs_peak_mib']} MiB"}))
    else:
        print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
