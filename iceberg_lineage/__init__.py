"""iceberg-lineage: Apache Iceberg table metadata to OpenLineage lineage, with honest statistics."""
from __future__ import annotations

from iceberg_lineage._version import __version__

from iceberg_lineage.errors import (
    CatalogError, ConfigError, DeliveryError, IcebergLineageError, ManifestError, ManifestNotFoundError,
    MetadataError,
)
from iceberg_lineage.read.source import LoadedTable, open_table
from iceberg_lineage.stats import ColumnSelection, SnapshotStats, TableHistory, snapshot_stats, table_history

__all__ = [
    "observe",
    "run",
    "CatalogError",
    "ColumnSelection",
    "ConfigError",
    "DeliveryError",
    "IcebergLineageError",
    "LoadedTable",
    "ManifestError",
    "ManifestNotFoundError",
    "MetadataError",
    "SnapshotStats",
    "TableHistory",
    "open_table",
    "snapshot_stats",
    "table_history",
]


def __getattr__(name: str):
    """``observe`` and ``run`` load the hook (openlineage-python, ~0.5 s) only when asked for."""
    if name == "observe":
        from iceberg_lineage.hook import observe

        return observe
    if name == "run":
        from iceberg_lineage.hook import run

        return run
    raise AttributeError(f"module 'iceberg_lineage' has no attribute {name!r}")


def load_ipython_extension(ipython) -> None:
    """``%load_ext iceberg_lineage``: the ``%lineage`` magic (see :mod:`iceberg_lineage.notebook`)."""
    from iceberg_lineage.notebook import load_ipython_extension as load

    load(ipython)
