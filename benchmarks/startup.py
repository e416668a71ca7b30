"""Start-up time of the command line: ``iceberg-lineage stats --depth summary`` on a local metadata file against
``iceberg-lineage --help``, measured in the same run.

Both commands run as fresh processes (the installed console script), in pairs whose order alternates (help first,
then stats first), so drift in the machine affects both sides alike. ``--depth summary`` reads one metadata file
and no manifest: what it costs beyond ``--help`` is imports and start-up, not work. Figures: the median wall time
of each command, the ratio of the medians and the median of the per-pair ratios.

Targets: stats at most 2.5x ``--help``, and under 0.4 s.

    .venv/bin/python benchmarks/startup.py [--pairs 21] [--warmup 2]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_RATIO = 2.5
TARGET_SECONDS = 0.4
METADATA = (Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "iceberg-tables" / "duckdb_spark_lineitem_cow"
            / "metadata" / "v2.metadata.json")


def command_line() -> list[str]:
    """The console script beside this interpreter (what a user runs), else ``python -m iceberg_lineage.cli``."""
    script = Path(sys.executable).with_name("iceberg-lineage")
    return [str(script)] if script.exists() else [sys.executable, "-m", "iceberg_lineage.cli"]


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=21)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    base = command_line()
    help_cmd = base + ["--help"]
    stats_cmd = base + ["stats", "--depth", "summary", "--metadata", str(METADATA), "--format", "json"]
    for _ in range(args.warmup):
        timed(help_cmd), timed(stats_cmd)
    helps, stats = [], []
    for i in range(args.pairs):
        order = ((helps, help_cmd), (stats, stats_cmd)) if i % 2 == 0 else ((stats, stats_cmd), (helps, help_cmd))
        for sink, argv in order:
            sink.append(timed(argv))
    help_median, stats_median = statistics.median(helps), statistics.median(stats)
    ratio = stats_median / help_median
    pair_ratio = statistics.median(s / h for s, h in zip(stats, helps))
    print(f"pairs: {args.pairs} (after {args.warmup} warm-up pairs)")
    print(f"iceberg-lineage --help:           median {help_median * 1000:.0f} ms "
          f"(min {min(helps) * 1000:.0f}, max {max(helps) * 1000:.0f})")
    print(f"iceberg-lineage stats --depth summary: median {stats_median * 1000:.0f} ms "
          f"(min {min(stats) * 1000:.0f}, max {max(stats) * 1000:.0f})")
    print(f"ratio of medians: {ratio:.2f}x (median of per-pair ratios {pair_ratio:.2f}x)")
    ok_ratio, ok_time = ratio <= TARGET_RATIO, stats_median < TARGET_SECONDS
    print(f"targets: ratio <= {TARGET_RATIO}x {'met' if ok_ratio else 'MISSED'}; "
          f"stats < {TARGET_SECONDS} s {'met' if ok_time else 'MISSED'}")
    return 0 if ok_ratio and ok_time else 1


if __name__ == "__main__":
    sys.exit(main())
