"""Statistics of Iceberg snapshots: the typed model, per-manifest partials, and the walker. Names load on first use:
a module that needs only the model (or a rescan that reads no manifest) does not import the walker and fastavro."""
from __future__ import annotations

from typing import TYPE_CHECKING

from iceberg_lineage.lazy import lazy_exports

if TYPE_CHECKING:
    from iceberg_lineage.config import ColumnSelection
    from iceberg_lineage.stats.model import (
        ColumnStats, FileSizeStats, PartitionCount, SnapshotStats, TableHistory, TableInfo,
    )
    from iceberg_lineage.stats.walker import ManifestCache, snapshot_stats, table_history, table_info

_LAZY = {
    "ColumnSelection": "iceberg_lineage.config",
    **dict.fromkeys(("ColumnStats", "FileSizeStats", "PartitionCount", "SnapshotStats", "TableHistory", "TableInfo"),
                    "iceberg_lineage.stats.model"),
    **dict.fromkeys(("ManifestCache", "snapshot_stats", "table_history", "table_info"), "iceberg_lineage.stats.walker"),
}
__all__ = sorted(_LAZY)
__getattr__ = lazy_exports(__name__, _LAZY, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
