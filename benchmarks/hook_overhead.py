"""Latency the hook adds to a commit: a 10-row append to a SQLite-catalog table, with and without ``observe``.

One SQLite catalog database, two catalog objects on it: one observed (events to a JSON Lines file, the embedded
default), one plain; each appends to its own table, so both tables grow alike. Commits are interleaved in one run,
in blocks of ``--block`` hooked commits then as many plain ones (then plain first, then hooked), so drift in the
machine affects both sides alike. The i-th hooked and the i-th plain commit form a pair: the table has the same
number of snapshots in both, and PyIceberg's commit cost grows with that number.

Two measurements:

* steady: events are built and written by the background thread while the next commits run, as in a job. Inside
  a block, that work slows the next hooked commit, so it is charged to the hook (all but the block's last event);
* commit path: the queue is drained, untimed, after every hooked commit, so only the work done in the user's
  thread counts (including PyIceberg's own cost of the ``iceberg-lineage.run-id`` summary property);
* steady, untagged: as steady, with ``hook.tag_snapshots: false``. PyIceberg deep-copies the whole table metadata
  about 19 times per commit, so one more summary key per snapshot costs it time on every later commit; this run
  shows how much of the overhead is that.

Figures: the median added latency (the median over pairs of hooked minus plain, with a bootstrap 95% interval:
single commits vary by tens of ms on this machine kind) and the difference of the two medians, both as a share of
the plain commit's median; the emitter thread's CPU time per event; the time the
reporter's ``before_commit`` and ``after_commit`` take in the user's thread.

Target: median added latency <= 5% of the plain commit's median.

    .venv/bin/python benchmarks/hook_overhead.py [--commits 200] [--warmup 10] [--block 10]
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

TARGET = 0.05
TAG_ENV = "ICEBERG_LINEAGE__HOOK__TAG_SNAPSHOTS"


def setup(root: Path, tag: bool = True):
    import pyarrow as pa
    from openlineage.client import OpenLineageClient
    from openlineage.client.transport.file import FileConfig, FileTransport
    from pyiceberg.catalog.sql import SqlCatalog

    from iceberg_lineage.hook import reporter as hook

    (root / "warehouse").mkdir()
    props = {"uri": f"sqlite:///{root}/catalog.db", "warehouse": f"file://{root}/warehouse"}
    plain, hooked = SqlCatalog("bench", **props), SqlCatalog("bench", **props)
    plain.create_namespace("db")
    data = pa.table({"id": pa.array(range(10), pa.int64()), "v": pa.array([f"row {i}" for i in range(10)])})
    tables = {"plain": plain.create_table("db.plain", data.schema), "hooked": hooked.create_table("db.hooked", data.schema)}
    client = OpenLineageClient(transport=FileTransport(FileConfig(log_file_path=str(root / "events.jsonl"), append=True)))
    with mock.patch.dict(os.environ, {TAG_ENV: "true" if tag else "false"}):  # read once, by observe
        hook.observe(hooked, client=client)
    return tables, data


def time_hook_methods() -> list[float]:
    """Wrap the reporter's in-thread methods to record their duration per commit (seconds)."""
    from iceberg_lineage.hook.reporter import OpenLineageMetricsReporter as Reporter

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


def emitter_cpu() -> list[float]:
    """Wrap the emitter's build-and-deliver step to record its thread CPU time per call (seconds)."""
    from iceberg_lineage.delivery.emitter import Emitter

    spent: list[float] = []
    run = Emitter._run

    def timed_run(self, item, *, spill):
        started = time.thread_time()
        try:
            run(self, item, spill=spill)
        finally:
            spent.append(time.thread_time() - started)

    Emitter._run = timed_run
    return spent


def measure(tables, data, commits: int, warmup: int, block: int, drain: bool) -> dict[str, list[float]]:
    from iceberg_lineage.delivery.emitter import EMITTERS

    times: dict[str, list[float]] = {"plain": [], "hooked": []}
    done = 0
    while done < warmup + commits:
        n = min(block, warmup + commits - done)
        first = ("hooked", "plain") if (done // block) % 2 == 0 else ("plain", "hooked")
        for side in first:
            for k in range(n):
                started = time.perf_counter()
                tables[side].append(data)
                elapsed = time.perf_counter() - started
                if done + k >= warmup:
                    times[side].append(elapsed)
                if drain and side == "hooked":
                    EMITTERS.flush_all(60)
        done += n
    EMITTERS.flush_all(60)
    return times


def median_interval(values: list[float], rounds: int = 2000) -> tuple[float, float]:
    """A percentile-bootstrap 95% interval of the median (fixed seed)."""
    rng = random.Random(1)
    medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(rounds))
    return medians[int(0.025 * rounds)], medians[int(0.975 * rounds) - 1]


def report(name: str, times: dict[str, list[float]]) -> float:
    plain, hooked = statistics.median(times["plain"]), statistics.median(times["hooked"])
    added = [h - p for h, p in zip(times["hooked"], times["plain"])]
    paired = statistics.median(added)
    low, high = median_interval(added)
    print(f"{name:17} plain {plain * 1000:7.2f} ms   hooked {hooked * 1000:7.2f} ms   "
          f"median added latency {paired * 1000:+6.2f} ms ({paired / plain:+.1%}, 95% interval "
          f"{low / plain:+.1%} to {high / plain:+.1%})   "
          f"difference of medians {(hooked - plain) / plain:+.1%}   n={len(added)} pairs")
    return paired / plain


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--block", type=int, default=10, help="Consecutive commits on one side.")
    parser.add_argument("--dir", help="Where the temporary catalog goes (default: the system temporary directory).")
    args = parser.parse_args()
    results = {}
    in_thread = time_hook_methods()
    background = emitter_cpu()
    for name, drain, tag in (("steady", False, True), ("commit path", True, True), ("steady, untagged", False, False)):
        with tempfile.TemporaryDirectory(prefix="hook-overhead-", dir=args.dir) as tmp:
            tables, data = setup(Path(tmp), tag)
            times = measure(tables, data, args.commits, args.warmup, args.block, drain)
            results[name] = report(name, times)
            events = sum(1 for _ in open(Path(tmp) / "events.jsonl"))
            print(f"{'':17} {events} events written")
    plain_ms = statistics.median(times["plain"]) * 1000
    print(f"hook work in the user's thread: median {statistics.median(in_thread) * 1e6:.0f} us per commit "
          f"(before_commit + after_commit, {len(in_thread)} commits)")
    cpu = statistics.median(background) * 1000
    print(f"emitter thread: median {cpu:.2f} ms CPU per event ({cpu / plain_ms:.1%} of a plain commit), "
          f"{len(background)} events")
    ok = results["steady"] <= TARGET and results["commit path"] <= TARGET
    print(f"target (default configuration, tagged): median added latency <= {TARGET:.0%}: "
          f"{'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
