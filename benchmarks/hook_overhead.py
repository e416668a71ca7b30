"""Latency the hook adds to a commit: a 10-row append to a SQLite-catalog table, with and without ``observe``.

One SQLite catalog database, one catalog object per side on it: one plain, the others observed (events to a JSON
Lines file each, the embedded default; the ledger and the spool in the run's temporary folder); each side appends
to its own table, so all tables grow alike. Commits are interleaved in one run, in blocks of ``--block`` commits per
side, the order of the sides rotating every round, so drift in the machine affects every side alike. The i-th
commits of the sides form a tuple: the tables have the same number of snapshots, and PyIceberg's commit cost grows
with that number.

Measurements:

* steady: events are built and written by the background thread while the next commits run, as in a job. Inside
  a block, that work slows the next hooked commit (the GIL), so it is charged to the hook (all but the block's
  last event);
* commit path: the queue is drained, untimed, after every hooked commit, so only the work done in the user's
  thread counts (including PyIceberg's own cost of the snapshot tags: it deep-copies the whole table metadata
  about 19 times per commit, so every summary key of every snapshot costs it time on every later commit);
* ``--breakdown``: steady, with one side per part switched off (``events.start_events``, ``hook.tag_snapshots``,
  ``hook.ledger``) beside the full hook, all in the same run: each part's cost is the full hook's added time minus
  that side's.

Figures: the median added latency (the median over tuples of hooked minus plain, with a bootstrap 95% interval:
single commits vary by tens of ms on a loaded machine) as a share of the plain commit's median, in wall time and in
the process's CPU time (all threads: PyIceberg's writers, the emitter; on the commit path, all but the emitter's),
which a loaded machine disturbs far less;
the emitter thread's CPU time per commit (one queued capture, its START and COMPLETE) and per event; the time the
reporter's ``before_commit`` and ``after_commit`` take in the user's thread. The load average is printed: on a
machine busier than its cores, wall-time figures mostly measure the other work.

Target: median added latency <= 5% of the plain commit's median, and <= 3% on the commit path.

    .venv/bin/python benchmarks/hook_overhead.py [--commits 200] [--warmup 10] [--block 10] [--breakdown]
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

TARGET = 0.05
COMMIT_PATH_TARGET = 0.03
#: Per hooked side, the settings it runs with (environment variables, read once, by ``observe``).
FULL: dict[str, str] = {}
PARTS = {
    "START": {"ICEBERG_LINEAGE__EVENTS__START_EVENTS": "false"},
    "tags": {"ICEBERG_LINEAGE__HOOK__TAG_SNAPSHOTS": "false"},
    "ledger": {"ICEBERG_LINEAGE__HOOK__LEDGER": "false"},
}


@dataclass
class Side:
    """One catalog and its table; the commit times of the measured commits."""

    name: str
    table: Any
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    emitter_cpu: float | None = None
    events_file: Path | None = None
    items: int = 0


def setup(root: Path, hooked: dict[str, dict[str, str]]) -> tuple[list[Side], Any]:
    """The plain side first, then one observed side per entry of ``hooked`` (name -> its settings)."""
    import pyarrow as pa
    from openlineage.client import OpenLineageClient
    from openlineage.client.transport.file import FileConfig, FileTransport
    from pyiceberg.catalog.sql import SqlCatalog

    from iceberg_lineage.hook import reporter as hook

    (root / "warehouse").mkdir()
    props = {"uri": f"sqlite:///{root}/catalog.db", "warehouse": f"file://{root}/warehouse"}
    data = pa.table({"id": pa.array(range(10), pa.int64()), "v": pa.array([f"row {i}" for i in range(10)])})
    plain = SqlCatalog("bench", **props)
    plain.create_namespace("db")
    sides = [Side("plain", plain.create_table("db.plain", data.schema))]
    for n, (name, env) in enumerate(hooked.items()):
        catalog = SqlCatalog("bench", **props)
        side = Side(name, catalog.create_table(f"db.hooked_{n}", data.schema), events_file=root / f"events-{n}.jsonl")
        client = OpenLineageClient(transport=FileTransport(FileConfig(log_file_path=str(side.events_file), append=True)))
        with mock.patch.dict(os.environ, env):  # read once, by observe
            hook.observe(catalog, client=client)
        side.table = catalog.load_table(f"db.hooked_{n}")  # loaded through the observed catalog
        sides.append(side)
    return sides, data


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


def emitter_clocks(clocks: dict[int, int]) -> None:
    """Record the CPU clock of each emitter's worker thread as it starts (emitter id -> clock id): its CPU time,
    read when the run ends, is all the work done off the user's thread (building, delivering, the ledger)."""
    import threading

    from iceberg_lineage.delivery.emitter import Emitter

    work = Emitter._work

    def clocked_work(self):
        clocks[id(self)] = time.pthread_getcpuclockid(threading.get_ident())
        return work(self)

    Emitter._work = clocked_work


def measure(sides: list[Side], data, commits: int, warmup: int, block: int, drain: bool,
            clocks: dict[int, int]) -> None:
    """Time the commits; on the commit path (``drain``), the CPU the emitters spend meanwhile is not counted."""
    from iceberg_lineage.delivery.emitter import EMITTERS

    def emitters_cpu() -> float:
        return sum(time.clock_gettime(clock) for clock in list(clocks.values())) if drain else 0.0

    done = 0
    while done < warmup + commits:
        n = min(block, warmup + commits - done)
        shift = (done // block) % len(sides)
        for side in sides[shift:] + sides[:shift]:
            for k in range(n):
                wall, cpu, off = time.perf_counter(), time.process_time(), emitters_cpu()
                side.table.append(data)
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu - (emitters_cpu() - off)
                if done + k >= warmup:
                    side.wall.append(wall)
                    side.cpu.append(cpu)
                if drain and side.name != "plain":
                    EMITTERS.flush_all(60)
        done += n
    EMITTERS.flush_all(60)


def median_interval(values: list[float], rounds: int = 2000) -> tuple[float, float]:
    """A percentile-bootstrap 95% interval of the median (fixed seed)."""
    rng = random.Random(1)
    medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(rounds))
    return medians[int(0.025 * rounds)], medians[int(0.975 * rounds) - 1]


def added(side: Side, plain: Side, what: str) -> tuple[float, float, float]:
    """Median added time as a share of the plain commit's median, with its 95% interval."""
    ours, base = getattr(side, what), getattr(plain, what)
    median = statistics.median(base)
    diffs = [h - p for h, p in zip(ours, base)]
    low, high = median_interval(diffs)
    return statistics.median(diffs) / median, low / median, high / median


def report(title: str, sides: list[Side]) -> dict[str, tuple[float, float]]:
    """Print each hooked side against the plain one; returns name -> (wall share, CPU share)."""
    plain = sides[0]
    print(f"{title}: plain commit median {statistics.median(plain.wall) * 1000:.2f} ms wall, "
          f"{statistics.median(plain.cpu) * 1000:.2f} ms CPU, n={len(plain.wall)}")
    shares = {}
    for side in sides[1:]:
        wall, cpu = added(side, plain, "wall"), added(side, plain, "cpu")
        line = (f"  {side.name:14} added wall {wall[0]:+6.1%} (95% {wall[1]:+.1%} to {wall[2]:+.1%})   "
                f"added CPU {cpu[0]:+6.1%} (95% {cpu[1]:+.1%} to {cpu[2]:+.1%})")
        if side.emitter_cpu is not None and side.events_file is not None:
            events = sum(1 for _ in open(side.events_file))
            per_commit = side.emitter_cpu * 1000 / side.items  # every commit, warm-up included
            line += (f"   emitter {per_commit:.2f} ms CPU per commit, {per_commit * side.items / events:.2f} ms per "
                     f"event ({events / side.items:.0f} events per commit)")
        print(line)
        shares[side.name] = (wall[0], cpu[0])
    return shares


def run(name: str, hooked: dict[str, dict[str, str]], args, drain: bool,
        clocks: dict[int, int]) -> dict[str, tuple[float, float]]:
    with tempfile.TemporaryDirectory(prefix="hook-overhead-", dir=args.dir) as tmp:
        env = {"ICEBERG_LINEAGE__STATE__PATH": f"{tmp}/state.db", "ICEBERG_LINEAGE__SPOOL__PATH": f"{tmp}/spool"}
        with mock.patch.dict(os.environ, env):
            sides, data = setup(Path(tmp), hooked)
            measure(sides, data, args.commits, args.warmup, args.block, drain, clocks)
        from iceberg_lineage.delivery.emitter import EMITTERS

        emitters = EMITTERS._emitters()
        for side, emitter in zip(sides[1:], emitters):  # made in the order of the sides' first commits
            side.emitter_cpu = time.clock_gettime(clocks[id(emitter)])
            side.items = args.warmup + args.commits
        shares = report(name, sides)
        EMITTERS.shutdown()
    return shares


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--block", type=int, default=10, help="Consecutive commits on one side.")
    parser.add_argument("--breakdown", action="store_true", help="Also measure each part's cost (START, tags, "
                        "ledger) in one run.")
    parser.add_argument("--dir", help="Where the temporary catalog goes (default: the system temporary directory).")
    args = parser.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    in_thread = time_hook_methods()
    clocks: dict[int, int] = {}
    emitter_clocks(clocks)
    steady = run("steady", {"hook": FULL}, args, False, clocks)["hook"]
    path = run("commit path", {"hook": FULL}, args, True, clocks)["hook"]
    print(f"hook work in the user's thread: median {statistics.median(in_thread) * 1e6:.0f} us per commit "
          f"(before_commit + after_commit, {len(in_thread)} commits)")
    if args.breakdown:
        shares = run("breakdown (steady)", {"hook": FULL, **{f"no {part}": env for part, env in PARTS.items()}},
                     args, False, clocks)
        full = shares["hook"]
        print("  cost of each part (the full hook's added time minus the side without it, share of a plain commit):")
        for part in PARTS:
            without = shares[f"no {part}"]
            print(f"    {part:7} wall {full[0] - without[0]:+6.1%}   CPU {full[1] - without[1]:+6.1%}")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    ok = steady[0] <= TARGET and path[0] <= COMMIT_PATH_TARGET
    print(f"target: median added latency <= {TARGET:.0%} (steady: {steady[0]:+.1%}), <= {COMMIT_PATH_TARGET:.0%} "
          f"on the commit path ({path[0]:+.1%}): {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
