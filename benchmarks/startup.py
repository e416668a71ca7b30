"""Start-up time of every command of the command line, against ``iceberg-lineage --help`` and ``python -c pass``,
measured in the same run.

Each command runs as a fresh process (the installed console script) in its cheapest real invocation on local
files (a fixture table's metadata, a one-line events file, an empty spool), or ``--help`` where any real invocation
needs a catalog, a server or a program to run. Rounds run every command once, in an order that rotates from round
to round, so drift in the machine affects all alike. Figures: each command's median wall time and the ratio of its
median to ``--help``'s (and to ``python -c pass``'s, the interpreter's own start).

Target: every command at most 2.5x ``--help``.

    .venv/bin/python benchmarks/startup.py [--rounds 11] [--warmup 1] [--json]

``--json`` prints one line per command for ``benchmarks/report.py``: ``{"row", "ratio", "baseline", "goal"}``.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_RATIO = 2.5
METADATA = (Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "iceberg-tables" / "duckdb_spark_lineitem_cow"
            / "metadata" / "v2.metadata.json")
EVENT = ('{"eventType": "COMPLETE", "eventTime": "2026-03-01T00:00:00Z", "run": {"runId": "r1"}, '
         '"job": {"namespace": "ns", "name": "j"}, "inputs": [], "outputs": []}\n')


def command_line() -> list[str]:
    """The console script beside this interpreter (what a user runs), else ``python -m iceberg_lineage.cli``."""
    script = Path(sys.executable).with_name("iceberg-lineage")
    return [str(script)] if script.exists() else [sys.executable, "-m", "iceberg_lineage.cli"]


def commands(base: list[str], events: Path) -> dict[str, list[str]]:
    """Every command's cheapest invocation, by label; the first two are the baselines."""
    metadata = str(METADATA)
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "--help": base + ["--help"],
        "stats --depth summary": base + ["stats", "--depth", "summary", "--metadata", metadata, "--format", "json"],
        "events": base + ["events", "--metadata", metadata],
        "check": base + ["check", "--metadata", metadata, "--format", "json"],
        "jobs": base + ["jobs", "--events", str(events), "--format", "json"],
        "replay --list": base + ["replay", "--list", "--format", "json"],
        "config": base + ["config", "--format", "json"],
        "schema": base + ["schema", "icebergTableStatistics"],
        "scan --help": base + ["scan", "--help"],
        "proxy --help": base + ["proxy", "--help"],
        "run --help": base + ["run", "--help"],
    }


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="one line per command for benchmarks/report.py")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        events = Path(tmp) / "events.jsonl"
        events.write_text(EVENT)
        # a home of its own: the default spool and state folder are empty, the user's configuration is not read
        env = dict(os.environ, HOME=tmp, XDG_STATE_HOME=f"{tmp}/state", XDG_CONFIG_HOME=f"{tmp}/config")
        cmds = commands(command_line(), events)
        labels = list(cmds)
        for _ in range(args.warmup):
            for label in labels:
                timed(cmds[label], env)
        times: dict[str, list[float]] = {label: [] for label in labels}
        for i in range(args.rounds):
            for label in labels[i % len(labels):] + labels[:i % len(labels)]:
                times[label].append(timed(cmds[label], env))
    medians = {label: statistics.median(t) for label, t in times.items()}
    help_s, pass_s = medians["--help"], medians["python -c pass"]
    rows = [(label, medians[label] / help_s, medians[label] / pass_s) for label in labels[2:]]
    if args.json:
        for label, ratio, _ in rows:
            print(json.dumps({"row": f"start-up: {label}", "ratio": round(ratio, 2), "baseline": "--help",
                              "goal": TARGET_RATIO, "higher_is_better": False,
                              "detail": f"{medians[label] * 1000:.0f} ms"}))
        return 0
    print(f"rounds: {args.rounds} (after {args.warmup} warm-up rounds); python -c pass {pass_s * 1000:.0f} ms, "
          f"--help {help_s * 1000:.0f} ms ({help_s / pass_s:.2f}x python -c pass)")
    print(f"{'command':<24}{'median ms':>10}{'vs --help':>11}{'vs pass':>9}")
    for label, ratio, vs_pass in rows:
        print(f"{label:<24}{medians[label] * 1000:>10.0f}{ratio:>10.2f}x{vs_pass:>8.2f}x")
    worst = max(rows, key=lambda r: r[1])
    ok = worst[1] <= TARGET_RATIO
    print(f"target: every command <= {TARGET_RATIO}x --help: {'met' if ok else 'MISSED'} "
          f"(slowest: {worst[0]}, {worst[1]:.2f}x)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
