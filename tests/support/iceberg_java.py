"""What Iceberg Java itself reports of a table at a snapshot, from Spark's metadata tables (``VERSION AS OF``), in
the shape of ``iceberg-lineage stats --format json``, so that the two can be compared figure by figure.

The metadata tables read: ``snapshots``, ``files`` (data and delete files with ``readable_metrics``),
``manifests`` and ``entries``; ``count(*)`` at the snapshot gives the live rows.
"""
from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

#: Types whose bounds Iceberg truncates (``truncate(16)``, the default mode of these tables).
TRUNCATABLE = ("string", "binary")
TRUNCATE_LENGTH = 16


def java_snapshots(spark, table: str) -> list[dict[str, Any]]:
    """The ``snapshots`` metadata table in commit order."""
    rows = spark.sql(f"SELECT snapshot_id, parent_id, operation, unix_millis(committed_at) AS timestamp_ms, summary "
                     f"FROM {table}.snapshots ORDER BY committed_at, snapshot_id")
    return [row.asDict() for row in rows]


def _files(spark, table: str, snapshot_id: int) -> list[dict[str, Any]]:
    """Every live data and delete file at the snapshot, with its metrics flattened per top-level column.

    Timestamps are read as text (UTC, the session's zone) because PySpark would turn them into local times."""
    frame = spark.session.sql(f"SELECT * FROM {table}.files VERSION AS OF {snapshot_id}")
    metrics = frame.schema["readable_metrics"].dataType
    selects = ["content", "file_format", "spec_id", "record_count", "file_size_in_bytes"]
    names = frame.columns
    selects += [name for name in ("partition", "content_size_in_bytes", "referenced_data_file") if name in names]
    for column in metrics.fields:
        ref = f"readable_metrics.`{column.name}`"
        for leaf in column.dataType.fields:
            value = f"{ref}.{leaf.name}"
            if leaf.dataType.typeName() in ("timestamp", "timestamp_ntz"):
                value = f"CAST({value} AS STRING)"
            selects.append(f"{value} AS `{column.name}\x00{leaf.name}`")
    rows = frame.selectExpr(*selects).collect()
    files = []
    for row in rows:
        record = row.asDict()
        columns: dict[str, dict] = defaultdict(dict)
        for key in list(record):
            if "\x00" in key:
                column, leaf = key.split("\x00")
                columns[column][leaf] = record.pop(key)
        record["columns"] = dict(columns)
        files.append(record)
    return files


def _is_dv(file: dict) -> bool:
    return file["content"] == 1 and file["file_format"] == "PUFFIN"


def _counted_bytes(file: dict) -> int:
    """The bytes a file counts for: a DV's are its blob's ``content_size_in_bytes`` (several DVs share one Puffin
    file), as in the summary."""
    return file["content_size_in_bytes"] if _is_dv(file) else file["file_size_in_bytes"]


def _column_figures(data: list[dict], columns: dict[str, tuple[int, str]]) -> dict[int, dict]:
    """Per field id: value, null and NaN counts summed over the live data files, bounds as the min and max of theirs.

    Like the package, a bound is given only when every file has one or holds only nulls in the column: a file
    written before the column existed has no metrics for it, so its bounds stay unknown (Iceberg Java reports the
    files one by one and has no aggregate to compare with)."""
    out = {}
    for name, (field_id, type_name) in columns.items():
        metrics = [f["columns"].get(name, {}) for f in data]

        def total(leaf: str) -> int | None:
            values = [m.get(leaf) for m in metrics]
            return None if None in values else sum(values)  # no file (an empty snapshot): no values, 0

        def bound(leaf: str, pick):
            values = [m.get(leaf) for m in metrics]
            known = all(v is not None or (m.get("value_count") is not None and m.get("value_count") ==
                                          m.get("null_value_count")) for v, m in zip(values, metrics))
            present = [v for v in values if v is not None]
            return pick(present) if known and present else None

        low, high = bound("lower_bound", min), bound("upper_bound", max)
        cut = type_name in TRUNCATABLE
        # docs/stats.md, truncated bounds: a cut lower bound is N long; a cut upper bound at most N, and never a value,
        # as a bound equal to some file's lower bound is
        lower_cut = cut and low is not None and len(low) >= TRUNCATE_LENGTH
        upper_cut = cut and high is not None and len(high) <= TRUNCATE_LENGTH and high not in {
            m.get("lower_bound") for m in metrics}
        out[field_id] = {
            "name": name,
            "value_count": total("value_count"),
            "null_count": total("null_value_count"),
            # Iceberg keeps NaN counts of float and double only; the package has no such figure for other types.
            "nan_count": total("nan_value_count") if type_name in ("float", "double") else None,
            "min": low,
            "max": high,
            "lower_truncated": lower_cut,
            "upper_truncated": upper_cut,
            "bounds_truncated": lower_cut or upper_cut,
        }
    return out


def _file_sizes(data: list[dict]) -> dict[str, Any]:
    sizes = [f["file_size_in_bytes"] for f in data]
    mean = sum(sizes) / len(sizes) if sizes else None
    return {"count": len(sizes), "min": min(sizes, default=None), "max": max(sizes, default=None), "mean": mean}


def _partitions(data: list[dict]) -> list[dict]:
    by_spec: dict[int, list] = defaultdict(list)
    for f in data:
        by_spec[f["spec_id"]].append(f.get("partition"))
    return [{"spec_id": spec, "partitions": len(set(values)), "files": len(values)}
            for spec, values in sorted(by_spec.items())]


def _entries(spark, table: str, snapshot_id: int) -> dict[str, int]:
    """What the snapshot itself added and removed, from its manifest entries (status 1 added, 2 deleted)."""
    frame = spark.session.sql(f"SELECT * FROM {table}.entries VERSION AS OF {snapshot_id} "
                              f"WHERE snapshot_id = {snapshot_id} AND status IN (1, 2)")
    v3 = "content_size_in_bytes" in frame.schema["data_file"].dataType.names
    leaves = ["content", "file_format", "record_count", "file_size_in_bytes"] + (["content_size_in_bytes"] if v3 else [])
    rows = frame.selectExpr("status", *(f"data_file.{leaf} AS {leaf}" for leaf in leaves)).collect()
    figures = dict.fromkeys((f"{verb}_{what}" for verb in ("added", "removed")
                             for what in ("data_files", "delete_files", "records", "files_size_bytes")), 0)
    for row in rows:
        verb = "added" if row.status == 1 else "removed"
        figures[f"{verb}_files_size_bytes"] += _counted_bytes(row.asDict())
        if row.content == 0:
            figures[f"{verb}_data_files"] += 1
            figures[f"{verb}_records"] += row.record_count
        else:
            figures[f"{verb}_delete_files"] += 1
    return figures


def java_figures(spark, table: str, snapshot_id: int, types: dict[str, tuple[int, str]]) -> dict[str, Any]:
    """Every figure Iceberg Java's metadata tables give of the table at one snapshot, keyed as the package's JSON."""
    files = _files(spark, table, snapshot_id)
    data = [f for f in files if f["content"] == 0]
    positions = [f for f in files if f["content"] == 1 and not _is_dv(f)]
    dvs = [f for f in files if _is_dv(f)]
    equality = [f for f in files if f["content"] == 2]
    manifests = spark.sql(f"SELECT content FROM {table}.manifests VERSION AS OF {snapshot_id}")
    live = spark.sql(f"SELECT count(*) AS n FROM {table} VERSION AS OF {snapshot_id}")[0].n
    data_bytes = sum(f["file_size_in_bytes"] for f in data)
    delete_bytes = sum(_counted_bytes(f) for f in positions + dvs + equality)
    return {
        "data_files": len(data),
        "records": sum(f["record_count"] for f in data),
        "data_files_size_bytes": data_bytes,
        "position_delete_files": len(positions),
        "dv_files": len(dvs),
        "equality_delete_files": len(equality),
        "delete_files": len(positions) + len(dvs) + len(equality),
        # The package's position_deletes include the rows DVs delete, as the summary's total-position-deletes.
        "position_deletes": sum(f["record_count"] for f in positions + dvs),
        "dv_deletes": sum(f["record_count"] for f in dvs),
        "equality_deletes": sum(f["record_count"] for f in equality),
        "delete_files_size_bytes": delete_bytes,
        "total_files_size_bytes": data_bytes + delete_bytes,
        "data_manifests": sum(1 for m in manifests if m.content == 0),
        "delete_manifests": sum(1 for m in manifests if m.content == 1),
        "live_records": live,
        "partitions": _partitions(data),
        "file_sizes": _file_sizes(data),
        "columns": _column_figures(data, types),
        **_entries(spark, table, snapshot_id),
    }


def column_types(metadata: str, io_properties: Mapping[str, str] | None = None) -> dict[str, tuple[int, str]]:
    """Top-level column name -> (field id, Iceberg type) in the current schema of a metadata file; Spark's
    metadata tables name columns by it even at an older snapshot. A file in object storage (``s3://``) is read with
    PyIceberg's FileIO and ``io_properties``."""
    if "://" in metadata and not metadata.startswith("file:"):
        from pyiceberg.io import load_file_io

        with load_file_io(dict(io_properties or {}), metadata).new_input(metadata).open() as stream:
            doc = json.loads(stream.read())
    else:
        doc = json.loads(Path(metadata.removeprefix("file:")).read_text())
    schema = next(s for s in doc["schemas"] if s["schema-id"] == doc["current-schema-id"])
    return {f["name"]: (f["id"], f["type"]) for f in schema["fields"] if isinstance(f["type"], str)}


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``iceberg-lineage ARGS`` through the real CLI entry, without the developer's lineage settings."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENLINEAGE", "ICEBERG_LINEAGE", "PYICEBERG_"))}
    command = [sys.executable, "-m", "iceberg_lineage.cli", *args]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120, env={**clean, **(env or {})})
    assert proc.returncode == 0, proc.stderr
    return proc


def lineage_stats(metadata: str, *args: str) -> dict[str, Any]:
    """``iceberg-lineage stats --all-snapshots --format json`` of a metadata file, parsed."""
    return json.loads(run_cli("stats", "--metadata", metadata, "--all-snapshots", "--format", "json", *args).stdout)


def catalog_stats(catalog: str, properties: Mapping[str, str], identifier: str, *args: str) -> dict[str, Any]:
    """The same through a catalog, as a user configures one: ``.pyiceberg.yaml`` (in ``PYICEBERG_HOME``) gives
    ``catalog`` its ``properties`` (with the FileIO's), and the CLI is asked ``--catalog NAME --table ID``."""
    with tempfile.TemporaryDirectory(prefix="pyiceberg-home-") as home:
        config = {"catalog": {catalog: dict(properties)}}
        (Path(home) / ".pyiceberg.yaml").write_text(yaml.safe_dump(config))
        proc = run_cli("stats", "--catalog", catalog, "--table", identifier, "--all-snapshots", "--format", "json",
                       *args, env={"PYICEBERG_HOME": home})
    return json.loads(proc.stdout)


def _comparable(value: Any) -> Any:
    """Bounds of both sides in one form: ISO text of dates and times is parsed, timestamps to naive UTC."""
    if isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value)
        except ValueError:
            return value
        if parsed.tzinfo is not None:
            parsed = parsed.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return parsed
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return dt.datetime(value.year, value.month, value.day)
    return value


def differences(ours: dict[str, Any], java: dict[str, Any], ignore: set[str] = frozenset()) -> list[str]:
    """Every figure of one snapshot where the package and Iceberg Java differ, one line each."""
    out = []
    for key, expected in java.items():
        if key in ignore or key == "columns":
            continue
        if key == "live_records" and ours.get(key) is None:
            # The package gives live rows only where they are exact: no deletes, or DVs only (docs/stats.md).
            if not (java["position_deletes"] > java["dv_deletes"] or java["equality_deletes"]):
                out.append(f"live_records: ours None without position or equality deletes, Iceberg Java {expected}")
            continue
        got = ours.get(key)
        if key == "file_sizes" and got is not None:
            got = {k: got[k] for k in expected}
        if got != expected:
            out.append(f"{key}: ours {ours.get(key)!r}, Iceberg Java {expected!r}")
    mine = {column["field_id"]: (name, column) for name, column in ours["columns"].items()}
    for field_id, figures in java["columns"].items():
        name, column = mine.get(field_id, (figures["name"], None))
        if column is None:
            # Only the columns of the snapshot's own schema are the package's; a later one has no metrics here (or
            # no values at all: a snapshot without files).
            if figures["value_count"]:
                out.append(f"columns.{name}: missing, Iceberg Java {figures!r}")
            continue
        for key, expected in figures.items():
            if key == "name" or f"columns.{key}" in ignore:
                continue
            got = column.get(key)
            if key in ("min", "max"):
                got, expected = _comparable(got), _comparable(expected)
            if got != expected and not (got != got and expected != expected):  # NaN bounds equal
                out.append(f"columns.{name}.{key}: ours {column.get(key)!r}, Iceberg Java {figures[key]!r}")
    return out
