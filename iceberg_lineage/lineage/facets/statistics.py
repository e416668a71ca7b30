"""The custom dataset facet ``icebergTableStatistics``: what the walker knows about a table at a snapshot that no
standard facet can carry (delete files by kind, manifests, partitions, file sizes, typed column bounds, the schema
diff, and where each figure came from).

Its JSON schema ships in the package (``iceberg_lineage/schemas/IcebergTableStatisticsDatasetFacet.json``); the
``_schemaURL`` is that file's stable address in the project repository. Unknown figures are left out, never 0.
"""
from __future__ import annotations

import json
from importlib import resources
from typing import Any, ClassVar

import attr
from openlineage.client.generated.base import DatasetFacet

STATISTICS_KEY = "icebergTableStatistics"
SCHEMA_FILE = "IcebergTableStatisticsDatasetFacet.json"
SCHEMA_ID = f"https://github.com/iceberg-lineage/iceberg-lineage/blob/main/iceberg_lineage/schemas/{SCHEMA_FILE}"


@attr.define
class IcebergTableStatisticsDatasetFacet(DatasetFacet):
    """Table statistics at one snapshot. Nested values are JSON-ready mappings (see the shipped schema)."""

    snapshotId: int  # noqa: N815
    depth: str
    """How far the walker read: ``summary``, ``manifest_list`` or ``entries``."""
    staged: bool
    """True when no branch or tag contains the snapshot (e.g. a WAP-staged commit)."""
    available: bool
    """False when the snapshot's manifests are gone (expired history): only summary figures are present."""
    refs: list[str] = attr.field(factory=list)
    sequenceNumber: int | None = attr.field(default=None)  # noqa: N815
    operation: str | None = attr.field(default=None)
    dataFiles: int | None = attr.field(default=None)  # noqa: N815
    records: int | None = attr.field(default=None)
    liveRecords: int | None = attr.field(default=None)  # noqa: N815
    bytes: dict[str, int] | None = attr.field(default=None)
    deleteFiles: dict[str, int] | None = attr.field(default=None)  # noqa: N815
    deletedRows: dict[str, int] | None = attr.field(default=None)  # noqa: N815
    added: dict[str, int] | None = attr.field(default=None)
    removed: dict[str, int] | None = attr.field(default=None)
    manifests: dict[str, int] | None = attr.field(default=None)
    partitions: list[dict[str, int]] | None = attr.field(default=None)
    fileSizes: dict[str, Any] | None = attr.field(default=None)  # noqa: N815
    columns: dict[str, dict[str, Any]] | None = attr.field(default=None)
    columnsOmitted: list[str] | None = attr.field(default=None)  # noqa: N815
    schemaChange: dict[str, Any] | None = attr.field(default=None)  # noqa: N815
    sources: dict[str, str] | None = attr.field(default=None)

    _additional_skip_redact: ClassVar[list[str]] = ["snapshotId", "depth", "staged", "available", "operation"]

    @staticmethod
    def _get_schema() -> str:
        return f"{SCHEMA_ID}#/$defs/IcebergTableStatisticsDatasetFacet"


def statistics_schema() -> dict[str, Any]:
    """The facet's JSON schema, read from the installed package."""
    return json.loads(resources.files("iceberg_lineage").joinpath("schemas", SCHEMA_FILE).read_text("utf-8"))
