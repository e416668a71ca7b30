"""Parsing a ``metadata.json`` (already decoded from JSON) into :class:`MetadataFile`.

Parsing is pure: JSON in, model out; :mod:`iceberg_lineage.read.source` does the I/O. Every way the JSON can break
the spec becomes one :class:`MetadataError`.
"""
from __future__ import annotations

import posixpath
from types import MappingProxyType
from typing import Any, Callable, Mapping

from iceberg_lineage.errors import MetadataError
from iceberg_lineage.jsontypes import Json
from iceberg_lineage.read.metadata import (
    THETA_BLOB, BlobMetadata, Field, MetadataFile, PartitionField, PartitionSpec, Ref, Schema, Snapshot,
    StatisticsFile,
)

SUPPORTED_FORMAT_VERSIONS = (1, 2, 3)
#: The spec's long: ids, sequence numbers, timestamps and counts must fit in it.
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1


def shown(value: Json, limit: int = 40) -> str:
    """A value for an error line, cut short: a hostile value may be 5,000 digits long."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def long_value(value: Json, what: str) -> int:
    """An integer in the spec's long range, else a ``ValueError`` naming the field (``Infinity``, ``2**64``,
    ``"5"``)."""
    if type(value) is int and LONG_MIN <= value <= LONG_MAX:  # the common case, first: 700,000 calls a 100,000
        return value  # snapshots file
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what}: expected an integer, got {shown(value)}")
    if not LONG_MIN <= value <= LONG_MAX:
        raise ValueError(f"{what}: {shown(value)} is outside the long range")
    return value


def count_value(value: Json, what: str) -> int:
    """A long that is not negative (counts, sequence numbers)."""
    if long_value(value, what) < 0:
        raise ValueError(f"{what}: {value} is negative")
    return value


def _opt(check: Callable[[Json, str], int], value: Json, what: str) -> int | None:
    return None if value is None else check(value, what)


def resolve_location(location: str, metadata_location: str | None) -> str:
    """A relative ``location`` (``./lineitem_iceberg``) is resolved against the directory that holds ``metadata/``."""
    if "://" in location or location.startswith("/") or not metadata_location:
        return location
    meta_dir = posixpath.dirname(metadata_location)
    table_dir = posixpath.dirname(meta_dir) if posixpath.basename(meta_dir) == "metadata" else meta_dir
    return table_dir


def _type_string(t: Json) -> tuple[str, tuple[Field, ...]]:
    if isinstance(t, str):
        return t, ()
    if not isinstance(t, Mapping):
        raise ValueError(f"bad type {t!r}")
    kind = t.get("type")
    if kind == "struct":
        return "struct", tuple(_parse_field(f) for f in t.get("fields", []))
    if kind == "list":
        elem_type, elem_children = _type_string(t["element"])
        element = Field(
            long_value(t["element-id"], "element-id"), "element", elem_type, bool(t.get("element-required")), None,
            elem_children,
        )
        return "list", (element,)
    if kind == "map":
        k_type, k_children = _type_string(t["key"])
        v_type, v_children = _type_string(t["value"])
        return "map", (
            Field(long_value(t["key-id"], "key-id"), "key", k_type, True, None, k_children),
            Field(
                long_value(t["value-id"], "value-id"), "value", v_type, bool(t.get("value-required")), None, v_children
            ),
        )
    raise ValueError(f"unknown type {kind!r}")


def _parse_field(f: Mapping[str, Any]) -> Field:
    type_name, children = _type_string(f["type"])
    return Field(
        long_value(f["id"], "field id"), str(f["name"]), type_name, bool(f.get("required", False)), f.get("doc"),
        children,
    )


def _parse_schema(s: Mapping[str, Any], default_id: int = 0) -> Schema:
    schema_id = long_value(s.get("schema-id", default_id), "schema-id")
    return Schema(schema_id, tuple(_parse_field(f) for f in s.get("fields", [])))


def _parse_spec(spec_id: int, fields: list[Mapping[str, Any]]) -> PartitionSpec:
    out = []
    for i, f in enumerate(fields):
        out.append(
            PartitionField(
                long_value(f["source-id"], "source-id"), long_value(f.get("field-id", 1000 + i), "partition field-id"),
                str(f["name"]), str(f["transform"]),
            )
        )
    return PartitionSpec(spec_id, tuple(out))


#: At most this many distinct strings are shared between the snapshots of one file (see :func:`compact_snapshot`).
SHARED_STRINGS = 4096


def _parse_snapshot(s: Mapping[str, Any], shared: dict[str, str] | None = None) -> Snapshot:
    summary = s.get("summary") or {}
    if not isinstance(summary, dict) and not isinstance(summary, Mapping):
        raise ValueError("snapshot summary is not an object")
    manifests = s.get("manifests")
    strings = {str(k): str(v) for k, v in summary.items()} if shared is None else _shared(summary, shared)
    # positional, and the optional fields checked only when present: this runs once per snapshot of a file
    parent, sequence, schema_id = s.get("parent-snapshot-id"), s.get("sequence-number"), s.get("schema-id")
    first_row_id, added_rows = s.get("first-row-id"), s.get("added-rows")
    return Snapshot(
        long_value(s["snapshot-id"], "snapshot-id"),
        None if parent is None else long_value(parent, "parent-snapshot-id"),
        None if sequence is None else count_value(sequence, "sequence-number"),
        long_value(s["timestamp-ms"], "timestamp-ms"),
        s.get("manifest-list"),
        tuple(manifests) if manifests is not None else None,
        MappingProxyType(strings),
        None if schema_id is None else long_value(schema_id, "schema-id"),
        None if first_row_id is None else count_value(first_row_id, "first-row-id"),
        None if added_rows is None else count_value(added_rows, "added-rows"),
    )


def _shared(summary: Mapping[Any, Any], shared: dict[str, str]) -> dict[str, str]:
    """The summary as strings, with one copy of each string the snapshots repeat (its keys, ``append``, ``0``): the
    first :data:`SHARED_STRINGS` distinct ones are remembered, which the first snapshots fill with the common ones.
    One pass, as this runs once per snapshot of a file (400,000 times)."""
    if len(shared) < SHARED_STRINGS:
        keep = shared.setdefault
        return {keep(k := str(key), k): keep(v := str(value), v) for key, value in summary.items()}
    get = shared.get
    return {get(k := str(key), k): get(v := str(value), v) for key, value in summary.items()}


def compact_snapshot(raw: Json, shared: dict[str, str]) -> Snapshot | Json:
    """A just-decoded element of ``snapshots`` as its :class:`Snapshot`, or as it is when it does not parse (then
    :func:`parse_metadata` reports it, in file order)."""
    try:
        return _parse_snapshot(raw, shared)  # type: ignore[arg-type]
    except (KeyError, TypeError, ValueError, AttributeError):
        return raw


def compact_log_entry(raw: Json, shared: dict[str, str]) -> tuple[int, int] | Json:
    """A just-decoded ``snapshot-log`` entry as its pair, or as it is when it does not parse."""
    try:
        return _log_entry(raw)  # type: ignore[arg-type]
    except (KeyError, TypeError, ValueError, AttributeError):
        return raw


def _log_entry(e: Mapping[str, Any]) -> tuple[int, int]:
    return (long_value(e["snapshot-id"], "snapshot-log snapshot-id"),
            long_value(e["timestamp-ms"], "snapshot-log timestamp-ms"))


def _parse_snapshots(raw: list[Any]) -> tuple[Snapshot, ...]:
    """The snapshots, each id once: a file listing an id twice is not one table's history. Elements already
    parsed while the file was decoded (:mod:`~iceberg_lineage.read.metadata_stream`) are taken as they are: JSON
    decodes to no :class:`Snapshot`."""
    snapshots = tuple(s if isinstance(s, Snapshot) else _parse_snapshot(s) for s in raw)
    seen: set[int] = set()
    for s in snapshots:
        if s.snapshot_id in seen:
            raise ValueError(f"snapshot id {s.snapshot_id} is listed twice")
        seen.add(s.snapshot_id)
    return snapshots


def parse_metadata(raw: Json, metadata_location: str | None = None, table: str | None = None) -> MetadataFile:
    """Parse raw metadata JSON (already decoded) into :class:`MetadataFile`; raises :class:`MetadataError` naming
    ``table`` (by default the last part of the metadata's location) and the file."""
    try:
        return _parse(raw, metadata_location)
    except MetadataError as exc:
        raise exc.with_table(table or _table_of(raw, metadata_location)) from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
        raise MetadataError(
            f"invalid table metadata: {what}", table=table or _table_of(raw, metadata_location), file=metadata_location
        ) from None


def _table_of(raw: Json, metadata_location: str | None) -> str | None:
    """The table's name for an error line, as :class:`LoadedTable` names it: the last part of its location (a
    relative one resolved), else of the directory above ``metadata/``."""
    location = raw.get("location") if isinstance(raw, Mapping) else None
    location = resolve_location(location if isinstance(location, str) else "", metadata_location)
    return posixpath.basename(location.rstrip("/")) or None


def _parse_refs(refs_raw: Json, current: int | None) -> dict[str, Ref]:
    refs: dict[str, Ref] = {}
    if refs_raw:
        for name, r in refs_raw.items():
            refs[str(name)] = Ref(str(name), long_value(r["snapshot-id"], f"ref {name}"), str(r.get("type", "branch")))
    elif current is not None:
        # No refs (older writers): main is the current snapshot and its ancestors, as the spec defines it.
        refs["main"] = Ref("main", current, "branch")
    return refs


def _parse_blob(b: Mapping[str, Any]) -> BlobMetadata:
    """A Puffin blob's metadata; the ``ndv`` of a theta sketch must be a count written in ASCII digits."""
    properties = {str(k): str(v) for k, v in (b.get("properties") or {}).items()}
    ndv = properties.get("ndv")
    if ndv is not None and b.get("type") == THETA_BLOB:
        if not (ndv.isascii() and ndv.isdigit() and len(ndv) <= 19):
            raise ValueError(f"statistics blob ndv: {shown(ndv)} is not a count")
        count_value(int(ndv), "statistics blob ndv")
    return BlobMetadata(
        str(b.get("type")),
        tuple(long_value(x, "statistics blob field") for x in b.get("fields", [])),
        _opt(long_value, b.get("snapshot-id"), "statistics blob snapshot-id"),
        MappingProxyType(properties),
    )


def _parse_statistics(raw: list[Any]) -> tuple[StatisticsFile, ...]:
    statistics = []
    for st in raw:
        blobs = tuple(_parse_blob(b) for b in st.get("blob-metadata", []))
        statistics.append(
            StatisticsFile(
                long_value(st["snapshot-id"], "statistics snapshot-id"), str(st.get("statistics-path", "")), blobs
            )
        )
    return tuple(statistics)


def _parse(raw: Json, metadata_location: str | None) -> MetadataFile:
    if not isinstance(raw, Mapping):
        raise MetadataError("table metadata is not a JSON object", file=metadata_location)
    fv = raw.get("format-version")
    if fv not in SUPPORTED_FORMAT_VERSIONS or isinstance(fv, bool):
        raise MetadataError(f"unsupported format-version {fv!r}", file=metadata_location)
    location = raw["location"]
    if not isinstance(location, str):
        raise ValueError("location is not a string")
    location = resolve_location(location, metadata_location)

    if "schemas" in raw:
        schemas = {s.schema_id: s for s in (_parse_schema(x) for x in raw["schemas"])}
        current_schema_id = long_value(raw.get("current-schema-id", next(iter(schemas), 0)), "current-schema-id")
    else:
        legacy = _parse_schema(raw["schema"])
        schemas = {legacy.schema_id: legacy}
        current_schema_id = legacy.schema_id
    if current_schema_id not in schemas:
        raise ValueError(f"current-schema-id {current_schema_id} has no schema")

    if "partition-specs" in raw:
        specs = {
            (sid := long_value(p["spec-id"], "spec-id")): _parse_spec(sid, p.get("fields", []))
            for p in raw["partition-specs"]
        }
        default_spec_id = long_value(raw.get("default-spec-id", 0), "default-spec-id")
    else:
        specs = {0: _parse_spec(0, raw.get("partition-spec", []))}
        default_spec_id = 0

    snapshots = _parse_snapshots(raw.get("snapshots") or [])
    current = raw.get("current-snapshot-id")
    current = None if current is None or current == -1 else long_value(current, "current-snapshot-id")

    refs_raw = raw.get("refs")
    refs = _parse_refs(refs_raw, current)
    statistics = _parse_statistics(raw.get("statistics") or [])
    props = raw.get("properties") or {}
    return MetadataFile(
        format_version=int(fv),
        table_uuid=raw.get("table-uuid"),
        location=location,
        metadata_location=metadata_location,
        last_sequence_number=_opt(count_value, raw.get("last-sequence-number"), "last-sequence-number"),
        last_updated_ms=_opt(long_value, raw.get("last-updated-ms"), "last-updated-ms"),
        schemas=MappingProxyType(schemas),
        current_schema_id=current_schema_id,
        specs=MappingProxyType(specs),
        default_spec_id=default_spec_id,
        properties=MappingProxyType({str(k): str(v) for k, v in props.items()}),
        current_snapshot_id=current,
        snapshots=snapshots,
        refs=MappingProxyType(refs),
        refs_explicit=bool(refs_raw),
        snapshot_log=tuple(e if isinstance(e, tuple) else _log_entry(e) for e in raw.get("snapshot-log") or []),
        metadata_log=tuple(
            (str(e["metadata-file"]), long_value(e["timestamp-ms"], "metadata-log timestamp-ms"))
            for e in raw.get("metadata-log") or []
        ),
        statistics=statistics,
        raw=raw,
    )
