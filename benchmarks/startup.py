"""Start-up time of every command of the command line, against ``iceberg-lineage --help`` and ``python -c pass``,
measured in the same run.

Each command runs as a fresh process (the installed console script) in its cheapest real invocation on local
files (a fixture table's metadata, a one-line events file, an empty spool), or ``--help`` where any real invocation
needs a catalog, a server or a program to run. Rounds run every command once, in an order that rotates from round
to round, so drift in the machine affects all alike. Figures: each command's median wall time and the ratio of its
median to ``--help``'s (and to ``python -c pass``'s, the interpreter's own start); beside them the median CPU time
(user + system) of the process, which other work on a shared machine disturbs less: ``--clock cpu`` takes the
ratios from it.

Children run with compiled bytecode, as an installed package has it (``benchmarks/bytecode.py``), written by the
warm-up round: without it every start compiled the package (``--help``'s CPU time was 360 ms against 250).

Target: every command at most 2.5x ``--help``.

    .venv/bin/python benchmarks/startup.py [--rounds 11] [--warmup 1] [--clock wall|cpu] [--json]

``--json`` prints one line per command for ``benchmarks/report.py``: ``{"row", "ratio", "baseline", "goal"}``.
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bytecode  # noqa: E402 - the sibling module

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


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """The wall time and the CPU time of one run (one child at a time, so the children's CPU delta is its own)."""
    cpu, start = _children_cpu(), time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    elapsed, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return elapsed, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="the time the ratios are taken from")
    parser.add_argument("--json", action="store_true", help="one line per command for benchmarks/report.py")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        events = Path(tmp) / "events.jsonl"
        events.write_text(EVENT)
        # a home of its own: the default spool and state folder are empty, the user's configuration is not read
        env = bytecode.compiled(Path(tmp) / "bytecode", HOME=tmp, XDG_STATE_HOME=f"{tmp}/state",
                                XDG_CONFIG_HOME=f"{tmp}/config")
        cmds = commands(command_line(), events)
        labels = list(cmds)
        for _ in range(args.warmup):
            for label in labels:
                timed(cmds[label], env)
        times: dict[str, list[tuple[float, float]]] = {label: [] for label in labels}
        for i in range(args.rounds):
            for label in labels[i % len(labels):] + labels[:i % len(labels)]:
                times[label].append(timed(cmds[label], env))
    walls = {label: statistics.median(wall for wall, _ in t) for label, t in times.items()}
    cpus = {label: statistics.median(cpu for _, cpu in t) for label, t in times.items()}
    medians = cpus if args.clock == "cpu" else walls
    help_s, pass_s = medians["--help"], medians["python -c pass"]
    rows = [(label, medians[label] / help_s, medians[label] / pass_s) for label in labels[2:]]
    if args.json:
        for label, ratio, _ in rows:
            print(json.dumps({"row": f"start-up: {label}", "ratio": round(ratio, 2), "baseline": "--help",
                              "goal": TARGET_RATIO, "higher_is_better": False,
                              "detail": f"{medians[label] * 1000:.0f} ms {args.clock}"}))
        return 0
    print(f"rounds: {args.rounds} (after {args.warmup} warm-up rounds); ratios of {args.clock} time; python -c pass "
          f"{pass_s * 1000:.0f} ms, --help {help_s * 1000:.0f} ms ({help_s / pass_s:.2f}x python -c pass)")
    print(f"{'command':<24}{'wall ms':>8}{'cpu ms':>8}{'vs --help':>11}{'vs pass':>9}")
    for label, ratio, vs_pass in rows:
        print(f"{label:<24}{walls[label] * 1000:>8.0f}{cpus[label] * 1000:>8.0f}{ratio:>10.2f}x{vs_pass:>8.2f}x")
    worst = max(rows, key=lambda r: r[1])
    ok = worst[1] <= TARGET_RATIO
    print(f"target: every command <= {TARGET_RATIO}x --help: {'met' if ok else 'MISSED'} "
          f"(slowest: {worst[0]}, {worst[1]:.2f}x)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
