"""What an outage of the lineage endpoint adds to a hooked script (issue 28): the same script (``observe`` on a SQLite
catalog, a table created, ``--commits`` appends; ``tests/support/hooked_script.py``) run as a real process, start to
exit, with lineage disabled (``OPENLINEAGE_DISABLED``) and with the endpoint down (a port nothing listens on:
connection refused), interleaved ``--repeats`` times in one run, so drift in the machine affects both alike.

Once the first event fails the breaker opens and the rest goes to the spool untried; the exit flush ends the
retries' backoff. Before, the first event's retries (openlineage-python's 5 connect retries, backoff 0.3 s
doubling: about 9 s) held the exit.

Figures: the median wall time of each side, the added seconds and the ratio down / disabled; and the events each
down run left in the spool (all of them: 2 per commit plus the table's creation).

    .venv/bin/python benchmarks/hook_outage.py [--commits 20] [--repeats 5]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.hooked_script import hooked_env, run_hooked  # noqa: E402
from tests.support.lineage_server import free_port  # noqa: E402


def timed(root: Path, commits: int, url: str | None) -> float:
    started = time.perf_counter()
    done = run_hooked(root, commits, hooked_env(root, url=url))
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"the hooked script failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return elapsed


def spooled(root: Path) -> int:
    from iceberg_lineage.delivery.spool import Spool

    with Spool(root / "spool") as spool:
        return spool.count()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"disabled": [], "down": []}
    counts: list[int] = []
    with tempfile.TemporaryDirectory(prefix="hook-outage-") as tmp:
        for repeat in range(args.repeats):
            order = ["disabled", "down"] if repeat % 2 == 0 else ["down", "disabled"]
            for side in order:
                root = Path(tmp) / f"{side}-{repeat}"
                url = f"http://127.0.0.1:{free_port()}" if side == "down" else None
                times[side].append(timed(root, args.commits, url))
                if side == "down":
                    counts.append(spooled(root))
    disabled, down = statistics.median(times["disabled"]), statistics.median(times["down"])
    expected = 2 + 2 * args.commits
    print(f"hooked script, {args.commits} commits, {args.repeats} runs per side (median wall time, start to exit)")
    print(f"  lineage disabled : {disabled:6.2f} s   (runs: {', '.join(f'{t:.2f}' for t in times['disabled'])})")
    print(f"  endpoint down    : {down:6.2f} s   (runs: {', '.join(f'{t:.2f}' for t in times['down'])})")
    print(f"  added by the outage: {down - disabled:+.2f} s; ratio down / disabled: {down / disabled:.2f}")
    print(f"  events spooled per down run: {counts} (expected {expected} each)")
    if any(count != expected for count in counts):
        raise SystemExit("events were lost")


if __name__ == "__main__":
    main()
