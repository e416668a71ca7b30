"""RENAMEs and DROPs a scan finds, as plain records: the event each one sends, and what the state records once it
is delivered."""
from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass
from typing import Literal

from iceberg_lineage.config import Settings
from iceberg_lineage.errors import CatalogError, IcebergLineageError, MetadataError
from iceberg_lineage.read.catalogs import CatalogSpec, catalog_account
from iceberg_lineage.read.metadata_json import parse_metadata
from iceberg_lineage.read.source import LoadedTable, RelocatingIO, catalog_type_of, load_metadata_path, open_table
from iceberg_lineage.state.store import StateStore, TrackedTable


@dataclass(frozen=True)
class LifecycleChange:
    """A table renamed to ``identifier``, or dropped; ``tracked`` is its row in the state (identity, the name and
    metadata file recorded last)."""

    kind: Literal["RENAME", "DROP"]
    catalog: CatalogSpec
    tracked: TrackedTable
    identifier: tuple[str, ...]

    @classmethod
    def rename(cls, catalog: CatalogSpec, tracked: TrackedTable, new: tuple[str, ...]) -> "LifecycleChange":
        return cls("RENAME", catalog, tracked, new)

    @classmethod
    def drop(cls, catalog: CatalogSpec, tracked: TrackedTable) -> "LifecycleChange":
        return cls("DROP", catalog, tracked, tracked.identifier)


def change_events(change: LifecycleChange, settings: Settings, when: dt.datetime) -> list[str]:
    """The change's run as JSON, START (unless ``events.start_events`` is off) and COMPLETE: a RENAME describes the
    table under its new name, a DROP the table that is gone."""
    from iceberg_lineage.lineage.events import lifecycle_event, with_start
    from iceberg_lineage.lineage.serde import to_json

    if change.kind == "RENAME":
        table = open_table(change.identifier, catalog=change.catalog.load())
        event = lifecycle_event(table, "RENAME", settings, previous_identifier=change.tracked.identifier,
                                event_time=when)
    else:
        event = lifecycle_event(_tombstone(change.catalog, change.tracked), "DROP", settings, event_time=when)
    return [to_json(e) for e in with_start(event, settings)]


def record_change(state: StateStore, change: LifecycleChange) -> None:
    """Record a delivered change, so it is not sent again."""
    if change.kind == "RENAME":
        state.rename(change.tracked.identity, change.identifier)
    else:
        state.mark_dropped(change.tracked.identity)


def _tombstone(spec: CatalogSpec, entry: TrackedTable) -> LoadedTable:
    """The table that is gone, described by its last metadata file when that still exists."""
    try:
        if not entry.metadata_location:
            raise MetadataError("no metadata location recorded")
        loaded = load_metadata_path(entry.metadata_location, properties=dict(spec.properties))
    except IcebergLineageError:
        raw = {"format-version": 2, "table-uuid": entry.identity, "location": entry.location,
               "schemas": [{"schema-id": 0, "type": "struct", "fields": []}], "current-schema-id": 0}
        loaded = LoadedTable(parse_metadata(raw, entry.metadata_location), RelocatingIO(None))
    try:
        catalog = spec.load()
        catalog_type, account = catalog_type_of(catalog), catalog_account(catalog)
    except CatalogError:
        catalog_type, account = dict(spec.properties).get("type", "static"), None
    return dataclasses.replace(
        loaded, name=entry.identifier[-1], catalog_name=spec.name, catalog_type=catalog_type,
        catalog_properties=dict(spec.properties), identifier=entry.identifier, aws_account=account,
    )
