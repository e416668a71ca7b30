"""Scanner throughput on many small tables, against a plain PyIceberg loop measured in the same run.

Builds (once, reused on the next run) a SQLite catalog with N tables x 3 commits: one template table is written with
``add_files`` of a single small parquet file, then cloned N-1 times (metadata JSON and manifest lists rewritten to
the clone's location, a fresh table-uuid, ``register_table``), which takes seconds instead of minutes of commits.

Then, each in a fresh subprocess (so peak RSS is per configuration) and with a fresh state file, a full history scan
at the default depth (entries) with 1, 2 and 4 thread workers, 2 processes and a 2-worker Dask LocalCluster, one at
depth summary; and the baseline: a loop that loads each table and reads its snapshot summaries. Events go to a
counting sink (no transport), so the figures are the scanner's own cost. Dask's peak RSS is the driver's only.

    .venv/bin/python benchmarks/scan_scale.py [--tables 1000] [--warehouse DIR]

``--rescan`` measures a scan with nothing changed instead (issue 32): ``scan --depth summary`` twice with one state
file, each in a fresh process (imports included), against the same plain loop; unchanged tables are skipped from
the catalog's listing.

    .venv/bin/python benchmarks/scan_scale.py --rescan --tables 400     # and --tables 10000
"""
from __future__ import annotations

import argparse
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

NAMESPACE = "bench"
COMMITS = 3
#: executor:workers[:depth]; the last line shows the scanner's own overhead when it reads no manifest at all.
CONFIGS = ("threads:1", "threads:2", "threads:4", "processes:2", "dask:2", "threads:4:summary")


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


def measure(warehouse: Path, config: str) -> dict:
    """One configuration, in this process: snapshots, seconds and peak RSS."""
    cat = catalog(warehouse)
    started = time.monotonic()
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
    return {"config": config, "snapshots": snapshots, "seconds": seconds,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def measure_rescan(warehouse: Path, state_path: Path) -> dict:
    """One summary-depth scan with ``state_path`` in this fresh process, timed from where the plain loop's clock starts
    (PyIceberg imported, the catalog made): iceberg-lineage's imports count, openlineage-python's among them."""
    cat = catalog(warehouse)
    started = time.monotonic()
    from iceberg_lineage.config import Settings
    from iceberg_lineage.read.catalogs import CatalogSpec
    from iceberg_lineage.scan.driver import ScanOptions, scan
    from iceberg_lineage.scan.sinks import event_sink
    from iceberg_lineage.state.store import StateStore

    spec = CatalogSpec.of("bench", {"type": "sql", **cat.properties})
    with StateStore(state_path) as state:
        summary = scan(ScanOptions(catalogs=(spec,), depth="summary"), Settings(), state,
                       event_sink(lambda event: "delivered"))
    assert summary.exit_code == 0, summary.failures
    return {"config": "rescan", "seconds": time.monotonic() - started, "unchanged": summary.unchanged,
            "tables": summary.tables_scanned}


def rescan(warehouse: Path) -> tuple[dict, dict]:
    """``scan --depth summary`` twice with one state file, each in a fresh process: the first and the second."""
    with tempfile.TemporaryDirectory() as tmp:
        first, again = (run(warehouse, f"rescan={Path(tmp) / 'state.db'}") for _ in range(2))
    assert again["unchanged"] == again["tables"], again
    return first, again


def report_rescan(tables: int, plain: dict, first: dict, again: dict) -> None:
    print(f"rescan, nothing changed: {tables} tables x {COMMITS} commits, depth summary, counting sink, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"{'run':<34}{'seconds':>9}{'x plain':>9}")
    print(f"{'plain PyIceberg loop':<34}{plain['seconds']:>9.2f}{1.0:>9.2f}")
    print(f"{'scan, first (fresh state)':<34}{first['seconds']:>9.2f}{first['seconds'] / plain['seconds']:>9.2f}")
    print(f"{'scan again (same state)':<34}{again['seconds']:>9.2f}{again['seconds'] / plain['seconds']:>9.3f}")


def run(warehouse: Path, config: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--warehouse", str(warehouse), "--measure", config],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--warehouse", type=Path, default=Path(tempfile.gettempdir()) / "iceberg-lineage-scan-scale")
    parser.add_argument("--rescan", action="store_true", help="measure a scan with nothing changed (issue 32)")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    warehouse = args.warehouse.resolve()
    if args.measure:
        kind, _, state = args.measure.partition("=")
        print(json.dumps(measure_rescan(warehouse, Path(state)) if kind == "rescan" else measure(warehouse, kind)))
        return 0
    build(warehouse, args.tables)
    if args.rescan:
        report_rescan(args.tables, run(warehouse, "plain"), *rescan(warehouse))
        return 0
    plain = run(warehouse, "plain")
    results = [run(warehouse, c) for c in CONFIGS]
    base = results[0]["snapshots"] / results[0]["seconds"]
    plain_rate = plain["snapshots"] / plain["seconds"]
    print(f"{args.tables} tables x {COMMITS} commits, {os.cpu_count()} CPUs, depth entries unless said, counting sink, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'run':<24}{'snapshots':>10}{'seconds':>9}{'snap/s':>9}{'speed-up':>10}{'vs plain':>10}{'peak MB':>9}")
    print(f"{'plain PyIceberg loop':<24}{plain['snapshots']:>10}{plain['seconds']:>9.1f}{plain_rate:>9.0f}"
          f"{'':>10}{1.0:>10.2f}{plain['peak_rss_mb']:>9.0f}")
    for r in results:
        rate = r["snapshots"] / r["seconds"]
        print(f"{'scan ' + r['config']:<24}{r['snapshots']:>10}{r['seconds']:>9.1f}{rate:>9.0f}{rate / base:>10.2f}"
              f"{rate / plain_rate:>10.2f}{r['peak_rss_mb']:>9.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
