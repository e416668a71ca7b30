"""Tables as an Iceberg REST catalog describes them: the ``metadata`` of a LoadTableResult or CommitTableResponse
made a :class:`LoadedTable`, and the table-updates of a commit request applied to the metadata it started from
(``POST /transactions/commit`` answers 204 with no body, so the bridge rebuilds what the commit wrote).

The FileIO of such a table is built from the reader's own properties only: the ``config`` a LoadTableResult carries
(vended storage credentials) is never read here.
"""
from __future__ import annotations

import copy
from typing import Any, Mapping, Sequence

from iceberg_lineage.errors import MetadataError
from iceberg_lineage.read.metadata_json import parse_metadata
from iceberg_lineage.read.source import LoadedTable, RelocatingIO, _file_io

#: ``TableUpdate`` actions that change the table's schema, partitioning, sort order or properties (an ALTER).
ALTERING_ACTIONS = frozenset({
    "add-schema", "set-current-schema", "add-spec", "set-default-spec", "add-sort-order",
    "set-default-sort-order", "set-properties", "remove-properties", "set-location", "upgrade-format-version",
})


def rest_table(
    metadata: Mapping[str, Any], metadata_location: str | None, identifier: Sequence[str], *,
    catalog_name: str, uri: str, io_properties: Mapping[str, str] | None = None,
) -> LoadedTable:
    """A REST table under ``identifier`` in the catalog at ``uri`` (the URI engines use, which names it)."""
    if not isinstance(metadata, Mapping):
        raise MetadataError("the catalog's answer has no table metadata", file=metadata_location)
    ident = tuple(identifier)
    md = parse_metadata(dict(metadata), metadata_location, ".".join(ident))
    properties = dict(io_properties or {})
    return LoadedTable(
        metadata=md, io=RelocatingIO(_file_io(md.location, properties)), name=ident[-1], catalog_name=catalog_name,
        catalog_type="rest", catalog_properties={"type": "rest", "uri": uri}, identifier=ident,
    )


def added_snapshot_ids(updates: Sequence[Any]) -> list[int]:
    """The snapshots a commit request adds (its ``add-snapshot`` updates), in order."""
    return [int(u["snapshot"]["snapshot-id"]) for u in _updates(updates, "add-snapshot")
            if isinstance(u.get("snapshot"), Mapping) and "snapshot-id" in u["snapshot"]]


def alters(updates: Sequence[Any]) -> bool:
    return any(isinstance(u, Mapping) and u.get("action") in ALTERING_ACTIONS for u in updates)


def creates(requirements: Sequence[Any]) -> bool:
    """A commit that creates the table (a staged create being committed: ``assert-create``)."""
    return any(isinstance(r, Mapping) and r.get("type") == "assert-create" for r in requirements or ())


def apply_updates(metadata: Mapping[str, Any], updates: Sequence[Any]) -> dict[str, Any]:
    """The metadata after a commit's snapshot, ref, schema and property updates (other updates do not change
    what an event says about a snapshot). The result has no metadata file of its own.

    Not PyIceberg's ``update_table_metadata``: it stamps ``last-updated-ms`` from this machine's clock whenever no
    snapshot set it, and an ALTER's runId is derived from that field, so a re-sent event would differ."""
    md = copy.deepcopy(dict(metadata))
    for u in updates:
        if not isinstance(u, Mapping):
            continue
        action = u.get("action")
        if action == "add-snapshot" and isinstance(u.get("snapshot"), Mapping):
            snap = dict(u["snapshot"])
            md["snapshots"] = [*md.get("snapshots", []), snap]
            if isinstance(snap.get("sequence-number"), int):
                md["last-sequence-number"] = max(md.get("last-sequence-number", 0), snap["sequence-number"])
            md["last-updated-ms"] = max(md.get("last-updated-ms", 0), int(snap.get("timestamp-ms", 0)))
        elif action == "set-snapshot-ref":
            _set_ref(md, u)
        elif action == "add-schema" and isinstance(u.get("schema"), Mapping):
            md["schemas"] = [*md.get("schemas", []), dict(u["schema"])]
        elif action == "set-current-schema":
            schema_id = u.get("schema-id")
            md["current-schema-id"] = md["schemas"][-1].get("schema-id") if schema_id == -1 else schema_id
        elif action == "set-properties":
            md["properties"] = {**md.get("properties", {}), **dict(u.get("updates") or {})}
        elif action == "remove-properties":
            md["properties"] = {k: v for k, v in md.get("properties", {}).items() if k not in (u.get("removals") or ())}
    return md


def _set_ref(md: dict[str, Any], update: Mapping[str, Any]) -> None:
    name, snapshot_id = update.get("ref-name"), update.get("snapshot-id")
    ref = {k: v for k, v in update.items() if k not in ("action", "ref-name")}
    md["refs"] = {**md.get("refs", {}), name: ref}
    if name == "main":
        md["current-snapshot-id"] = snapshot_id


def _updates(updates: Sequence[Any], action: str) -> list[Mapping[str, Any]]:
    return [u for u in updates or () if isinstance(u, Mapping) and u.get("action") == action]
