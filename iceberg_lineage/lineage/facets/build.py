"""Pure functions from table metadata and snapshot statistics to OpenLineage facets.

Every facet carries this project's producer. Unknown figures are left out (``None`` is dropped by the serialiser),
never written as 0.
"""
from __future__ import annotations

import datetime as dt
import decimal
import math
from typing import Any, Iterable, Mapping

from openlineage.client.facet_v2 import (
    catalog_dataset,
    data_quality_metrics_dataset,
    dataset_type_dataset,
    dataset_version_dataset,
    documentation_dataset,
    external_query_run,
    input_statistics_input_dataset,
    job_type_job,
    lifecycle_state_change_dataset,
    output_statistics_output_dataset,
    ownership_dataset,
    processing_engine_run,
    schema_dataset,
    storage_dataset,
    symlinks_dataset,
)

from iceberg_lineage._version import __version__
from iceberg_lineage.read.metadata import Field, Schema
from iceberg_lineage.lineage.naming import Identifier
from iceberg_lineage.redact import safe_properties, strip_userinfo
from iceberg_lineage.read.source import LoadedTable
from iceberg_lineage.stats.model import ColumnStats, SnapshotStats, bound_to_json
from iceberg_lineage.lineage.facets.iceberg import (
    CommitMetrics, IcebergCommitReportOutputDatasetFacet, IcebergScanReportInputDatasetFacet, ScanMetrics,
)
from iceberg_lineage.lineage.facets.statistics import IcebergTableStatisticsDatasetFacet

PRODUCER = f"https://github.com/iceberg-lineage/iceberg-lineage/tree/{__version__}"
#: ``catalog.source``: the system that reported the catalog.
SOURCE = "iceberg-lineage"
#: PyIceberg names the catalog of a bare metadata file (``StaticTable``) this way.
STATIC_CATALOG_NAME = "static-table"

LifecycleStateChange = lifecycle_state_change_dataset.LifecycleStateChange

#: icebergCommitReport.commitMetrics field <- snapshot summary key (Iceberg ``CommitMetricsResult.from``).
COMMIT_METRICS_FROM_SUMMARY: Mapping[str, str] = {
    "addedDataFiles": "added-data-files",
    "removedDataFiles": "deleted-data-files",
    "totalDataFiles": "total-data-files",
    "addedDeleteFiles": "added-delete-files",
    "addedEqualityDeleteFiles": "added-equality-delete-files",
    "addedPositionalDeleteFiles": "added-position-delete-files",
    "addedDVs": "added-dvs",
    "removedDeleteFiles": "removed-delete-files",
    "removedEqualityDeleteFiles": "removed-equality-delete-files",
    "removedPositionalDeleteFiles": "removed-position-delete-files",
    "removedDVs": "removed-dvs",
    "totalDeleteFiles": "total-delete-files",
    "addedRecords": "added-records",
    "removedRecords": "deleted-records",
    "totalRecords": "total-records",
    "addedFilesSizeInBytes": "added-files-size",
    "removedFilesSizeInBytes": "removed-files-size",
    "totalFilesSizeInBytes": "total-files-size",
    "addedPositionalDeletes": "added-position-deletes",
    "removedPositionalDeletes": "removed-position-deletes",
    "totalPositionalDeletes": "total-position-deletes",
    "addedEqualityDeletes": "added-equality-deletes",
    "removedEqualityDeletes": "removed-equality-deletes",
    "totalEqualityDeletes": "total-equality-deletes",
}
#: Summary keys Iceberg's environment context adds to every commit; they become the commit report's metadata.
ENVIRONMENT_KEYS = ("engine-name", "engine-version", "app-id", "iceberg-version")
#: Summary keys naming the engine's job or query, in order of preference.
EXTERNAL_QUERY_KEYS = ("spark.app.id", "flink.job-id", "trino_query_id", "app-id")

#: icebergTableStatistics path <- SnapshotStats figure; the same paths key ``sources``.
FIGURE_PATHS: Mapping[str, tuple[str, ...]] = {
    "data_files": ("dataFiles",),
    "records": ("records",),
    "live_records": ("liveRecords",),
    "data_files_size_bytes": ("bytes", "data"),
    "delete_files_size_bytes": ("bytes", "delete"),
    "total_files_size_bytes": ("bytes", "total"),
    "position_delete_files": ("deleteFiles", "position"),
    "equality_delete_files": ("deleteFiles", "equality"),
    "dv_files": ("deleteFiles", "dv"),
    "delete_files": ("deleteFiles", "total"),
    "position_deletes": ("deletedRows", "position"),
    "equality_deletes": ("deletedRows", "equality"),
    "dv_deletes": ("deletedRows", "dv"),
    "added_data_files": ("added", "dataFiles"),
    "added_delete_files": ("added", "deleteFiles"),
    "added_records": ("added", "records"),
    "added_files_size_bytes": ("added", "bytes"),
    "removed_data_files": ("removed", "dataFiles"),
    "removed_delete_files": ("removed", "deleteFiles"),
    "removed_records": ("removed", "records"),
    "removed_files_size_bytes": ("removed", "bytes"),
    "data_manifests": ("manifests", "data"),
    "delete_manifests": ("manifests", "delete"),
}

_P: dict[str, Any] = {"producer": PRODUCER}


def iso_time(moment: dt.datetime) -> str:
    """UTC, millisecond precision, ``Z`` suffix: one stable spelling for every timestamp we emit."""
    return moment.astimezone(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def ms_to_datetime(timestamp_ms: int) -> dt.datetime:
    """Exact (integer) conversion: run ids hash the datetime's text, so float rounding must not leak in."""
    return _EPOCH + dt.timedelta(milliseconds=timestamp_ms)


def summary_int(summary: Mapping[str, str], key: str) -> int | None:
    try:
        return int(summary[key])
    except (KeyError, ValueError):
        return None


# -- table facets ----------------------------------------------------------------------------------------------------

def version_facet(snapshot_id: int) -> dataset_version_dataset.DatasetVersionDatasetFacet:
    return dataset_version_dataset.DatasetVersionDatasetFacet(datasetVersion=str(snapshot_id), **_P)


def symlinks_facet(identifiers: Iterable[Identifier]) -> symlinks_dataset.SymlinksDatasetFacet | None:
    found = [symlinks_dataset.Identifier(namespace=i.namespace, name=i.name, type=i.type) for i in identifiers]
    return symlinks_dataset.SymlinksDatasetFacet(identifiers=found, **_P) if found else None


def schema_facet(schema: Schema) -> schema_dataset.SchemaDatasetFacet:
    """Nested fields with Iceberg type names and ``doc`` as description."""

    def convert(fields: tuple[Field, ...]) -> list[schema_dataset.SchemaDatasetFacetFields]:
        return [
            schema_dataset.SchemaDatasetFacetFields(
                name=f.name, type=f.type, description=f.doc, ordinal_position=i, fields=convert(f.children) or None
            )
            for i, f in enumerate(fields, start=1)
        ]

    return schema_dataset.SchemaDatasetFacet(fields=convert(schema.fields), **_P)


def catalog_facet(table: LoadedTable) -> catalog_dataset.CatalogDatasetFacet:
    """Catalog type, name and URIs without credentials; secret-named properties are never copied."""
    props = table.catalog_properties
    uri = props.get("uri")
    warehouse = props.get("warehouse")
    safe = {k: v for k, v in sorted(safe_properties(props).items()) if k not in ("uri", "warehouse")}
    return catalog_dataset.CatalogDatasetFacet(
        framework="iceberg",
        type=table.catalog_type or "static",
        name=table.catalog_name or STATIC_CATALOG_NAME,
        metadataUri=strip_userinfo(uri) if uri else table.metadata.metadata_location,
        warehouseUri=strip_userinfo(warehouse) if warehouse else None,
        source=SOURCE,
        catalogProperties=safe,
        **_P,
    )


def storage_facet(properties: Mapping[str, str]) -> storage_dataset.StorageDatasetFacet:
    return storage_dataset.StorageDatasetFacet(
        storageLayer="iceberg", fileFormat=properties.get("write.format.default", "parquet").lower(), **_P
    )


def dataset_type_facet() -> dataset_type_dataset.DatasetTypeDatasetFacet:
    return dataset_type_dataset.DatasetTypeDatasetFacet(datasetType="TABLE", **_P)


def documentation_facet(properties: Mapping[str, str]) -> documentation_dataset.DocumentationDatasetFacet | None:
    comment = properties.get("comment")
    return documentation_dataset.DocumentationDatasetFacet(description=comment, **_P) if comment else None


def ownership_facet(properties: Mapping[str, str]) -> ownership_dataset.OwnershipDatasetFacet | None:
    """The ``owner`` property as an owner URN (``user:<name>`` unless it already has a prefix)."""
    owner = properties.get("owner")
    if not owner:
        return None
    name = owner if ":" in owner else f"user:{owner}"
    return ownership_dataset.OwnershipDatasetFacet(owners=[ownership_dataset.Owner(name=name)], **_P)


def lifecycle_facet(
    change: LifecycleStateChange, previous: tuple[str, str] | None = None
) -> lifecycle_state_change_dataset.LifecycleStateChangeDatasetFacet:
    prev = lifecycle_state_change_dataset.PreviousIdentifier(namespace=previous[0], name=previous[1]) if previous else None
    return lifecycle_state_change_dataset.LifecycleStateChangeDatasetFacet(
        lifecycleStateChange=change, previousIdentifier=prev, **_P
    )


# -- statistics ------------------------------------------------------------------------------------------------------

def _numeric(value: Any) -> float | int | None:
    """A bound usable as a JSON number: finite ints, floats and decimals only."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, decimal.Decimal):
        return float(value) if value.is_finite() else None
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return None


def _column_metrics(col: ColumnStats) -> data_quality_metrics_dataset.ColumnMetrics | None:
    numeric = col.is_numeric
    metrics = data_quality_metrics_dataset.ColumnMetrics(
        nullCount=col.null_count,
        distinctCount=col.distinct_count,
        count=col.value_count,
        min=_numeric(col.min) if numeric else None,
        max=_numeric(col.max) if numeric else None,
    )
    known = (metrics.nullCount, metrics.distinctCount, metrics.count, metrics.min, metrics.max)
    return metrics if any(v is not None for v in known) else None


def data_quality_facet(
    stats: SnapshotStats, capture_date: dt.datetime, *, with_columns: bool = True
) -> data_quality_metrics_dataset.DataQualityMetricsDatasetFacet:
    """Table-level metrics of the snapshot; ``columnMetrics`` is required, so it is ``{}`` at summary depth (or
    with ``with_columns=False``, used to keep an event small)."""
    columns = {
        name: m for name, col in stats.columns.items() if with_columns and (m := _column_metrics(col)) is not None
    }
    return data_quality_metrics_dataset.DataQualityMetricsDatasetFacet(
        columnMetrics=columns,
        rowCount=stats.records,
        bytes=stats.total_files_size_bytes,
        fileCount=stats.data_files,
        lastUpdated=iso_time(ms_to_datetime(stats.timestamp_ms)),
        captureDate=iso_time(capture_date),
        **_P,
    )


def _column_json(col: ColumnStats) -> dict[str, Any]:
    return {
        "fieldId": col.field_id,
        "type": col.type,
        "valueCount": col.value_count,
        "nullCount": col.null_count,
        "nanCount": col.nan_count,
        "distinctCount": col.distinct_count,
        "min": bound_to_json(col.min),
        "max": bound_to_json(col.max),
        "boundsTruncated": col.bounds_truncated or None,
    }


def schema_change(old: Schema, new: Schema) -> dict[str, Any] | None:
    """Added, dropped, renamed and retyped fields between two schemas, matched by field id; ``None`` if equal."""
    before, after = old.by_id(), new.by_id()

    def ref(fid: int, entry: tuple[str, Field]) -> dict[str, Any]:
        return {"fieldId": fid, "name": entry[0], "type": entry[1].type}

    added = [ref(fid, after[fid]) for fid in sorted(after.keys() - before.keys())]
    dropped = [ref(fid, before[fid]) for fid in sorted(before.keys() - after.keys())]
    common = sorted(before.keys() & after.keys())
    renamed = [{"fieldId": f, "from": before[f][0], "to": after[f][0]} for f in common if before[f][0] != after[f][0]]
    retyped = [
        {"fieldId": f, "name": after[f][0], "from": before[f][1].type, "to": after[f][1].type}
        for f in common
        if before[f][1].type != after[f][1].type
    ]
    if not (added or dropped or renamed or retyped):
        return None
    return {
        "fromSchemaId": old.schema_id,
        "toSchemaId": new.schema_id,
        "added": added,
        "dropped": dropped,
        "renamed": renamed,
        "typeChanged": retyped or None,
    }


def statistics_facet(
    stats: SnapshotStats, change: dict[str, Any] | None = None, *, with_columns: bool = True
) -> IcebergTableStatisticsDatasetFacet:
    """Everything the walker knows about the snapshot; ``with_columns=False`` drops per-column detail (listed in
    ``columnsOmitted``) to keep an event small."""
    groups: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for figure, path in FIGURE_PATHS.items():
        value = getattr(stats, figure)
        if value is None:
            continue
        if len(path) == 1:
            groups[path[0]] = value
        else:
            groups.setdefault(path[0], {})[path[1]] = value
        if figure in stats.sources:
            sources[".".join(path)] = stats.sources[figure]
    sizes = stats.file_sizes
    columns = {name: _column_json(col) for name, col in stats.columns.items()} if with_columns else {}
    omitted = list(stats.columns_omitted) + ([] if with_columns else list(stats.columns))
    return IcebergTableStatisticsDatasetFacet(
        snapshotId=stats.snapshot_id,
        depth=stats.depth,
        staged=stats.staged,
        available=stats.available,
        refs=list(stats.refs),
        sequenceNumber=stats.sequence_number,
        operation=stats.operation,
        partitions=(
            [{"specId": p.spec_id, "partitions": p.partitions, "files": p.files} for p in stats.partitions]
            if stats.partitions is not None
            else None
        ),
        fileSizes=(
            {
                "count": sizes.count,
                "min": sizes.min,
                "max": sizes.max,
                "mean": sizes.mean,
                "histogram": {str(k): v for k, v in sorted(sizes.histogram.items())},
                "smallFileThreshold": sizes.small_file_threshold,
                "smallFiles": sizes.small_files,
            }
            if sizes is not None
            else None
        ),
        columns=columns or None,
        columnsOmitted=omitted or None,
        schemaChange=change,
        sources=sources or None,
        **groups,
        **_P,
    )


# -- lifecycle -------------------------------------------------------------------------------------------------------

def removes_data(stats: SnapshotStats) -> bool:
    """Whether the snapshot removed rows: data files or records removed, or delete files added."""
    return any((n or 0) > 0 for n in (stats.removed_data_files, stats.removed_records, stats.added_delete_files))


def snapshot_lifecycle(stats: SnapshotStats, schema_changed: bool) -> LifecycleStateChange | None:
    """CREATE for a table's first snapshot; none for ``replace`` (compaction keeps the data); OVERWRITE for an
    ``overwrite``/``delete`` that removed data; ALTER when the schema changed from the parent's. One value fits
    the facet, so a data change outranks a schema change (the diff itself is in ``icebergTableStatistics``)."""
    if stats.operation == "replace":
        return None
    if stats.parent_id is None:
        return LifecycleStateChange.CREATE
    if stats.operation in ("overwrite", "delete") and removes_data(stats):
        return LifecycleStateChange.OVERWRITE
    if schema_changed:
        return LifecycleStateChange.ALTER
    return None


# -- output and input facets -----------------------------------------------------------------------------------------

def output_statistics_facet(
    stats: SnapshotStats,
) -> output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet | None:
    """What the commit wrote: added records, added bytes (``added-files-size``) and added data files."""
    values = (stats.added_records, stats.added_files_size_bytes, stats.added_data_files)
    if all(v is None for v in values):
        return None
    return output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(
        rowCount=values[0], size=values[1], fileCount=values[2], **_P
    )


def commit_report_facet(
    snapshot_id: int,
    sequence_number: int | None,
    summary: Mapping[str, str],
    *,
    duration_ms: int | None = None,
    attempts: int | None = None,
) -> IcebergCommitReportOutputDatasetFacet:
    """The commit report rebuilt from the snapshot summary, as Iceberg's ``CommitMetricsResult.from`` does;
    absent keys are left out, and duration and attempts appear only when the commit was measured."""
    metrics = {name: summary_int(summary, key) for name, key in COMMIT_METRICS_FROM_SUMMARY.items()}
    metadata = {k: summary[k] for k in ENVIRONMENT_KEYS if k in summary}
    return IcebergCommitReportOutputDatasetFacet(
        snapshotId=snapshot_id,
        sequenceNumber=sequence_number,
        operation=summary.get("operation"),
        commitMetrics=CommitMetrics(totalDuration=duration_ms, attempts=attempts, **metrics),
        metadata=metadata or None,
        **_P,
    )


def input_statistics_facet(
    row_count: int | None = None, size: int | None = None, file_count: int | None = None
) -> input_statistics_input_dataset.InputStatisticsInputDatasetFacet:
    return input_statistics_input_dataset.InputStatisticsInputDatasetFacet(
        rowCount=row_count, size=size, fileCount=file_count, **_P
    )


def scan_report_facet(
    snapshot_id: int,
    filter_description: str | None = None,
    schema_id: int | None = None,
    projected_field_names: Iterable[str] | None = None,
    scan_metrics: Mapping[str, int] | None = None,
    metadata: Mapping[str, str] | None = None,
) -> IcebergScanReportInputDatasetFacet:
    """The scan report of an actual planned scan; ``scan_metrics`` uses the facet's camelCase names."""
    return IcebergScanReportInputDatasetFacet(
        snapshotId=snapshot_id,
        filterDescription=filter_description,
        schemaId=schema_id,
        projectedFieldNames=list(projected_field_names) if projected_field_names is not None else None,
        scanMetrics=ScanMetrics(**dict(scan_metrics)) if scan_metrics else None,
        metadata=dict(metadata) if metadata else None,
        **_P,
    )


# -- run and job facets ----------------------------------------------------------------------------------------------

def external_query_facet(summary: Mapping[str, str]) -> external_query_run.ExternalQueryRunFacet | None:
    """The engine's job or query id; the source is the engine name, else the key's prefix (``spark``...)."""
    for key in EXTERNAL_QUERY_KEYS:
        value = summary.get(key)
        if value:
            source = summary.get("engine-name") or key.replace("_", ".").replace("-", ".").split(".")[0]
            return external_query_run.ExternalQueryRunFacet(externalQueryId=value, source=source, **_P)
    return None


def processing_engine_facet(summary: Mapping[str, str]) -> processing_engine_run.ProcessingEngineRunFacet | None:
    name, version = summary.get("engine-name"), summary.get("engine-version")
    if not (name and version):
        return None
    return processing_engine_run.ProcessingEngineRunFacet(version=version, name=name, **_P)


def job_type_facet(job_type: str) -> job_type_job.JobTypeJobFacet:
    return job_type_job.JobTypeJobFacet(processingType="BATCH", integration="ICEBERG", jobType=job_type, **_P)
