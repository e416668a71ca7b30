"""Full-size load: 8 writers x 50 commits under the hook, and a scan of 2,000 tables, delivering over HTTP to a
local server that fails 10 % of requests. Prints what was delivered and the peak RSS of each workload.

    .venv/bin/python benchmarks/load.py [--threads 8] [--commits 50] [--tables 2000]

Each workload runs in its own process, so each peak RSS is its own.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root: tests.support

from tests.support.load import LoadResult, hook_load, scan_load


def _in_temp_dir(workload: str, size: dict[str, int]) -> LoadResult:
    with tempfile.TemporaryDirectory(prefix=f"iceberg-lineage-load-{workload}-") as root:
        os.chdir(root)
        os.environ["XDG_STATE_HOME"] = root  # the hook's spool defaults to the per-user state folder: keep it here
        if workload == "hook":
            return hook_load(Path(root), size["threads"], size["commits"])
        return scan_load(Path(root), size["tables"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--commits", type=int, default=50)
    parser.add_argument("--tables", type=int, default=2000)
    args = parser.parse_args()
    size = vars(args)
    with mp.get_context("spawn").Pool(1, maxtasksperchild=1) as pool:
        for workload, title in (("hook", f"hook: {args.threads} writers x {args.commits} commits"),
                                ("scan", f"scan: {args.tables} tables of one snapshot")):
            result = pool.apply(_in_temp_dir, (workload, size))
            print(title)
            for line in result.lines():
                print(f"  {line}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
