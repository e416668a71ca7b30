"""Latency the hook adds to a commit: a 10-row append to a SQLite-catalog table, with and without ``observe``.

One SQLite catalog database, two catalog objects on it: one observed (events to a JSON Lines file, the embedded
default), one plain; each appends to its own table, so both tables grow alike. Commits alternate (hooked/plain,
then plain/hooked) in one run, so drift in the machine affects both sides equally. Two measurements:

* steady: events are built and written by the background thread while the next commits run (what a job sees;
  that thread's CPU time slows whichever commit runs next, hooked or plain, so about half of it shows as added);
* commit path: the queue is drained, untimed, after every hooked commit, so only the work done in the user's
  thread counts and no event is built while a plain commit runs.

It also prints the time the reporter's ``before_commit`` and ``after_commit`` take in the user's thread, which the
machine's noise does not blur.

Target: median added latency <= 5% of the plain commit's median.

    .venv/bin/python benchmarks/hook_overhead.py [--commits 200] [--warmup 10]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

TARGET = 0.05


def setup(root: Path):
    import pyarrow as pa
    from openlineage.client import OpenLineageClient
    from openlineage.client.transport.file import FileConfig, FileTransport
    from pyiceberg.catalog.sql import SqlCatalog

    from iceberg_lineage import hook

    (root / "warehouse").mkdir()
    props = {"uri": f"sqlite:///{root}/catalog.db", "warehouse": f"file://{root}/warehouse"}
    plain, hooked = SqlCatalog("bench", **props), SqlCatalog("bench", **props)
    plain.create_namespace("db")
    data = pa.table({"id": pa.array(range(10), pa.int64()), "v": pa.array([f"row {i}" for i in range(10)])})
    tables = {"plain": plain.create_table("db.plain", data.schema), "hooked": hooked.create_table("db.hooked", data.schema)}
    client = OpenLineageClient(transport=FileTransport(FileConfig(log_file_path=str(root / "events.jsonl"), append=True)))
    hook.observe(hooked, client=client)
    return tables, data


def time_hook_methods() -> list[float]:
    """Wrap the reporter's in-thread methods to record their duration per commit (seconds)."""
    from iceberg_lineage.hook import OpenLineageMetricsReporter as Reporter

    spent: list[float] = []
    before, after = Reporter.before_commit, Reporter.after_commit

    def timed_before(self, table, updates):
        started = time.perf_counter()
        result = before(self, table, updates)
        spent.append(time.perf_counter() - started)
        return result

    def timed_after(self, outcome):
        started = time.perf_counter()
        after(self, outcome)
        spent[-1] += time.perf_counter() - started

    Reporter.before_commit, Reporter.after_commit = timed_before, timed_after
    return spent


def measure(tables, data, commits: int, warmup: int, drain: bool) -> dict[str, list[float]]:
    from iceberg_lineage.runs import flush_all

    times: dict[str, list[float]] = {"plain": [], "hooked": []}
    for i in range(warmup + commits):
        order = ("hooked", "plain") if i % 2 == 0 else ("plain", "hooked")
        for side in order:
            started = time.perf_counter()
            tables[side].append(data)
            elapsed = time.perf_counter() - started
            if i >= warmup:
                times[side].append(elapsed)
            if drain and side == "hooked":
                flush_all(60)
    flush_all(60)
    return times


def report(name: str, times: dict[str, list[float]]) -> float:
    plain, hooked = statistics.median(times["plain"]), statistics.median(times["hooked"])
    overhead = (hooked - plain) / plain
    print(f"{name:12} plain {plain * 1000:7.2f} ms   hooked {hooked * 1000:7.2f} ms   "
          f"added {(hooked - plain) * 1000:+6.2f} ms ({overhead:+.1%})   n={len(times['plain'])}")
    return overhead


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--dir", help="Where the temporary catalog goes (default: the system temporary directory).")
    args = parser.parse_args()
    results = {}
    in_thread = time_hook_methods()
    for name, drain in (("steady", False), ("commit path", True)):
        with tempfile.TemporaryDirectory(prefix="hook-overhead-", dir=args.dir) as tmp:
            tables, data = setup(Path(tmp))
            results[name] = report(name, measure(tables, data, args.commits, args.warmup, drain))
            events = sum(1 for _ in open(Path(tmp) / "events.jsonl"))
            print(f"{'':12} {events} events written")
    print(f"hook work in the user's thread: median {statistics.median(in_thread) * 1e6:.0f} us per commit "
          f"(before_commit + after_commit, {len(in_thread)} commits)")
    ok = all(v <= TARGET for v in results.values())
    print(f"target: median added latency <= {TARGET:.0%}: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
