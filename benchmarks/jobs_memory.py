"""Peak memory of ``iceberg-lineage jobs`` on many small jobs: ``--jobs`` jobs of one run each (a START and a
COMPLETE, ~700-byte events as the hook writes them), read by the CLI in a child process whose peak RSS is printed
with the per-job figure. The audit's shape: 100,000 jobs x 2 events (about 39 MiB) took 1.1 GB; the bound is 250 MB.

    .venv/bin/python benchmarks/jobs_memory.py [--jobs 100000]
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from jobs_million import _STATS, _line  # noqa: E402 - the same event text as the million-event benchmark


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "events.jsonl"
        with open(log, "w") as f:
            for job in range(args.jobs):
                run_id = str(uuid.UUID(int=job + 1, version=4))
                f.write(_line("START", job, run_id, job, job, "{}"))
                f.write(_line("COMPLETE", job + 1, run_id, job, job, _STATS % (job, job * 50)))
        done = subprocess.run([sys.executable, "-m", "iceberg_lineage.cli", "jobs", "--events", str(log),
                               "--format", "json"], capture_output=True, text=True, check=True)
        report = json.loads(done.stdout)
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        size_mb = log.stat().st_size / 2**20
    assert len(report["jobs"]) == args.jobs and sum(j["completed"] for j in report["jobs"]) == args.jobs
    print(f"{args.jobs:,} jobs x 2 events ({size_mb:.1f} MiB): peak RSS {peak_mb:.0f} MB, "
          f"{peak_mb * 1e6 / args.jobs:,.0f} bytes a job (bound: 250 MB)")


if __name__ == "__main__":
    main()
