"""The dataset facets and the commit job of one table's events. What does not change from snapshot to snapshot
(identity, schema, catalog, storage, names, owner, the job of an engine...) is built once per table and schema and
shared by the events of its snapshots: building openlineage-python's facet objects (each runs its validators) was
most of a history scan's cost."""
from __future__ import annotations

import datetime as dt
from typing import Any

from openlineage.client.event_v2 import Job

from iceberg_lineage.config import Settings
from iceberg_lineage.lineage import facets as fb
from iceberg_lineage.lineage.facets import STATISTICS_KEY
from iceberg_lineage.lineage.naming import DatasetIdentity, dataset_identity
from iceberg_lineage.lineage.serde import make
from iceberg_lineage.read.metadata import Schema
from iceberg_lineage.read.source import LoadedTable
from iceberg_lineage.stats.model import SnapshotStats


def present(facets: dict[str, Any]) -> dict[str, Any]:
    """The facets that apply (a builder returns None for a facet with nothing to say)."""
    return {k: v for k, v in facets.items() if v is not None}


class TableFacets:
    """One table's facets as its events need them. Facet objects are shared, never the dicts that hold them: an
    event's dicts are its own (openlineage's client adds facets to them in place as it emits), and the objects are
    never changed once built (the byte budget evolves copies, :mod:`~iceberg_lineage.lineage.budget`).

    ``plain``: the facets in their JSON form (:func:`~iceberg_lineage.lineage.serde.make`), as the scanner builds its
    events; the events built with them are in that form too."""

    def __init__(self, table: LoadedTable, settings: Settings, *, plain: bool = False) -> None:
        self.table = table
        self.settings = settings
        self.plain = plain
        self.identity: DatasetIdentity = dataset_identity(table, settings)
        self._by_schema: dict[int, tuple[Schema, dict[str, Any]]] = {}
        self._jobs: dict[str, Any] = {}
        self._commit_type = fb.job_type_facet("COMMIT", plain=plain)

    def of_table(self, schema: Schema) -> dict[str, Any]:
        """Facets that describe the table itself at ``schema``, whatever the snapshot."""
        cached = self._by_schema.get(id(schema))
        if cached is None or cached[0] is not schema:
            props, plain = self.table.metadata.properties, self.plain
            cached = self._by_schema[id(schema)] = (schema, present({
                "schema": fb.schema_facet(schema, plain=plain),
                "catalog": fb.catalog_facet(self.table, plain=plain),
                "storage": fb.storage_facet(props, plain=plain),
                "datasetType": fb.dataset_type_facet(plain=plain),
                "symlinks": fb.symlinks_facet(self.identity.symlinks, plain=plain),
                "documentation": fb.documentation_facet(props, plain=plain),
                "ownership": fb.ownership_facet(props, plain=plain),
            }))
        return dict(cached[1])

    def of_snapshot(self, stats: SnapshotStats, change: dict[str, Any] | None, capture: dt.datetime) -> dict[str, Any]:
        """The table's facets at one snapshot: its schema's, then its version and statistics."""
        facets = self.of_table(self.snapshot_schema(stats))
        facets["version"] = fb.version_facet(stats.snapshot_id, plain=self.plain)
        facets["dataQualityMetrics"] = fb.data_quality_facet(stats, capture, plain=self.plain)
        facets[STATISTICS_KEY] = fb.statistics_facet(stats, change, plain=self.plain)
        return facets

    def commit_job(self, name: str) -> Any:  # noqa: ANN401 - a Job, or its plain form
        """The job of a snapshot's run (``jobType`` COMMIT). In plain form one per name, shared by the table's events
        (a plain part is never changed); an object each time (openlineage's client adds facets to its dict)."""
        job = self._jobs.get(name)
        if job is None:
            job = make(Job, self.plain, namespace=self.settings.job.namespace, name=name,
                       facets={"jobType": self._commit_type})
            if self.plain:
                self._jobs[name] = job
        return job

    def snapshot_schema(self, stats: SnapshotStats) -> Schema:
        md = self.table.metadata
        return md.schema_for(md.snapshot_by_id(stats.snapshot_id))

    def parent_schema(self, stats: SnapshotStats) -> Schema | None:
        """The parent snapshot's schema when both snapshots name theirs (v1 tables often do not: then unknown)."""
        md = self.table.metadata
        parent = md.snapshot_by_id(stats.parent_id) if stats.parent_id is not None else None
        if parent is None or parent.schema_id is None or stats.schema_id is None:
            return None
        return md.schemas.get(parent.schema_id)
