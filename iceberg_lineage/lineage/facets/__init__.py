"""OpenLineage facets for Iceberg tables: the registry's Iceberg facets, the custom statistics facet, and the pure
builders that fill them from metadata and snapshot statistics, one module per job (table, statistics, reports,
run). Every facet carries this project's producer; unknown figures are left out (``None`` is dropped by the
serialiser), never written as 0."""
from iceberg_lineage.lineage.facets.common import PRODUCER, iso_ms, iso_time, ms_to_datetime
from iceberg_lineage.lineage.facets.iceberg import (
    COMMIT_REPORT_KEY, SCAN_REPORT_KEY, CommitMetrics, IcebergCommitReportOutputDatasetFacet,
    IcebergScanReportInputDatasetFacet, ScanMetrics,
)
from iceberg_lineage.lineage.facets.reports import (
    ENVIRONMENT_KEYS, commit_report_facet, commit_report_facet_of, input_statistics_facet, output_statistics_facet,
    scan_report_facet, scan_report_input_facets,
)
from iceberg_lineage.lineage.facets.scan import (
    SCAN_KEY, IcebergLineageScanRunFacet, scan_summary_facet, scan_summary_schema,
)
from iceberg_lineage.lineage.facets.run import (
    EXTERNAL_QUERY_KEYS, external_query_facet, job_type_facet, processing_engine_facet,
)
from iceberg_lineage.lineage.facets.statistics import (
    STATISTICS_KEY, IcebergTableStatisticsDatasetFacet, data_quality_facet, data_quality_input_facet, schema_change,
    statistics_facet, statistics_schema,
)
from iceberg_lineage.lineage.facets.table import (
    SOURCE, STATIC_CATALOG_NAME, LifecycleStateChange, catalog_facet, dataset_type_facet, documentation_facet,
    lifecycle_facet, ownership_facet, removes_data, schema_facet, snapshot_lifecycle, storage_facet, symlinks_facet,
    version_facet,
)

__all__ = [
    "COMMIT_REPORT_KEY",
    "CommitMetrics",
    "ENVIRONMENT_KEYS",
    "EXTERNAL_QUERY_KEYS",
    "IcebergCommitReportOutputDatasetFacet",
    "IcebergLineageScanRunFacet",
    "IcebergScanReportInputDatasetFacet",
    "IcebergTableStatisticsDatasetFacet",
    "LifecycleStateChange",
    "PRODUCER",
    "SCAN_KEY",
    "SCAN_REPORT_KEY",
    "SOURCE",
    "STATIC_CATALOG_NAME",
    "STATISTICS_KEY",
    "ScanMetrics",
    "catalog_facet",
    "commit_report_facet",
    "commit_report_facet_of",
    "data_quality_facet",
    "data_quality_input_facet",
    "dataset_type_facet",
    "documentation_facet",
    "external_query_facet",
    "input_statistics_facet",
    "iso_ms",
    "iso_time",
    "job_type_facet",
    "lifecycle_facet",
    "ms_to_datetime",
    "output_statistics_facet",
    "ownership_facet",
    "processing_engine_facet",
    "removes_data",
    "scan_report_facet",
    "scan_report_input_facets",
    "scan_summary_facet",
    "scan_summary_schema",
    "schema_change",
    "schema_facet",
    "snapshot_lifecycle",
    "statistics_facet",
    "statistics_schema",
    "storage_facet",
    "symlinks_facet",
    "version_facet",
]
