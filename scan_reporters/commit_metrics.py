"""CommitReport of a snapshot, from its summary alone (never reads manifests: it runs on the commit path).

Mirrors Java ``CommitMetricsResult.from(commitMetrics, snapshotSummary)``: each counter comes from its
(sometimes differently spelled) summary key; a missing or unparsable key leaves the metric out.
``total-duration`` and ``attempts`` exist only for a commit that was measured.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scan_reporters.reports import COMMIT_METRICS, TIMER, CommitMetricsResult, CommitReport, kebab_to_camel

if TYPE_CHECKING:
    from pyiceberg.table.snapshots import Snapshot


def parse_long(value: Any) -> int | None:
    """A summary value as Iceberg parses it (``Long.parseLong``); None if it is not one."""
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None


def commit_metrics_from_summary(
    summary: Mapping[str, Any], *, duration_ns: int | None = None, attempts: int | None = None
) -> CommitMetricsResult:
    """Translate summary keys to commit metrics (``deleted-data-files`` -> ``removed-data-files`` etc.)."""
    values: dict[str, int | None] = {"total-duration": duration_ns, "attempts": attempts}
    for spec in COMMIT_METRICS:
        if spec.kind != TIMER and spec.summary_key is not None and spec.summary_key in summary:
            values[spec.name] = parse_long(summary[spec.summary_key])
    return CommitMetricsResult.from_values(values)


def java_name(name: str) -> str:
    """The Java ``CommitMetricsResult`` accessor of a metric, which OpenLineage's ``icebergCommitReport`` facet
    uses: camelCase, with ``DVs`` and ``FilesSizeInBytes`` (``added-dvs`` -> ``addedDVs``)."""
    return kebab_to_camel(name).replace("Dvs", "DVs").replace("FilesSizeBytes", "FilesSizeInBytes")


def commit_report_from_values(
    table_name: str,
    snapshot_id: int,
    sequence_number: int | None,
    operation: str,
    summary: Mapping[str, Any],
    *,
    duration_ns: int | None = None,
    attempts: int | None = None,
    metadata: Mapping[str, str] | None = None,
) -> CommitReport:
    """CommitReport from plain values; a v1 snapshot without sequence number reports 0 as Java does."""
    return CommitReport(
        table_name=table_name,
        snapshot_id=snapshot_id,
        sequence_number=sequence_number or 0,
        operation=operation,
        commit_metrics=commit_metrics_from_summary(summary, duration_ns=duration_ns, attempts=attempts),
        metadata=dict(metadata or {}),
    )


def snapshot_summary_mapping(snapshot: Snapshot) -> dict[str, str]:
    """The summary of a pyiceberg Snapshot as a plain ``{key: str}`` map, ``operation`` included."""
    summary = snapshot.summary
    if summary is None:
        return {}
    return {str(k): str(v) for k, v in summary.model_dump().items()}


def commit_report_from_snapshot(
    table_name: str,
    snapshot: Snapshot,
    *,
    duration_ns: int | None = None,
    attempts: int | None = None,
    metadata: Mapping[str, str] | None = None,
) -> CommitReport:
    """CommitReport of any pyiceberg Snapshot; for historical snapshots leave duration/attempts unset."""
    summary = snapshot_summary_mapping(snapshot)
    return commit_report_from_values(
        table_name,
        snapshot.snapshot_id,
        snapshot.sequence_number,
        summary.get("operation", "overwrite"),
        summary,
        duration_ns=duration_ns,
        attempts=attempts,
        metadata=metadata,
    )
