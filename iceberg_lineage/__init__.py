"""iceberg-lineage: Apache Iceberg table metadata to OpenLineage lineage, with honest statistics.

The public Python API (docs/api.md), each function returning the model the matching CLI command prints:

    import iceberg_lineage as il
    il.scan_catalog("lake")                        # iceberg-lineage scan --catalog lake
    il.table_stats("db.orders", catalog="lake")    # iceberg-lineage stats --catalog lake --table db.orders
    il.table_events("db.orders", catalog="lake")   # iceberg-lineage events ...
    il.check_tables(catalog="lake")                # iceberg-lineage check --catalog lake
    il.observe(catalog)                            # the hook: commits and scans emit events as they happen

Every name but the errors is imported on first use, so ``import iceberg_lineage`` stays fast.
"""
from __future__ import annotations

from iceberg_lineage.lazy import lazy_exports
from typing import TYPE_CHECKING, Any

from iceberg_lineage._version import __version__
from iceberg_lineage.errors import (
    CatalogError, ConfigError, DeliveryError, IcebergLineageError, ManifestError, ManifestNotFoundError,
    MetadataError,
)

if TYPE_CHECKING:
    from iceberg_lineage.api import ScanResult, check_tables, scan_catalog, table_events, table_stats
    from iceberg_lineage.hook import observe, run
    from iceberg_lineage.read.source import LoadedTable, open_table
    from iceberg_lineage.stats import ColumnSelection, SnapshotStats, TableHistory, snapshot_stats, table_history

#: Where each lazily imported name lives.
_LAZY: dict[str, str] = {
    "scan_catalog": "iceberg_lineage.api",
    "table_stats": "iceberg_lineage.api",
    "table_events": "iceberg_lineage.api",
    "check_tables": "iceberg_lineage.api",
    "ScanResult": "iceberg_lineage.api",
    "observe": "iceberg_lineage.hook",
    "run": "iceberg_lineage.hook",
    "open_table": "iceberg_lineage.read.source",
    "LoadedTable": "iceberg_lineage.read.source",
    "snapshot_stats": "iceberg_lineage.stats",
    "table_history": "iceberg_lineage.stats",
    "ColumnSelection": "iceberg_lineage.stats",
    "SnapshotStats": "iceberg_lineage.stats",
    "TableHistory": "iceberg_lineage.stats",
}

__all__ = [
    "__version__",
    "CatalogError",
    "ConfigError",
    "DeliveryError",
    "IcebergLineageError",
    "ManifestError",
    "ManifestNotFoundError",
    "MetadataError",
    *_LAZY,
]


__getattr__ = lazy_exports(__name__, _LAZY, globals())  # PyIceberg, openlineage-python: about a second


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext iceberg_lineage``: the ``%lineage`` magic (see :mod:`iceberg_lineage.notebook`)."""
    from iceberg_lineage.notebook import load_ipython_extension as load

    load(ipython)
