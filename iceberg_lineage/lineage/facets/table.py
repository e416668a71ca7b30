"""Facets of a table as a dataset: its version, names, schema, catalog, storage, documentation, owner, and the
lifecycle change a snapshot makes."""
from __future__ import annotations

from typing import Iterable, Mapping

from openlineage.client.facet_v2 import (
    catalog_dataset,
    dataset_type_dataset,
    dataset_version_dataset,
    documentation_dataset,
    lifecycle_state_change_dataset,
    ownership_dataset,
    schema_dataset,
    storage_dataset,
    symlinks_dataset,
)

from iceberg_lineage.lineage.facets.common import PRODUCED
from iceberg_lineage.lineage.naming import Identifier
from iceberg_lineage.read.metadata import Field, Schema
from iceberg_lineage.read.source import LoadedTable
from iceberg_lineage.redact import catalog_facet_properties, strip_userinfo
from iceberg_lineage.stats.model import SnapshotStats

#: ``catalog.source``: the system that reported the catalog.
SOURCE = "iceberg-lineage"
#: PyIceberg names the catalog of a bare metadata file (``StaticTable``) this way.
STATIC_CATALOG_NAME = "static-table"
#: Levels of nested fields the schema facet lists (the serialisers and validators of events recurse per level).
MAX_SCHEMA_DEPTH = 64

LifecycleStateChange = lifecycle_state_change_dataset.LifecycleStateChange


def version_facet(snapshot_id: int) -> dataset_version_dataset.DatasetVersionDatasetFacet:
    return dataset_version_dataset.DatasetVersionDatasetFacet(datasetVersion=str(snapshot_id), **PRODUCED)


def symlinks_facet(identifiers: Iterable[Identifier]) -> symlinks_dataset.SymlinksDatasetFacet | None:
    found = [symlinks_dataset.Identifier(namespace=i.namespace, name=i.name, type=i.type) for i in identifiers]
    return symlinks_dataset.SymlinksDatasetFacet(identifiers=found, **PRODUCED) if found else None


def schema_facet(schema: Schema) -> schema_dataset.SchemaDatasetFacet:
    """Nested fields with Iceberg type names and ``doc`` as description, :data:`MAX_SCHEMA_DEPTH` levels deep: a
    deeper field keeps its type name (``struct``) without its children, so that any schema the metadata
    reader accepts (some 330 levels) serialises, validates and is read by consumers."""

    def convert(fields: tuple[Field, ...], depth: int) -> list[schema_dataset.SchemaDatasetFacetFields]:
        return [
            schema_dataset.SchemaDatasetFacetFields(
                name=f.name, type=f.type, description=f.doc, ordinal_position=i,
                fields=(convert(f.children, depth + 1) if depth < MAX_SCHEMA_DEPTH else None) or None,
            )
            for i, f in enumerate(fields, start=1)
        ]

    return schema_dataset.SchemaDatasetFacet(fields=convert(schema.fields, 1), **PRODUCED)


def catalog_facet(table: LoadedTable) -> catalog_dataset.CatalogDatasetFacet:
    """Catalog type, name and URIs without credentials. Of the other properties only the allow-listed ones
    (:data:`~iceberg_lineage.redact.CATALOG_FACET_KEYS`) are copied: a harmless name may hold a secret value."""
    props = table.catalog_properties
    uri = props.get("uri")
    warehouse = props.get("warehouse")
    safe = {k: v for k, v in catalog_facet_properties(props).items() if k not in ("uri", "warehouse")}
    return catalog_dataset.CatalogDatasetFacet(
        framework="iceberg",
        type=table.catalog_type or "static",
        name=table.catalog_name or STATIC_CATALOG_NAME,
        metadataUri=strip_userinfo(uri) if uri else table.metadata.metadata_location,
        warehouseUri=strip_userinfo(warehouse) if warehouse else None,
        source=SOURCE,
        catalogProperties=safe,
        **PRODUCED,
    )


def storage_facet(properties: Mapping[str, str]) -> storage_dataset.StorageDatasetFacet:
    return storage_dataset.StorageDatasetFacet(
        storageLayer="iceberg", fileFormat=properties.get("write.format.default", "parquet").lower(), **PRODUCED
    )


def dataset_type_facet() -> dataset_type_dataset.DatasetTypeDatasetFacet:
    return dataset_type_dataset.DatasetTypeDatasetFacet(datasetType="TABLE", **PRODUCED)


def documentation_facet(properties: Mapping[str, str]) -> documentation_dataset.DocumentationDatasetFacet | None:
    comment = properties.get("comment")
    return documentation_dataset.DocumentationDatasetFacet(description=comment, **PRODUCED) if comment else None


def ownership_facet(properties: Mapping[str, str]) -> ownership_dataset.OwnershipDatasetFacet | None:
    """The ``owner`` property as an owner URN (``user:<name>`` unless it already has a prefix)."""
    owner = properties.get("owner")
    if not owner:
        return None
    name = owner if ":" in owner else f"user:{owner}"
    return ownership_dataset.OwnershipDatasetFacet(owners=[ownership_dataset.Owner(name=name)], **PRODUCED)


def lifecycle_facet(
    change: LifecycleStateChange, previous: tuple[str, str] | None = None
) -> lifecycle_state_change_dataset.LifecycleStateChangeDatasetFacet:
    prev = lifecycle_state_change_dataset.PreviousIdentifier(namespace=previous[0], name=previous[1]) if previous else None
    return lifecycle_state_change_dataset.LifecycleStateChangeDatasetFacet(
        lifecycleStateChange=change, previousIdentifier=prev, **PRODUCED
    )


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
