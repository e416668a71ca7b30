"""Statistics of Iceberg snapshots: the typed model, per-manifest partials, and the walker."""
from iceberg_lineage.config import ColumnSelection
from iceberg_lineage.stats.model import (
    ColumnStats, FileSizeStats, PartitionCount, SnapshotStats, TableHistory, TableInfo,
)
from iceberg_lineage.stats.walker import ManifestCache, snapshot_stats, table_history, table_info

__all__ = [
    "ColumnSelection",
    "ColumnStats",
    "FileSizeStats",
    "ManifestCache",
    "PartitionCount",
    "SnapshotStats",
    "TableHistory",
    "TableInfo",
    "snapshot_stats",
    "table_history",
    "table_info",
]
