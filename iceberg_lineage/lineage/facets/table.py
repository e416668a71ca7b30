"""Facets of a table as a dataset: its version, names, schema, catalog, storage, documentation, owner, and the
lifecycle change a snapshot makes."""
from __future__ import annotations

import functools
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
from iceberg_lineage.lineage.serde import make
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


def version_facet(snapshot_id: int, *, plain: bool = False) -> dataset_version_dataset.DatasetVersionDatasetFacet:
    return make(dataset_version_dataset.DatasetVersionDatasetFacet, plain, datasetVersion=str(snapshot_id), **PRODUCED)


def symlinks_facet(identifiers: Iterable[Identifier], *, plain: bool = False
                   ) -> symlinks_dataset.SymlinksDatasetFacet | None:
    found = [make(symlinks_dataset.Identifier, plain, namespace=i.namespace, name=i.name, type=i.type)
             for i in identifiers]
    return make(symlinks_dataset.SymlinksDatasetFacet, plain, identifiers=found, **PRODUCED) if found else None


def schema_facet(schema: Schema, *, plain: bool = False) -> schema_dataset.SchemaDatasetFacet:
    """Nested fields with Iceberg type names and ``doc`` as description, :data:`MAX_SCHEMA_DEPTH` levels deep: a
    deeper field keeps its type name (``struct``) without its children, so that any schema the metadata
    reader accepts (some 330 levels) serialises, validates and is read by consumers."""

    def convert(fields: tuple[Field, ...], depth: int) -> list[schema_dataset.SchemaDatasetFacetFields]:
        return [
            make(
                schema_dataset.SchemaDatasetFacetFields, plain,
                name=f.name, type=f.type, description=f.doc, ordinal_position=i,
                fields=(convert(f.children, depth + 1) if depth < MAX_SCHEMA_DEPTH else None) or None,
            )
            for i, f in enumerate(fields, start=1)
        ]

    return make(schema_dataset.SchemaDatasetFacet, plain, fields=convert(schema.fields, 1), **PRODUCED)


def catalog_facet(table: LoadedTable, *, plain: bool = False) -> catalog_dataset.CatalogDatasetFacet:
    """Catalog type, name and URIs without credentials. Of the other properties only the allow-listed ones
    (:data:`~iceberg_lineage.redact.CATALOG_FACET_KEYS`) are copied: a harmless name may hold a secret value."""
    props = table.catalog_properties
    uri = props.get("uri")
    warehouse = props.get("warehouse")
    safe = {k: v for k, v in catalog_facet_properties(props).items() if k not in ("uri", "warehouse")}
    return make(
        catalog_dataset.CatalogDatasetFacet, plain,
        framework="iceberg",
        type=table.catalog_type or "static",
        name=table.catalog_name or STATIC_CATALOG_NAME,
        metadataUri=strip_userinfo(uri) if uri else table.metadata.metadata_location,
        warehouseUri=strip_userinfo(warehouse) if warehouse else None,
        source=SOURCE,
        catalogProperties=safe,
        **PRODUCED,
    )


def storage_facet(properties: Mapping[str, str], *, plain: bool = False) -> storage_dataset.StorageDatasetFacet:
    return _storage_facet(properties.get("write.format.default", "parquet").lower(), plain)


@functools.lru_cache(maxsize=64)
def _storage_facet(file_format: str, plain: bool) -> storage_dataset.StorageDatasetFacet:
    """One per format, shared by every table's events (a facet is never changed once built)."""
    return make(storage_dataset.StorageDatasetFacet, plain, storageLayer="iceberg", fileFormat=file_format, **PRODUCED)


@functools.lru_cache(maxsize=None)
def dataset_type_facet(*, plain: bool = False) -> dataset_type_dataset.DatasetTypeDatasetFacet:
    """The same for every table: built once, shared (a facet is never changed once built)."""
    return make(dataset_type_dataset.DatasetTypeDatasetFacet, plain, datasetType="TABLE", **PRODUCED)


def documentation_facet(properties: Mapping[str, str], *, plain: bool = False
                        ) -> documentation_dataset.DocumentationDatasetFacet | None:
    comment = properties.get("comment")
    return make(documentation_dataset.DocumentationDatasetFacet, plain, description=comment, **PRODUCED) \
        if comment else None


def ownership_facet(properties: Mapping[str, str], *, plain: bool = False
                    ) -> ownership_dataset.OwnershipDatasetFacet | None:
    """The ``owner`` property as an owner URN (``user:<name>`` unless it already has a prefix)."""
    owner = properties.get("owner")
    if not owner:
        return None
    name = owner if ":" in owner else f"user:{owner}"
    owners = [make(ownership_dataset.Owner, plain, name=name)]
    return make(ownership_dataset.OwnershipDatasetFacet, plain, owners=owners, **PRODUCED)


def lifecycle_facet(
    change: LifecycleStateChange, previous: tuple[str, str] | None = None, *, plain: bool = False
) -> lifecycle_state_change_dataset.LifecycleStateChangeDatasetFacet:
    prev = make(lifecycle_state_change_dataset.PreviousIdentifier, plain, namespace=previous[0], name=previous[1]) \
        if previous else None
    return make(
        lifecycle_state_change_dataset.LifecycleStateChangeDatasetFacet, plain,
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
