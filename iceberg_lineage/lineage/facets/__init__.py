"""OpenLineage facets for Iceberg tables: the registry's Iceberg facets, the custom statistics facet, and the pure
builders that fill them from metadata and snapshot statistics."""
from iceberg_lineage.lineage.facets.iceberg import (
    COMMIT_REPORT_KEY, SCAN_REPORT_KEY, CommitMetrics, IcebergCommitReportOutputDatasetFacet,
    IcebergScanReportInputDatasetFacet, ScanMetrics,
)
from iceberg_lineage.lineage.facets.statistics import (
    STATISTICS_KEY, IcebergTableStatisticsDatasetFacet, statistics_schema,
)

__all__ = [
    "COMMIT_REPORT_KEY",
    "CommitMetrics",
    "IcebergCommitReportOutputDatasetFacet",
    "IcebergScanReportInputDatasetFacet",
    "IcebergTableStatisticsDatasetFacet",
    "SCAN_REPORT_KEY",
    "STATISTICS_KEY",
    "ScanMetrics",
    "statistics_schema",
]
