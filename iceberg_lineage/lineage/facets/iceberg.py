"""The two Iceberg facets of the OpenLineage registry (``spec/registry/iceberg/facets``).

openlineage-python ships no classes for them (the Java and Go clients do), so they are defined here in the style of
its generated classes: attrs, camelCase fields, ``_get_schema`` returning the exact ``$id`` plus ``#/$defs/...``.
Snapshot ids are plain Python ints, so ids above 2**53 serialise exactly (the schema types them as ``number``).
"""
from __future__ import annotations

from typing import Any, ClassVar

import attr
from openlineage.client.generated.base import InputDatasetFacet, OutputDatasetFacet
from openlineage.client.utils import RedactMixin

COMMIT_REPORT_KEY = "icebergCommitReport"
SCAN_REPORT_KEY = "icebergScanReport"


@attr.define
class CommitMetrics(RedactMixin):
    """Iceberg ``CommitMetricsResult``; ``totalDuration`` is in milliseconds."""

    totalDuration: int | None = attr.field(default=None)  # noqa: N815
    attempts: int | None = attr.field(default=None)
    addedDataFiles: int | None = attr.field(default=None)  # noqa: N815
    removedDataFiles: int | None = attr.field(default=None)  # noqa: N815
    totalDataFiles: int | None = attr.field(default=None)  # noqa: N815
    addedDeleteFiles: int | None = attr.field(default=None)  # noqa: N815
    addedEqualityDeleteFiles: int | None = attr.field(default=None)  # noqa: N815
    addedPositionalDeleteFiles: int | None = attr.field(default=None)  # noqa: N815
    addedDVs: int | None = attr.field(default=None)  # noqa: N815
    removedDeleteFiles: int | None = attr.field(default=None)  # noqa: N815
    removedEqualityDeleteFiles: int | None = attr.field(default=None)  # noqa: N815
    removedPositionalDeleteFiles: int | None = attr.field(default=None)  # noqa: N815
    removedDVs: int | None = attr.field(default=None)  # noqa: N815
    totalDeleteFiles: int | None = attr.field(default=None)  # noqa: N815
    addedRecords: int | None = attr.field(default=None)  # noqa: N815
    removedRecords: int | None = attr.field(default=None)  # noqa: N815
    totalRecords: int | None = attr.field(default=None)  # noqa: N815
    addedFilesSizeInBytes: int | None = attr.field(default=None)  # noqa: N815
    removedFilesSizeInBytes: int | None = attr.field(default=None)  # noqa: N815
    totalFilesSizeInBytes: int | None = attr.field(default=None)  # noqa: N815
    addedPositionalDeletes: int | None = attr.field(default=None)  # noqa: N815
    removedPositionalDeletes: int | None = attr.field(default=None)  # noqa: N815
    totalPositionalDeletes: int | None = attr.field(default=None)  # noqa: N815
    addedEqualityDeletes: int | None = attr.field(default=None)  # noqa: N815
    removedEqualityDeletes: int | None = attr.field(default=None)  # noqa: N815
    totalEqualityDeletes: int | None = attr.field(default=None)  # noqa: N815


@attr.define
class IcebergCommitReportOutputDatasetFacet(OutputDatasetFacet):
    """What one Iceberg commit wrote (registry facet 1-0-2, key ``icebergCommitReport``)."""

    snapshotId: int | None = attr.field(default=None)  # noqa: N815
    sequenceNumber: int | None = attr.field(default=None)  # noqa: N815
    operation: str | None = attr.field(default=None)
    commitMetrics: CommitMetrics | None = attr.field(default=None)  # noqa: N815
    metadata: dict[str, Any] | None = attr.field(default=None)

    _additional_skip_redact: ClassVar[list[str]] = ["snapshotId", "sequenceNumber", "operation"]

    @staticmethod
    def _get_schema() -> str:
        return (
            "https://openlineage.io/spec/facets/1-0-2/IcebergCommitReportOutputDatasetFacet.json"
            "#/$defs/IcebergCommitReportOutputDatasetFacet"
        )


@attr.define
class ScanMetrics(RedactMixin):
    """Iceberg ``ScanMetricsResult``; ``totalPlanningDuration`` is in milliseconds."""

    totalPlanningDuration: int | None = attr.field(default=None)  # noqa: N815
    resultDataFiles: int | None = attr.field(default=None)  # noqa: N815
    resultDeleteFiles: int | None = attr.field(default=None)  # noqa: N815
    totalDataManifests: int | None = attr.field(default=None)  # noqa: N815
    totalDeleteManifests: int | None = attr.field(default=None)  # noqa: N815
    scannedDataManifests: int | None = attr.field(default=None)  # noqa: N815
    skippedDataManifests: int | None = attr.field(default=None)  # noqa: N815
    totalFileSizeInBytes: int | None = attr.field(default=None)  # noqa: N815
    totalDeleteFileSizeInBytes: int | None = attr.field(default=None)  # noqa: N815
    skippedDataFiles: int | None = attr.field(default=None)  # noqa: N815
    skippedDeleteFiles: int | None = attr.field(default=None)  # noqa: N815
    scannedDeleteManifests: int | None = attr.field(default=None)  # noqa: N815
    skippedDeleteManifests: int | None = attr.field(default=None)  # noqa: N815
    indexedDeleteFiles: int | None = attr.field(default=None)  # noqa: N815
    equalityDeleteFiles: int | None = attr.field(default=None)  # noqa: N815
    positionalDeleteFiles: int | None = attr.field(default=None)  # noqa: N815


@attr.define
class IcebergScanReportInputDatasetFacet(InputDatasetFacet):
    """What one Iceberg scan planned (registry facet 1-0-1, key ``icebergScanReport``)."""

    snapshotId: int | None = attr.field(default=None)  # noqa: N815
    filterDescription: str | None = attr.field(default=None)  # noqa: N815
    schemaId: int | None = attr.field(default=None)  # noqa: N815
    projectedFieldNames: list[str] | None = attr.field(default=None)  # noqa: N815
    scanMetrics: ScanMetrics | None = attr.field(default=None)  # noqa: N815
    metadata: dict[str, Any] | None = attr.field(default=None)

    _additional_skip_redact: ClassVar[list[str]] = ["snapshotId", "schemaId"]

    @staticmethod
    def _get_schema() -> str:
        return (
            "https://openlineage.io/spec/facets/1-0-1/IcebergScanReportInputDatasetFacet.json"
            "#/$defs/IcebergScanReportInputDatasetFacet"
        )
