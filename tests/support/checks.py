"""Tables for the check rules, written by PyIceberg in a SQLite catalog, and the hand computations to hold the rules'
assertions against: figures read back through PyIceberg's own metadata tables, never through this package."""
from __future__ import annotations

from typing import Any

import pyarrow as pa

from iceberg_lineage.config import Settings
from iceberg_lineage.quality.rules import rule_set

SCHEMA = pa.schema([pa.field("id", pa.int32()), pa.field("customer_id", pa.string()), pa.field("amount", pa.float32())])


def rows(start: int, count: int, null_every: int = 0) -> pa.Table:
    """``count`` rows; every ``null_every``-th ``customer_id`` is null."""
    ids = list(range(start, start + count))
    customers = [None if null_every and i % null_every == 0 else f"c{i}" for i in ids]
    return pa.table({"id": pa.array(ids, pa.int32()), "customer_id": customers,
                     "amount": pa.array([i * 1.5 for i in ids], pa.float32())}, schema=SCHEMA)


def new_table(catalog: Any, name: str, properties: dict[str, str] | None = None) -> Any:
    return catalog.create_table(f"db.{name}", schema=SCHEMA, properties=properties or {})


def by_name(assertions: Any) -> dict[str, Any]:
    """Assertions keyed by name (and column where one has it)."""
    return {(a.name if a.column is None or a.assertion != "null_fraction" else f"{a.name}:{a.column}"): a
            for a in assertions}


def live_files(table: Any) -> list[dict[str, Any]]:
    """PyIceberg's own view of the current snapshot's live data files (its ``files`` metadata table)."""
    return [f for f in table.inspect.files().to_pylist() if f["content"] == 0]


def check(table: Any, rules: dict[str, Any], **kwargs: Any):
    from iceberg_lineage.checks import check_snapshot
    from iceberg_lineage.read.source import open_table

    return check_snapshot(open_table(table), rule_set(rules), Settings(), **kwargs)
