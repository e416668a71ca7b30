"""A demo table written with plain PyIceberg; ``make run`` (:mod:`iceberg_lineage.demo.run`) fills the embedded
default catalog (:func:`iceberg_lineage.read.catalogs.embedded_sql_catalog`) with them and scans it."""
from __future__ import annotations


def write_demo_table(catalog, identifier: str = "demo.orders", commits: int = 12):
    """A table with appends, an overwrite, a delete and a schema change, written with plain PyIceberg."""
    import pyarrow as pa
    from pyiceberg.exceptions import NamespaceAlreadyExistsError, NoSuchTableError
    from pyiceberg.expressions import EqualTo, LessThan
    from pyiceberg.types import StringType

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
        update.add_column("note", StringType(), doc="free text")
    more = batch(20_000, 10, "eu").append_column("note", pa.array(["x"] * 10, pa.string()))
    table.refresh().append(more)
    return table
