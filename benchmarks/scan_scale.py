"""Scanner throughput on many small tables, against a plain PyIceberg loop measured in the same run.

Builds (once, reused on the next run) a SQLite catalog with N tables x 3 commits: one template table is written with
``add_files`` of a single small parquet file, then cloned N-1 times (metadata JSON and manifest lists rewritten to
the clone's location, a fresh table-uuid, ``register_table``), which takes seconds instead of minutes of commits.

Then, each in a fresh subprocess (so peak RSS is per configuration) and with a fresh state file, a full history scan
with 1, 2 and 4 thread workers, 2 processes and a 2-worker Dask LocalCluster, at depth entries (the default) and at
depth summary; and the baseline: a loop that loads each table and reads its snapshot summaries, run again just before
each configuration, which is compared with that run (the load of a shared machine moves). Events go to a
counting sink (no transport), so the figures are the scanner's own cost. Dask's peak RSS is the driver's only. The
speed-up column compares each run with threads:1 at the same depth. CPU s: the run's process and the children it
waited for, while the clock ran (a loaded machine stretches seconds, less so CPU; a forkserver's is not counted).

    .venv/bin/python benchmarks/scan_scale.py [--tables 1000] [--warehouse DIR]

``--rescan`` measures a scan with nothing changed instead (issue 32): ``scan --depth summary`` with one state file,
once, then ``--repeat`` more times alternating with the plain loop, each in a fresh process (imports included, from
compiled bytecode as installed: ``bytecode.py``); the medians are compared. Unchanged tables are skipped from the
catalog's listing.

    .venv/bin/python benchmarks/scan_scale.py --rescan --tables 400 [--repeat 5]    # and --tables 10000
"""
from __future__ import annotations

import argparse
import atexit
import functools
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bytecode  # noqa: E402 - the sibling module

NAMESPACE = "bench"
COMMITS = 3
#: executor:workers[:depth], each at both depths: entries (every manifest read) and summary (no manifest at all: the
#: scanner's own overhead on top of the loop's work).
EXECUTORS = ("threads:1", "threads:2", "threads:4", "processes:2", "dask:2")
CONFIGS = tuple(f"{e}:{depth}" for depth in ("entries", "summary") for e in EXECUTORS)


def catalog(warehouse: Path):
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog("bench", uri=f"sqlite:///{warehouse}/catalog.db", warehouse=f"file://{warehouse}")


def build(warehouse: Path, tables: int) -> None:
    warehouse.mkdir(parents=True, exist_ok=True)
    cat = catalog(warehouse)
    if NAMESPACE in {ns[0] for ns in cat.list_namespaces()}:
        if len(cat.list_tables(NAMESPACE)) == tables:
            return
        shutil.rmtree(warehouse)
        return build(warehouse, tables)
    import pyarrow as pa
    import pyarrow.parquet as pq

    started = time.monotonic()
    cat.create_namespace(NAMESPACE)
    rows = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": pa.array(["a", "b", "c"])})
    data = warehouse / "shared.parquet"
    pq.write_table(rows, data)
    template = cat.create_table(f"{NAMESPACE}.t00000", schema=rows.schema)
    for _ in range(COMMITS):
        template.add_files([f"file://{data}"], check_duplicate_files=False)
    template = template.refresh()
    for i in range(1, tables):
        cat.register_table((NAMESPACE, f"t{i:05d}"), clone(template, warehouse / NAMESPACE / f"t{i:05d}"))
    print(f"built {tables} tables x {COMMITS} commits in {time.monotonic() - started:.1f} s", file=sys.stderr)


def clone(template, location: Path) -> str:
    """A copy of the template table at ``location`` with its own uuid; returns its metadata location."""
    import fastavro

    old = template.location()
    new = f"file://{location}"
    (location / "metadata").mkdir(parents=True)
    src = Path(template.metadata_location.removeprefix("file://"))
    text = src.read_text().replace(old, new).replace(str(template.metadata.table_uuid), str(uuid.uuid4()))
    for snapshot in template.snapshots():
        path = Path(snapshot.manifest_list.removeprefix("file://"))
        with path.open("rb") as f:
            reader = fastavro.reader(f)
            schema, header = reader.writer_schema, {k: v for k, v in reader.metadata.items() if not k.startswith("avro.")}
            records = [{**r, "manifest_path": r["manifest_path"].replace(old, new)} for r in reader]
            for r in records:
                target = Path(r["manifest_path"].removeprefix("file://"))
                if not target.exists():
                    shutil.copyfile(r["manifest_path"].replace(new, old).removeprefix("file://"), target)
        with (location / "metadata" / path.name).open("wb") as f:
            fastavro.writer(f, schema, records, codec=reader.codec, metadata=header)
    metadata = location / "metadata" / src.name
    metadata.write_text(text)
    return f"file://{metadata}"


#: Imported before the clock starts, as the loop's PyIceberg is: imports are start-up (``benchmarks/startup.py``), and
#: at a few hundred tables the scanner's would weigh more than the loop's whole run. Workers of processes and Dask
#: still import what they need within the clock: that is their executor's start-up.
WARM = {"plain": ("pyiceberg.io.pyarrow",),
        "scan": ("pyiceberg.io.pyarrow", "iceberg_lineage.config", "iceberg_lineage.read.catalogs",
                 "iceberg_lineage.scan.driver", "iceberg_lineage.scan.sinks", "iceberg_lineage.scan.task",
                 "iceberg_lineage.state.store", "iceberg_lineage.lineage.events", "iceberg_lineage.lineage.checks",
                 "iceberg_lineage.lineage.scan_run", "iceberg_lineage.lineage.serde", "scan_reporters.commit_metrics")}


def measure(warehouse: Path, config: str) -> dict:
    """One configuration, in this process: snapshots, seconds and peak RSS."""
    import importlib

    cat = catalog(warehouse)
    for module in WARM["plain" if config == "plain" else "scan"]:
        importlib.import_module(module)
    started, cpu = time.monotonic(), _cpu()
    if config == "plain":
        snapshots = 0
        for identifier in cat.list_tables(NAMESPACE):
            for snapshot in cat.load_table(identifier).snapshots():
                snapshots += bool(snapshot.summary.get("operation"))
    else:
        from iceberg_lineage.config import Settings
        from iceberg_lineage.read.catalogs import CatalogSpec
        from iceberg_lineage.scan.driver import ScanOptions, scan
        from iceberg_lineage.scan.sinks import event_sink
        from iceberg_lineage.state.store import StateStore

        kind, workers, depth = (config + ":entries").split(":")[:3]
        spec = CatalogSpec.of("bench", {"type": "sql", **cat.properties})
        options = ScanOptions(catalogs=(spec,), executor=kind, workers=int(workers), depth=depth)
        with tempfile.TemporaryDirectory() as tmp, StateStore(Path(tmp) / "state.db") as state:
            summary = scan(options, Settings(), state, event_sink(lambda event: "delivered"))
        assert summary.exit_code == 0, summary.failures
        snapshots = summary.snapshots_emitted
    seconds = time.monotonic() - started
    return {"config": config, "snapshots": snapshots, "seconds": seconds, "cpu_s": _cpu() - cpu,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _cpu() -> float:
    """CPU seconds of this process and of the children it waited for."""
    mine, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime


def measure_rescan(warehouse: Path, state_path: Path) -> dict:
    """One summary-depth scan with ``state_path`` in this fresh process, timed from where the plain loop's clock starts
    (PyIceberg imported, the catalog made): iceberg-lineage's imports count, openlineage-python's among them."""
    cat = catalog(warehouse)
    started = time.monotonic()
    summary = summary_scan({"type": "sql", **cat.properties}, state_path)
    return {"config": "rescan", "seconds": time.monotonic() - started, "unchanged": summary.unchanged,
            "tables": summary.tables_scanned}


def summary_scan(properties: dict, state_path: Path, on_catalog=None):  # noqa: ANN001, ANN201 - a benchmark
    """``scan --depth summary`` of the catalog ``properties`` name, with ``state_path``, to a sink that counts every
    event delivered: the scan summary. ``on_catalog`` sees the catalog object first (rest_rescan.py counts its HTTP
    answers). Imported here, so that the caller's clock counts iceberg-lineage's imports."""
    from iceberg_lineage.config import Settings
    from iceberg_lineage.read.catalogs import CatalogSpec
    from iceberg_lineage.scan.driver import ScanOptions, scan
    from iceberg_lineage.scan.sinks import event_sink
    from iceberg_lineage.state.store import StateStore

    spec = CatalogSpec.of("bench", properties)
    if on_catalog is not None:
        on_catalog(spec.load())
    with StateStore(state_path) as state:
        summary = scan(ScanOptions(catalogs=(spec,), depth="summary"), Settings(), state,
                       event_sink(lambda event: "delivered"))
    assert summary.exit_code == 0, summary.failures
    return summary


def rescan(warehouse: Path, repeat: int) -> tuple[dict, dict, dict]:
    """``scan --depth summary`` with one state file, each run in a fresh process: the first, then ``repeat`` more
    (nothing changed), each after a run of the plain loop: the median loop, the first and the median rescan. One run
    of each moved by a third between runs on a quiet machine: a rescan takes tens of milliseconds."""
    with tempfile.TemporaryDirectory() as tmp:
        state = f"rescan={Path(tmp) / 'state.db'}"
        first = run(warehouse, state)
        plains, agains = [], []
        for _ in range(repeat):
            plains.append(run(warehouse, "plain"))
            agains.append(run(warehouse, state))
    assert all(a["unchanged"] == a["tables"] for a in agains), agains
    return _median(plains), first, _median(agains)


def _median(runs: list[dict]) -> dict:
    return sorted(runs, key=lambda r: r["seconds"])[len(runs) // 2]


def report_rescan(tables: int, repeat: int, plain: dict, first: dict, again: dict) -> None:
    print(f"rescan, nothing changed: {tables} tables x {COMMITS} commits, depth summary, counting sink, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; loop and rescan: medians of {repeat} runs")
    print(f"{'run':<34}{'seconds':>9}{'x plain':>9}")
    print(f"{'plain PyIceberg loop':<34}{plain['seconds']:>9.2f}{1.0:>9.2f}")
    print(f"{'scan, first (fresh state)':<34}{first['seconds']:>9.2f}{first['seconds'] / plain['seconds']:>9.2f}")
    print(f"{'scan again (same state)':<34}{again['seconds']:>9.2f}{again['seconds'] / plain['seconds']:>9.3f}")


def run(warehouse: Path, config: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--warehouse", str(warehouse), "--measure", config],
                         check=True, capture_output=True, text=True, env=child_env())
    return json.loads(out.stdout.strip().splitlines()[-1])


@functools.cache
def child_env() -> dict[str, str]:
    """The measured children's environment: compiled bytecode in a folder of this run's (``bytecode.py``), written by
    the first child, as an installed package has it."""
    folder = tempfile.mkdtemp(prefix="iceberg-lineage-bytecode-")
    atexit.register(shutil.rmtree, folder, True)
    return bytecode.compiled(Path(folder))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--warehouse", type=Path, default=Path(tempfile.gettempdir()) / "iceberg-lineage-scan-scale")
    parser.add_argument("--rescan", action="store_true", help="measure a scan with nothing changed (issue 32)")
    parser.add_argument("--repeat", type=int, default=5, help="with --rescan: runs of the loop and of the rescan")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    warehouse = args.warehouse.resolve()
    if args.measure:
        kind, _, state = args.measure.partition("=")
        print(json.dumps(measure_rescan(warehouse, Path(state)) if kind == "rescan" else measure(warehouse, kind)))
        return 0
    build(warehouse, args.tables)
    if args.rescan:
        report_rescan(args.tables, args.repeat, *rescan(warehouse, args.repeat))
        return 0
    load = os.getloadavg()[0]
    plains, results = [], []
    for c in CONFIGS:  # the loop again before each run: on a shared machine the load moves between runs
        plains.append(run(warehouse, "plain"))
        results.append(run(warehouse, c))
    base = {r["config"].rsplit(":", 1)[1]: r["snapshots"] / r["seconds"] for r in results if ":1:" in r["config"]}
    plain = {k: sum(p[k] for p in plains) / len(plains) for k in ("snapshots", "seconds", "peak_rss_mb", "cpu_s")}
    plain_rate = plain["snapshots"] / plain["seconds"]
    print(f"{args.tables} tables x {COMMITS} commits, {os.cpu_count()} CPUs, counting sink, "
          f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    print(f"{'run':<24}{'snapshots':>10}{'seconds':>9}{'snap/s':>9}{'speed-up':>10}{'vs plain':>10}{'peak MB':>9}"
          f"{'CPU s':>7}")
    print(f"{'plain PyIceberg loop':<24}{plain['snapshots']:>10.0f}{plain['seconds']:>9.1f}{plain_rate:>9.0f}"
          f"{'':>10}{1.0:>10.2f}{plain['peak_rss_mb']:>9.0f}{plain['cpu_s']:>7.1f}")
    for r, p in zip(results, plains):
        rate = r["snapshots"] / r["seconds"]
        plain_rate = p["snapshots"] / p["seconds"]
        speed_up = rate / base[r["config"].rsplit(":", 1)[1]]
        print(f"{'scan ' + r['config']:<24}{r['snapshots']:>10}{r['seconds']:>9.1f}{rate:>9.0f}{speed_up:>10.2f}"
              f"{rate / plain_rate:>10.2f}{r['peak_rss_mb']:>9.0f}{r['cpu_s']:>7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
