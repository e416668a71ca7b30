"""``stats`` and ``events`` on long metadata: many snapshots (one chain of appends), or many branches over them.
Each shape runs at each of ``--scales`` (multiples of its size, by default 1 and 2) in a child process; the ratios of
time and peak RSS tell whether the cost is linear (about 2.0 at twice the size) and the per-snapshot memory is
printed. The audit: 400,000 snapshots ran ``stats`` out of
4 GB after 367 s; 10,000 branches took 127 s and 3.5 GB.

    .venv/bin/python benchmarks/long_metadata.py [--snapshots 100000] [--branches 10000] [--command stats|events]
        [--shape snapshots|branches|both] [--scales 1,2] [--all-snapshots]

Each size is also read by ``json.load`` alone in its own child (the baseline, same run): the time ratio to it
stays put when the cost is linear; the file's own bytes are counted in the bytes a snapshot.

Measured (2 cores shared with other work, load 4 to 7: times are noisy, memory is not), 100,000 / 400,000
snapshots, 505 bytes of JSON each: ``stats`` 3.9 s / 10.5 s, 152 / 525 MB, 1,242 bytes a snapshot (before:
3.5 s / 11.8 s, 254 / 933 MB, 2,265 bytes); ``events`` 3.1 s / 7.2 s, 154 / 524 MB, 1,236 bytes (before: 6.0 s /
17.9 s, 265 / 933 MB). ``events --all-snapshots`` at 5,000 / 10,000: 9.4 s / 17.7 s, 94 / 115 MB (before: 42 s /
68 s, 139 / 205 MB). 10,000 / 20,000 branches over 20,000 / 40,000 snapshots: ``stats`` 2.2 s / 3.1 s, 58 / 86 MB
(before: 1.3 s / 1.5 s, 78 / 128 MB; before the refs fix: 61 s / 297 s, 2.9 / 11.7 GB); ``events`` 5.0 s / 6.6 s,
93 / 114 MB (before: 4.4 s / 8.2 s, 114 / 157 MB).
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUMMARY = {"operation": "append", "added-data-files": "1", "added-records": "10", "added-files-size": "1000",
           "total-data-files": "1", "total-records": "10", "total-files-size": "1000", "total-delete-files": "0",
           "total-position-deletes": "0", "total-equality-deletes": "0"}


def empty_manifest_list(path: Path) -> None:
    """One manifest list without manifests, which every snapshot names (``events`` reads them)."""
    from pyiceberg.io.pyarrow import PyArrowFileIO
    from pyiceberg.manifest import write_manifest_list

    with write_manifest_list(format_version=2, output_file=PyArrowFileIO().new_output(str(path)), snapshot_id=1,
                             parent_snapshot_id=None, sequence_number=1, avro_compression="null") as writer:
        writer.add_manifests([])


def metadata(snapshots: int, branches: int, manifest_list: str = "/nowhere/snap.avro") -> dict:
    """A v2 table of ``snapshots`` appends in one chain, ``branches`` branches on snapshots spread along it."""
    base = 1_700_000_000_000
    snaps = [{"snapshot-id": i + 1, "parent-snapshot-id": i or None, "sequence-number": i + 1,
              "timestamp-ms": base + i * 1000, "manifest-list": manifest_list,
              "summary": SUMMARY, "schema-id": 0} for i in range(snapshots)]
    for s in snaps[:1]:
        del s["parent-snapshot-id"]
    refs = {"main": {"snapshot-id": snapshots, "type": "branch"}}
    for b in range(branches):
        refs[f"b{b}"] = {"snapshot-id": 1 + b * snapshots // max(branches, 1), "type": "branch"}
    return {"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": "/nowhere",
            "last-sequence-number": snapshots, "last-updated-ms": base + snapshots * 1000, "last-column-id": 1,
            "current-schema-id": 0, "schemas": [{"schema-id": 0, "type": "struct", "fields": [
                {"id": 1, "name": "s", "required": False, "type": "string"}]}],
            "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}], "last-partition-id": 999,
            "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}], "properties": {},
            "current-snapshot-id": snapshots, "refs": refs, "snapshots": snaps,
            "snapshot-log": [{"snapshot-id": s["snapshot-id"], "timestamp-ms": s["timestamp-ms"]} for s in snaps],
            "metadata-log": []}


def measure(command: list[str]) -> tuple[float, float]:
    """Seconds and peak RSS (MB) of one child process."""
    script = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
              "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True); "
              "assert r.returncode == 0, r.stderr[-500:]; "
              "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)")
    out = subprocess.run([sys.executable, "-c", script, *command], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr[-1000:])
    seconds, mb = out.stdout.split()
    return float(seconds), float(mb)


#: The baseline, in the same run: the standard library reading and decoding the same file, nothing kept after.
JSON_LOAD = "import json, sys; json.load(open(sys.argv[1], 'rb'))"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--snapshots", type=int, default=100_000)
    parser.add_argument("--branches", type=int, default=10_000)
    parser.add_argument("--command", choices=["stats", "events"], default="stats")
    parser.add_argument("--shape", choices=["snapshots", "branches", "both"], default="both")
    parser.add_argument("--scales", default="1,2", help="multiples of the size, each measured (ratios: to the first)")
    parser.add_argument("--all-snapshots", action="store_true", help="every snapshot, not the current one")
    args = parser.parse_args()
    flags = ["--format", "json"] if args.command == "stats" else []  # the current snapshot, as the audit ran it
    flags += ["--all-snapshots"] if args.all_snapshots else []
    shapes = {"snapshots": lambda k: (args.snapshots * k, 0),
              "branches": lambda k: (2 * args.branches * k, args.branches * k)}
    scales = [int(k) for k in args.scales.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "snap.avro"
        empty_manifest_list(empty)
        for shape, size in shapes.items():
            if args.shape not in (shape, "both"):
                continue
            rows = []
            for k in scales:
                snapshots, branches = size(k)
                path = Path(tmp) / f"{shape}{k}.metadata.json"
                path.write_text(json.dumps(metadata(snapshots, branches, str(empty))))
                base_s, base_mb = measure([sys.executable, "-c", JSON_LOAD, str(path)])
                seconds, mb = measure([sys.executable, "-m", "iceberg_lineage.cli", args.command, "--metadata",
                                       str(path), *flags])
                size_b = path.stat().st_size
                rows.append((snapshots, seconds, mb))
                print(f"{args.command} {shape}: {snapshots:,} snapshots, {branches:,} branches "
                      f"({size_b / 2**20:.0f} MiB, {size_b / snapshots:.0f} bytes a snapshot): {seconds:.1f} s, "
                      f"peak RSS {mb:.0f} MB; json.load of the file {base_s:.1f} s, {base_mb:.0f} MB: "
                      f"time x{seconds / base_s:.2f}, RSS x{mb / base_mb:.2f}")
            (n1, t1, m1) = rows[0]
            for n2, t2, m2 in rows[1:]:
                print(f"  x{n2 / n1:g} input: time x{t2 / t1:.2f}, RSS x{m2 / m1:.2f}, "
                      f"{(m2 - m1) * 1e6 / (n2 - n1):,.0f} bytes a snapshot (the file's own bytes included)")


if __name__ == "__main__":
    main()
