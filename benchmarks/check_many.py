"""``check`` over many small tables: summary-depth rules only against the default set (whose ``small_files`` reads
every manifest entry).

One small table is written by PyIceberg (three appends, so three snapshots and three data files) and copied
``--tables`` times; each copy is read from its own directory (``relocate``), so no manifest is cached across
tables, as in a catalog of distinct tables. Each pass checks every table once with :func:`check_table` (the library
call behind ``iceberg-lineage check``), the two passes interleaved in blocks so machine drift hits both alike.

Figures: the median and mean time per table for each rule set, and the ratio default / summary-only.

    .venv/bin/python benchmarks/check_many.py [--tables 1000] [--block 50]
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

SUMMARY_ONLY = [{"tables": "*", "rules": {
    "row_count": {"max_drop_pct": 50}, "delete_ratio": {"max": 0.2}, "snapshots": {"max": 1000}, "schema": {},
    "freshness": {"max_age": "1d"}}}]


def write_table(root: Path) -> Path:
    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog

    (root / "warehouse").mkdir()
    catalog = SqlCatalog("bench", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}/warehouse")
    catalog.create_namespace("db")
    data = pa.table({"id": pa.array(range(10), pa.int64()), "v": pa.array([f"row {i}" for i in range(10)])})
    table = catalog.create_table("db.t", data.schema)
    for _ in range(3):
        table.append(data)
    return Path(table.location().removeprefix("file://"))


def time_pass(copies: list[Path], original: Path, settings, config) -> list[float]:
    from iceberg_lineage.checks import check_table

    times = []
    for copy in copies:
        started = time.perf_counter()
        result = check_table(str(copy), settings, config=config, relocate={str(original): str(copy)})
        times.append(time.perf_counter() - started)
        assert result.error is None and result.assertions
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--block", type=int, default=50)
    args = parser.parse_args()

    from iceberg_lineage.config import Settings
    from iceberg_lineage.quality.rules import DEFAULT_RULES, ChecksConfig, checks_config

    settings = Settings()
    summary_only, default = checks_config(SUMMARY_ONLY), ChecksConfig()
    assert summary_only.rules_for("t").depth() == "summary" and DEFAULT_RULES.depth() == "entries"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        original = write_table(root)
        copies = []
        for i in range(args.tables):
            copy = root / "copies" / f"t{i:05d}"
            shutil.copytree(original, copy)
            copies.append(copy)
        time_pass(copies[:20], original, settings, default)  # warm-up: imports, first-call caches
        times: dict[str, list[float]] = {"summary-depth rules": [], "default set": []}
        for start in range(0, len(copies), args.block):
            block = copies[start:start + args.block]
            times["summary-depth rules"] += time_pass(block, original, settings, summary_only)
            times["default set"] += time_pass(block, original, settings, default)
    print(f"check over {args.tables} small tables (3 snapshots, 3 data files each)")
    for name, values in times.items():
        print(f"  {name:20s} median {statistics.median(values) * 1000:7.2f} ms/table   "
              f"mean {statistics.fmean(values) * 1000:7.2f} ms/table   total {sum(values):6.1f} s")
    ratio = statistics.median(times["default set"]) / statistics.median(times["summary-depth rules"])
    print(f"  default set / summary-depth rules (medians): {ratio:.2f}x")


if __name__ == "__main__":
    main()
