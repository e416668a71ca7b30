"""The embedded demo behind ``make run``: a SQLite catalog with a local warehouse under ``./warehouse``, a table
written over several commits, and the statistics of its whole history."""
from __future__ import annotations

import os
import sys
from pathlib import Path

WAREHOUSE = Path("warehouse")


def demo_catalog(root: Path = WAREHOUSE):
    """The embedded default catalog: SQLite in ``./warehouse/catalog.db``, warehouse ``./warehouse``."""
    from pyiceberg.catalog.sql import SqlCatalog

    root.mkdir(parents=True, exist_ok=True)
    root = root.resolve()
    return SqlCatalog("default", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")


def write_demo_table(catalog, identifier: str = "demo.orders", commits: int = 12):
    """A table with appends, an overwrite, a delete and a schema change, written with plain PyIceberg."""
    import pyarrow as pa
    from pyiceberg.exceptions import NamespaceAlreadyExistsError, NoSuchTableError
    from pyiceberg.expressions import EqualTo, LessThan

    namespace = identifier.rsplit(".", 1)[0]
    try:
        catalog.create_namespace(namespace)
    except NamespaceAlreadyExistsError:
        pass
    try:
        catalog.drop_table(identifier)
    except NoSuchTableError:
        pass

    def batch(start: int, n: int, region: str) -> pa.Table:
        return pa.table({
            "id": pa.array(range(start, start + n), pa.int64()),
            "region": pa.array([region] * n, pa.string()),
            "amount": pa.array([float(i % 97) for i in range(start, start + n)], pa.float64()),
        })

    first = batch(0, 100, "eu")
    table = catalog.create_table(identifier, schema=first.schema)
    table.append(first)
    for i in range(1, commits - 3):
        table.append(batch(i * 100, 100, ("eu", "us", "apac")[i % 3]))
    table.overwrite(batch(10_000, 50, "us"), overwrite_filter=EqualTo("region", "us"))
    table.delete(LessThan("id", 50))
    with table.update_schema() as update:
        from pyiceberg.types import StringType

        update.add_column("note", StringType(), doc="free text")
    import pyarrow as pa2

    more = batch(20_000, 10, "eu").append_column("note", pa2.array(["x"] * 10, pa2.string()))
    table.refresh().append(more)
    return table


def main() -> int:
    from .render import print_history
    from .stats import table_history

    catalog = demo_catalog()
    table = write_demo_table(catalog)
    history = table_history(table)
    print_history(history)
    print(f"\n{len(history)} snapshots of demo.orders in {WAREHOUSE.resolve()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYICEBERG_DOWNCAST_NS_TIMESTAMP_TO_US_ON_WRITE", "true")
    sys.exit(main())
