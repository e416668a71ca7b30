"""``make bench``: every benchmark of issue 32's table, run one after the other, then ONE table of where the project
stands: each row's baseline (measured in the same run by that benchmark), the measured ratio, the goal and whether
it is met.

Each benchmark runs as a subprocess through its own command line. Those with a ``--json`` flag print one line per
row (``{"row", "ratio", "baseline", "goal", "higher_is_better"}``); the others' printed figures are parsed:

* ``hook_overhead.py --commits N``: its ``target:`` line's ``(steady: +X%)`` and ``commit path (+Y%)``;
* ``walk.py --entries N --commits N --repeat N``: ``[A ...] ... walker/fastavro = X.XXx`` and
  ``[B ...] walker/inspect.files = X.XXx``;
* ``scan_scale.py --tables N --warehouse DIR``: the table's ``vs plain`` column (the 6th field of each ``scan ...``
  line) and its ``speed-up`` column (the 5th, against threads 1);
* ``scan_scale.py --rescan --tables N --warehouse DIR``: a ``{"row": ...}`` JSON line if it prints one, else the
  ``x plain`` column of its ``scan again (same state)`` line (the second scan's time against the plain loop's);
* ``rest_rescan.py --tables N --warehouse DIR --json``: the same rescan on Iceberg's REST server, with ETags.

Sizes are modest by default so the whole run takes about ten minutes on 2 cores; ``--full`` uses the sizes of the
issue (1 M events, 200 commits, 300 tables, and 10,000 for the rescan).

    .venv/bin/python benchmarks/report.py [--full] [--only hook,walk,scan,rescan,jobs,startup]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Row:
    row: str
    baseline: str
    ratio: float | None  # None: not measured (the note says why)
    goal: float
    higher_is_better: bool
    note: str = ""

    @property
    def met(self) -> bool | None:
        if self.ratio is None:
            return None
        return self.ratio >= self.goal if self.higher_is_better else self.ratio <= self.goal


def run(script: str, *args: str, timeout: float = 1800) -> tuple[int, str]:
    """The benchmark's exit code and printed output (stdout, then stderr)."""
    started = time.monotonic()
    print(f"running {script} {' '.join(args)}", file=sys.stderr, flush=True)
    try:
        proc = subprocess.run([sys.executable, str(HERE / script), *args], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {timeout:.0f} s"
    print(f"  {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    return proc.returncode, proc.stdout + "\n" + proc.stderr


def json_rows(output: str) -> list[Row]:
    rows = []
    for line in output.splitlines():
        if line.startswith('{"row"'):
            d = json.loads(line)
            rows.append(Row(d["row"], d["baseline"], d["ratio"], d["goal"], d.get("higher_is_better", True),
                            d.get("detail", "")))
    return rows


def failed(name: str, baseline: str, goal: float, higher: bool, code: int, output: str) -> Row:
    last = next((line for line in reversed(output.strip().splitlines()) if line.strip()), "no output")
    return Row(name, baseline, None, goal, higher, f"failed (exit {code}): {last[:120]}")


def hook(commits: int) -> list[Row]:
    code, out = run("hook_overhead.py", "--commits", str(commits))
    rows = []
    for label, goal, pattern in (("steady", 1.05, r"\(steady: ([+-][0-9.]+)%\)"),
                                 ("commit path", 1.03, r"on the commit path \(([+-][0-9.]+)%\)")):
        found = re.search(pattern, out)  # its last line: "target: ... (steady: +X%) ... commit path (+Y%): met"
        name = f"hook, tagged, {label} ({commits} paired commits)"
        rows.append(Row(name, "plain commit", round(1 + float(found.group(1)) / 100, 3), goal, False)
                    if found else failed(name, "plain commit", goal, False, code, out))
    return rows


def walk(entries: int, commits: int, repeat: int) -> list[Row]:
    code, out = run("walk.py", "--entries", str(entries), "--commits", str(commits), "--repeat", str(repeat))
    b = re.search(r"^\[B[^\]]*\] walker/inspect\.files = ([0-9.]+)x", out, re.M)
    a = re.search(r"^\[A[^\]]*\] walker/inspect\.files = [0-9.]+x.*?walker/fastavro = ([0-9.]+)x", out, re.M)
    name_b, name_a = f"walker, table B ({entries:,} entries)", f"walker, table A ({commits} commits), current"
    return [Row(name_b, "inspect.files", float(b.group(1)), 6.0, True) if b
            else failed(name_b, "inspect.files", 6.0, True, code, out),
            Row(name_a, "raw fastavro walk", float(a.group(1)), 1.2, True) if a
            else failed(name_a, "raw fastavro walk", 1.2, True, code, out)]


def scan(tables: int, warehouse: Path) -> list[Row]:
    code, out = run("scan_scale.py", "--tables", str(tables), "--warehouse", str(warehouse))
    found = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 8 and fields[0] == "scan":
            try:
                found[fields[1]] = (float(fields[5]), float(fields[6]))  # speed-up vs threads 1, vs plain
            except ValueError:
                continue
    loop = "plain PyIceberg loop"
    if not found:
        return [failed(f"full history scan, {tables} tables", loop, 0.9, True, code, out)]
    rows = []
    for config, (speedup, vs_plain) in found.items():
        summary = config.endswith(":summary")
        note = "" if summary or config == "threads:1" else f"{speedup:.2f}x threads 1"
        goal = 0.9 if summary else 0.5
        rows.append(Row(f"full history scan, {tables} tables, {config}{'' if summary else ' (entries)'}", loop,
                        vs_plain, goal, True, note))
    for config in ("threads:2", "processes:2"):
        if config in found:
            rows.append(Row(f"scan entries, {config} against threads:1", "scan threads:1", found[config][0], 1.0,
                            True, "must be faster (> 1)"))
    return rows


def rescan(tables: int, warehouse: Path) -> list[Row]:
    name, loop, goal = f"rescan, nothing changed, {tables:,} tables", "plain PyIceberg loop", 0.2 if tables <= 400 else 0.05
    code, out = run("scan_scale.py", "--rescan", "--tables", str(tables), "--warehouse", str(warehouse))
    rows = json_rows(out)
    if rows:
        return rows
    found = re.search(r"^scan again \(same state\)\s+[0-9.]+\s+([0-9.]+)\s*$", out, re.M)  # its "x plain" column
    if found:
        return [Row(name, loop, float(found.group(1)), goal, False)]
    return [failed(name, loop, goal, False, code, out)]


def rest_rescan(tables: int, warehouse: Path) -> list[Row]:
    code, out = run("rest_rescan.py", "--tables", str(tables), "--warehouse", str(warehouse), "--json")
    return json_rows(out) or [failed(f"rescan on REST with ETags, {tables:,} tables", "plain PyIceberg loop", 0.2,
                                     False, code, out)]


def jobs(events: int) -> list[Row]:
    code, out = run("jobs_million.py", "--events", str(events), "--json")
    return json_rows(out) or [failed(f"jobs, {events:,} events", "read + decode", 0.8, True, code, out)]


def startup(rounds: int) -> list[Row]:
    code, out = run("startup.py", "--rounds", str(rounds), "--json")
    return json_rows(out) or [failed("start-up", "--help", 2.5, False, code, out)]


def table(rows: list[Row]) -> str:
    heads = ("row", "baseline (same run)", "measured", "goal", "met?")
    cells = [(r.row, r.baseline, "-" if r.ratio is None else f"{r.ratio:.2f}x",
              f"{'>=' if r.higher_is_better else '<='} {r.goal:g}x",
              {True: "yes", False: "NO", None: "-"}[r.met] + (f"  {r.note}" if r.note else "")) for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(heads[:-1])]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads[:-1], widths)) + "  " + heads[-1]]
    lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 4)
    lines += ["  ".join(c.ljust(w) for c, w in zip(cell[:-1], widths)) + "  " + cell[-1] for cell in cells]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="the issue's sizes (much longer)")
    parser.add_argument("--only", help="comma-separated: hook, walk, scan, rescan, jobs, startup")
    parser.add_argument("--warehouse", type=Path, default=Path(tempfile.gettempdir()) / "iceberg-lineage-bench")
    args = parser.parse_args()
    full = args.full
    parts = {
        "hook": lambda: hook(200 if full else 60),
        "walk": lambda: walk(100_000 if full else 50_000, 300, 3 if full else 2),
        "scan": lambda: scan(300 if full else 100, args.warehouse / "scan"),
        "rescan": lambda: rescan(400, args.warehouse / "rescan-400") + (
            rescan(10_000, args.warehouse / "rescan-10000") if full else [])
        + rest_rescan(400, args.warehouse / "rescan-400"),
        "jobs": lambda: jobs(1_000_000 if full else 200_000),
        "startup": lambda: startup(11 if full else 5),
    }
    chosen = args.only.split(",") if args.only else list(parts)
    unknown = set(chosen) - set(parts)
    if unknown:
        parser.error(f"--only: unknown {sorted(unknown)}; choose from {', '.join(parts)}")
    started = time.monotonic()
    rows = [row for name in chosen for row in parts[name]()]
    print(f"\niceberg-lineage benchmarks ({'full' if full else 'default'} sizes), {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}, {time.monotonic() - started:.0f} s")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
