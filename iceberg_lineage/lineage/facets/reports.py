"""Facets of what one commit wrote and one scan read: ``outputStatistics`` and ``icebergCommitReport``,
``inputStatistics`` and ``icebergScanReport``, from snapshot statistics or from the engine's own reports."""
from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any, Iterable, Mapping

import attr
from openlineage.client.facet_v2 import input_statistics_input_dataset, output_statistics_output_dataset

from iceberg_lineage.lineage.facets.common import PRODUCED
from iceberg_lineage.lineage.serde import make
from iceberg_lineage.lineage.facets.iceberg import (
    SCAN_REPORT_KEY, CommitMetrics, IcebergCommitReportOutputDatasetFacet, IcebergScanReportInputDatasetFacet,
    ScanMetrics,
)
from iceberg_lineage.stats.model import SnapshotStats

if TYPE_CHECKING:
    from scan_reporters.reports import CommitReport, ScanReport

#: Summary keys Iceberg's environment context adds to every commit; they become the commit report's metadata.
ENVIRONMENT_KEYS = ("engine-name", "engine-version", "app-id", "iceberg-version")
_COMMIT_METRICS = frozenset(a.name for a in attr.fields(CommitMetrics))
_SCAN_METRICS = frozenset(a.name for a in attr.fields(ScanMetrics))
_NS_PER_MS = 1_000_000


def output_statistics_facet(
    stats: SnapshotStats, *, plain: bool = False
) -> output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet | None:
    """What the commit wrote: added records, added bytes (``added-files-size``) and added data files."""
    values = (stats.added_records, stats.added_files_size_bytes, stats.added_data_files)
    if all(v is None for v in values):
        return None
    return make(
        output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet, plain,
        rowCount=values[0], size=values[1], fileCount=values[2], **PRODUCED
    )


def commit_report_facet(
    snapshot_id: int,
    sequence_number: int | None,
    summary: Mapping[str, str],
    *,
    duration_ms: int | None = None,
    attempts: int | None = None,
    plain: bool = False,
) -> IcebergCommitReportOutputDatasetFacet:
    """The commit report rebuilt from the snapshot summary, as Iceberg's ``CommitMetricsResult.from`` does (with
    scan_reporters' one map of metric names to summary keys); absent keys are left out, and duration and attempts
    appear only when the commit was measured."""
    from scan_reporters.commit_metrics import parse_long  # first use only: see _commit_fields

    fields = _commit_fields()
    metrics = {name: n for key, value in summary.items()
               if (name := fields.get(key)) is not None and (n := parse_long(value)) is not None}
    metadata = {k: summary[k] for k in ENVIRONMENT_KEYS if k in summary}
    return make(
        IcebergCommitReportOutputDatasetFacet, plain,
        snapshotId=snapshot_id,
        sequenceNumber=sequence_number,
        operation=summary.get("operation"),
        commitMetrics=make(CommitMetrics, plain, totalDuration=duration_ms, attempts=attempts, **metrics),
        metadata=metadata or None,
        **PRODUCED,
    )


@functools.lru_cache(maxsize=None)
def _commit_fields() -> dict[str, str]:
    """The ``CommitMetrics`` field of each summary key that gives a counter, from scan_reporters' one map of metric
    names to summary keys (``commit_metrics_from_summary``'s), read once: walking it for every snapshot was a fifth
    of a summary-depth scan. A summary is read key by key (it holds fewer keys than there are counters)."""
    # scan_reporters imports pyiceberg.catalog (about a second): only events of commits need it.
    from scan_reporters.commit_metrics import java_name
    from scan_reporters.reports import COMMIT_METRICS, TIMER

    return {spec.summary_key: java_name(spec.name) for spec in COMMIT_METRICS
            if spec.kind != TIMER and spec.summary_key is not None and java_name(spec.name) in _COMMIT_METRICS}


def input_statistics_facet(
    row_count: int | None = None, size: int | None = None, file_count: int | None = None
) -> input_statistics_input_dataset.InputStatisticsInputDatasetFacet:
    return input_statistics_input_dataset.InputStatisticsInputDatasetFacet(
        rowCount=row_count, size=size, fileCount=file_count, **PRODUCED
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
        **PRODUCED,
    )


def scan_report_input_facets(
    report: ScanReport, *, row_count: int | None = None, size: int | None = None, file_count: int | None = None
) -> dict[str, Any]:
    """The input facets of one planned scan from its ScanReport (PyIceberg's through scan_reporters, or Iceberg
    Java's posted to ``/metrics``): ``inputStatistics`` with the figures given, and ``icebergScanReport`` with the
    report's own counters, its planning time in milliseconds as the facet's schema says."""
    from scan_reporters.reports import kebab_to_camel

    values = {kebab_to_camel(name): value for name, value in report.scan_metrics.values().items()}
    metrics = {name: value for name, value in values.items() if name in _SCAN_METRICS}
    if "totalPlanningDuration" in metrics:
        metrics["totalPlanningDuration"] //= _NS_PER_MS
    return {
        "inputStatistics": input_statistics_facet(row_count, size, file_count),
        SCAN_REPORT_KEY: scan_report_facet(
            report.snapshot_id,
            filter_description="" if report.filter is True else json.dumps(report.filter, sort_keys=True),
            schema_id=report.schema_id,
            projected_field_names=report.projected_field_names,
            scan_metrics=metrics,
            metadata=report.metadata,
        ),
    }


def commit_report_facet_of(report: CommitReport) -> IcebergCommitReportOutputDatasetFacet:
    """The commit report as the engine posted it (complete: its own ``totalDuration``, in ms, and ``attempts``)."""
    from scan_reporters.commit_metrics import java_name

    values = report.commit_metrics.values()
    counters = {java_name(name): value for name, value in values.items()}
    metrics = {name: value for name, value in counters.items() if name in _COMMIT_METRICS}
    if "totalDuration" in metrics:
        metrics["totalDuration"] //= _NS_PER_MS
    return IcebergCommitReportOutputDatasetFacet(
        snapshotId=report.snapshot_id,
        sequenceNumber=report.sequence_number,
        operation=report.operation,
        commitMetrics=CommitMetrics(**metrics),
        metadata=dict(report.metadata) or None,
        **PRODUCED,
    )
