"""Java-compatible ScanReport / CommitReport models and their Iceberg wire JSON.

The wire form follows Java's ``ScanReportParser``, ``CommitReportParser``, ``CounterResultParser``,
``TimerResultParser`` and ``ReportMetricsRequestParser``: kebab-case keys, counters as
``{"unit", "value"}``, timers as ``{"count", "time-unit", "total-duration"}``, null metrics and
empty metadata left out, and a flattened REST envelope carrying ``report-type``.

Metric attribute names are the wire names with ``-`` replaced by ``_``; the one mapping table per
report kind (``SCAN_METRICS`` / ``COMMIT_METRICS``) drives serialisation, parsing and the
snapshot-summary translation, so the names live in exactly one place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Union

COUNT = "count"
BYTES = "bytes"
TIMER = "timer"
NANOSECONDS = "nanoseconds"

SCAN_REPORT_TYPE = "scan-report"
COMMIT_REPORT_TYPE = "commit-report"


@dataclass(frozen=True)
class MetricSpec:
    """One metric: its wire name, its kind (``count``/``bytes``/``timer``) and, for commit metrics, the summary key."""

    name: str
    kind: str
    summary_key: str | None = None

    @property
    def attr(self) -> str:
        return self.name.replace("-", "_")


def kebab_to_camel(name: str) -> str:
    """``added-dvs`` -> ``addedDvs``; Java accessors and OpenLineage facets use this spelling."""
    head, *rest = name.split("-")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _timer(name: str) -> MetricSpec:
    return MetricSpec(name, TIMER)


SCAN_METRICS: tuple[MetricSpec, ...] = (
    _timer("total-planning-duration"),
    MetricSpec("result-data-files", COUNT),
    MetricSpec("result-delete-files", COUNT),
    MetricSpec("total-data-manifests", COUNT),
    MetricSpec("total-delete-manifests", COUNT),
    MetricSpec("scanned-data-manifests", COUNT),
    MetricSpec("skipped-data-manifests", COUNT),
    MetricSpec("total-file-size-in-bytes", BYTES),
    MetricSpec("total-delete-file-size-in-bytes", BYTES),
    MetricSpec("skipped-data-files", COUNT),
    MetricSpec("skipped-delete-files", COUNT),
    MetricSpec("scanned-delete-manifests", COUNT),
    MetricSpec("skipped-delete-manifests", COUNT),
    MetricSpec("indexed-delete-files", COUNT),
    MetricSpec("equality-delete-files", COUNT),
    MetricSpec("positional-delete-files", COUNT),
    MetricSpec("dvs", COUNT),
)

# CommitMetricsResult.java:168-216: JSON name <- snapshot summary key.
COMMIT_METRICS: tuple[MetricSpec, ...] = (
    _timer("total-duration"),
    MetricSpec("attempts", COUNT),
    MetricSpec("added-data-files", COUNT, "added-data-files"),
    MetricSpec("removed-data-files", COUNT, "deleted-data-files"),
    MetricSpec("total-data-files", COUNT, "total-data-files"),
    MetricSpec("added-delete-files", COUNT, "added-delete-files"),
    MetricSpec("added-equality-delete-files", COUNT, "added-equality-delete-files"),
    MetricSpec("added-positional-delete-files", COUNT, "added-position-delete-files"),
    MetricSpec("added-dvs", COUNT, "added-dvs"),
    MetricSpec("removed-delete-files", COUNT, "removed-delete-files"),
    MetricSpec("removed-equality-delete-files", COUNT, "removed-equality-delete-files"),
    MetricSpec("removed-positional-delete-files", COUNT, "removed-position-delete-files"),
    MetricSpec("removed-dvs", COUNT, "removed-dvs"),
    MetricSpec("total-delete-files", COUNT, "total-delete-files"),
    MetricSpec("added-records", COUNT, "added-records"),
    MetricSpec("removed-records", COUNT, "deleted-records"),
    MetricSpec("total-records", COUNT, "total-records"),
    MetricSpec("added-files-size-bytes", BYTES, "added-files-size"),
    MetricSpec("removed-files-size-bytes", BYTES, "removed-files-size"),
    MetricSpec("total-files-size-bytes", BYTES, "total-files-size"),
    MetricSpec("added-positional-deletes", COUNT, "added-position-deletes"),
    MetricSpec("removed-positional-deletes", COUNT, "removed-position-deletes"),
    MetricSpec("total-positional-deletes", COUNT, "total-position-deletes"),
    MetricSpec("added-equality-deletes", COUNT, "added-equality-deletes"),
    MetricSpec("removed-equality-deletes", COUNT, "removed-equality-deletes"),
    MetricSpec("total-equality-deletes", COUNT, "total-equality-deletes"),
    MetricSpec("manifests-created", COUNT, "manifests-created"),
    MetricSpec("manifests-replaced", COUNT, "manifests-replaced"),
    MetricSpec("manifests-kept", COUNT, "manifests-kept"),
    MetricSpec("manifest-entries-processed", COUNT, "entries-processed"),
)


@dataclass(frozen=True)
class CounterResult:
    """A counter value; ``unit`` is Java's display name (``count``, ``bytes`` or ``undefined``)."""

    value: int
    unit: str = COUNT

    def to_json(self) -> dict[str, Any]:
        return {"unit": self.unit, "value": self.value}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CounterResult:
        return cls(value=int(data["value"]), unit=str(data["unit"]))


@dataclass(frozen=True)
class TimerResult:
    """A timer value; ``total_duration`` is expressed in ``time_unit`` (always nanoseconds when we measure)."""

    total_duration: int
    count: int = 1
    time_unit: str = NANOSECONDS

    _TO_NANOS: ClassVar[dict[str, int]] = {
        "nanoseconds": 1,
        "microseconds": 1_000,
        "milliseconds": 1_000_000,
        "seconds": 1_000_000_000,
        "minutes": 60_000_000_000,
        "hours": 3_600_000_000_000,
        "days": 86_400_000_000_000,
    }

    @property
    def total_duration_ns(self) -> int:
        return self.total_duration * self._TO_NANOS[self.time_unit]

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "time-unit": self.time_unit, "total-duration": self.total_duration}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TimerResult:
        return cls(total_duration=int(data["total-duration"]), count=int(data["count"]), time_unit=str(data["time-unit"]))


Metric = Union[CounterResult, TimerResult]


class _MetricsResult:
    """Shared (de)serialisation for the two metrics-result dataclasses, driven by their ``SPECS`` table."""

    SPECS: ClassVar[tuple[MetricSpec, ...]]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for spec in self.SPECS:
            value = getattr(self, spec.attr)
            if value is not None:
                out[spec.name] = value.to_json()
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Any:
        kwargs: dict[str, Metric] = {}
        for spec in cls.SPECS:
            raw = data.get(spec.name)
            if raw is not None:
                kwargs[spec.attr] = TimerResult.from_json(raw) if spec.kind == TIMER else CounterResult.from_json(raw)
        return cls(**kwargs)

    def values(self) -> dict[str, int]:
        """Plain ``{wire-name: value}`` (timers in nanoseconds) for the metrics that are set."""
        out: dict[str, int] = {}
        for spec in self.SPECS:
            value = getattr(self, spec.attr)
            if isinstance(value, TimerResult):
                out[spec.name] = value.total_duration_ns
            elif isinstance(value, CounterResult):
                out[spec.name] = value.value
        return out

    @classmethod
    def from_values(cls, values: Mapping[str, int | None]) -> Any:
        """Build from ``{wire-name: int}``; timers are given in nanoseconds, ``None`` means not measured."""
        kwargs: dict[str, Metric] = {}
        for spec in cls.SPECS:
            value = values.get(spec.name)
            if value is not None:
                kwargs[spec.attr] = (
                    TimerResult(total_duration=int(value)) if spec.kind == TIMER else CounterResult(int(value), spec.kind)
                )
        return cls(**kwargs)


@dataclass(frozen=True)
class ScanMetricsResult(_MetricsResult):
    """Java ``ScanMetricsResult``: every metric optional (``None`` = not measured, left out of the JSON)."""

    SPECS: ClassVar[tuple[MetricSpec, ...]] = SCAN_METRICS

    total_planning_duration: TimerResult | None = None
    result_data_files: CounterResult | None = None
    result_delete_files: CounterResult | None = None
    total_data_manifests: CounterResult | None = None
    total_delete_manifests: CounterResult | None = None
    scanned_data_manifests: CounterResult | None = None
    skipped_data_manifests: CounterResult | None = None
    total_file_size_in_bytes: CounterResult | None = None
    total_delete_file_size_in_bytes: CounterResult | None = None
    skipped_data_files: CounterResult | None = None
    skipped_delete_files: CounterResult | None = None
    scanned_delete_manifests: CounterResult | None = None
    skipped_delete_manifests: CounterResult | None = None
    indexed_delete_files: CounterResult | None = None
    equality_delete_files: CounterResult | None = None
    positional_delete_files: CounterResult | None = None
    dvs: CounterResult | None = None


@dataclass(frozen=True)
class CommitMetricsResult(_MetricsResult):
    """Java ``CommitMetricsResult``: duration/attempts measured, everything else from the snapshot summary."""

    SPECS: ClassVar[tuple[MetricSpec, ...]] = COMMIT_METRICS

    total_duration: TimerResult | None = None
    attempts: CounterResult | None = None
    added_data_files: CounterResult | None = None
    removed_data_files: CounterResult | None = None
    total_data_files: CounterResult | None = None
    added_delete_files: CounterResult | None = None
    added_equality_delete_files: CounterResult | None = None
    added_positional_delete_files: CounterResult | None = None
    added_dvs: CounterResult | None = None
    removed_delete_files: CounterResult | None = None
    removed_equality_delete_files: CounterResult | None = None
    removed_positional_delete_files: CounterResult | None = None
    removed_dvs: CounterResult | None = None
    total_delete_files: CounterResult | None = None
    added_records: CounterResult | None = None
    removed_records: CounterResult | None = None
    total_records: CounterResult | None = None
    added_files_size_bytes: CounterResult | None = None
    removed_files_size_bytes: CounterResult | None = None
    total_files_size_bytes: CounterResult | None = None
    added_positional_deletes: CounterResult | None = None
    removed_positional_deletes: CounterResult | None = None
    total_positional_deletes: CounterResult | None = None
    added_equality_deletes: CounterResult | None = None
    removed_equality_deletes: CounterResult | None = None
    total_equality_deletes: CounterResult | None = None
    manifests_created: CounterResult | None = None
    manifests_replaced: CounterResult | None = None
    manifests_kept: CounterResult | None = None
    manifest_entries_processed: CounterResult | None = None


def _check_specs(cls: type[_MetricsResult]) -> None:
    """Guard against the field list and the mapping table drifting apart."""
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    if names != [spec.attr for spec in cls.SPECS]:
        raise AssertionError(f"{cls.__name__} fields do not match its SPECS table")


_check_specs(ScanMetricsResult)
_check_specs(CommitMetricsResult)


def _metadata_json(metadata: Mapping[str, str]) -> dict[str, Any]:
    return {"metadata": dict(metadata)} if metadata else {}


@dataclass(frozen=True)
class ScanReport:
    """Java ``ScanReport``. ``filter`` is already sanitised, in Java ``ExpressionParser`` JSON form."""

    table_name: str
    snapshot_id: int
    filter: Any = field(hash=False)
    schema_id: int
    projected_field_ids: tuple[int, ...]
    projected_field_names: tuple[str, ...]
    scan_metrics: ScanMetricsResult
    metadata: Mapping[str, str] = field(default_factory=dict, hash=False)

    report_type: ClassVar[str] = SCAN_REPORT_TYPE

    def to_json(self) -> dict[str, Any]:
        return {
            "table-name": self.table_name,
            "snapshot-id": self.snapshot_id,
            "filter": self.filter,
            "schema-id": self.schema_id,
            "projected-field-ids": list(self.projected_field_ids),
            "projected-field-names": list(self.projected_field_names),
            "metrics": self.scan_metrics.to_json(),
            **_metadata_json(self.metadata),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | str) -> ScanReport:
        d = json.loads(data) if isinstance(data, str) else data
        return cls(
            table_name=d["table-name"],
            snapshot_id=int(d["snapshot-id"]),
            filter=d["filter"],
            schema_id=int(d["schema-id"]),
            projected_field_ids=tuple(int(i) for i in d["projected-field-ids"]),
            projected_field_names=tuple(d["projected-field-names"]),
            scan_metrics=ScanMetricsResult.from_json(d.get("metrics") or {}),
            metadata=dict(d.get("metadata") or {}),
        )


@dataclass(frozen=True)
class CommitReport:
    """Java ``CommitReport``: one per snapshot a commit adds."""

    table_name: str
    snapshot_id: int
    sequence_number: int
    operation: str
    commit_metrics: CommitMetricsResult
    metadata: Mapping[str, str] = field(default_factory=dict, hash=False)

    report_type: ClassVar[str] = COMMIT_REPORT_TYPE

    def to_json(self) -> dict[str, Any]:
        return {
            "table-name": self.table_name,
            "snapshot-id": self.snapshot_id,
            "sequence-number": self.sequence_number,
            "operation": self.operation,
            "metrics": self.commit_metrics.to_json(),
            **_metadata_json(self.metadata),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | str) -> CommitReport:
        d = json.loads(data) if isinstance(data, str) else data
        return cls(
            table_name=d["table-name"],
            snapshot_id=int(d["snapshot-id"]),
            sequence_number=int(d["sequence-number"]),
            operation=d["operation"],
            commit_metrics=CommitMetricsResult.from_json(d.get("metrics") or {}),
            metadata=dict(d.get("metadata") or {}),
        )


MetricsReport = Union[ScanReport, CommitReport]

_REPORT_TYPES: dict[str, type[ScanReport] | type[CommitReport]] = {
    SCAN_REPORT_TYPE: ScanReport,
    COMMIT_REPORT_TYPE: CommitReport,
}


def to_rest_request(report: MetricsReport) -> dict[str, Any]:
    """The flattened ``ReportMetricsRequest`` body: ``report-type`` plus every report field inline."""
    return {"report-type": report.report_type, **report.to_json()}


def from_rest_request(data: Mapping[str, Any] | str) -> MetricsReport | None:
    """Parse a ``ReportMetricsRequest``; an unknown ``report-type`` gives ``None`` like Java's ``unknown()``."""
    d = json.loads(data) if isinstance(data, str) else data
    report_cls = _REPORT_TYPES.get(str(d.get("report-type")))
    return report_cls.from_json(d) if report_cls else None
