"""Table metadata read from the raw ``metadata.json``.

PyIceberg's parser loses facts we need (it invents a random ``table-uuid`` for v1 tables that have none, fails on
types such as ``variant``, and rejects some writers' files), so the walker parses the JSON itself into these small,
frozen models. Parsing is pure: JSON in, model out; :mod:`iceberg_lineage.read.source` does the I/O.
"""
from __future__ import annotations

import posixpath
import uuid
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Iterator, Mapping

from iceberg_lineage.errors import MetadataError

SUPPORTED_FORMAT_VERSIONS = (1, 2, 3)
#: Default ``write.target-file-size-bytes`` (512 MiB); files below half of it count as small.
DEFAULT_TARGET_FILE_SIZE = 512 * 1024 * 1024
#: Namespace for stable ids of tables without a ``table-uuid`` (UUIDv5 of the normalised location).
STABLE_ID_NAMESPACE = uuid.UUID("6f1c1d2e-5b7a-5f0e-9c3b-1d2e3f4a5b6c")

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class Field:
    """A schema field. ``type`` is the Iceberg type string (``long``, ``decimal(9,2)``, ``struct``, ``list``,
    ``map``, ``variant`` ...); nested fields are in ``children`` (list element and map key/value included)."""

    id: int
    name: str
    type: str
    required: bool = False
    doc: str | None = None
    children: tuple["Field", ...] = ()

    @property
    def is_primitive(self) -> bool:
        return self.type not in ("struct", "list", "map")


@dataclass(frozen=True)
class Schema:
    schema_id: int
    fields: tuple[Field, ...]

    def columns(self) -> Iterator[tuple[str, Field]]:
        """Every field with its dotted full name (``a.b.c``), depth first, in schema order.

        List elements and map keys/values take the names ``element``, ``key`` and ``value``, as Iceberg's
        ``findColumnName`` does.
        """

        def walk(prefix: str, fs: tuple[Field, ...]) -> Iterator[tuple[str, Field]]:
            for f in fs:
                name = f"{prefix}{f.name}"
                yield name, f
                if f.children:
                    yield from walk(name + ".", f.children)

        return walk("", self.fields)

    def by_id(self) -> dict[int, tuple[str, Field]]:
        return {f.id: (name, f) for name, f in self.columns()}


@dataclass(frozen=True)
class PartitionField:
    source_id: int
    field_id: int
    name: str
    transform: str


@dataclass(frozen=True)
class PartitionSpec:
    spec_id: int
    fields: tuple[PartitionField, ...]

    @property
    def is_unpartitioned(self) -> bool:
        return all(f.transform == "void" for f in self.fields)


@dataclass(frozen=True)
class Snapshot:
    snapshot_id: int
    parent_id: int | None
    sequence_number: int | None
    timestamp_ms: int
    manifest_list: str | None
    manifests: tuple[str, ...] | None
    summary: Mapping[str, str]
    schema_id: int | None
    first_row_id: int | None = None
    added_rows: int | None = None

    @property
    def operation(self) -> str | None:
        return self.summary.get("operation")


@dataclass(frozen=True)
class Ref:
    name: str
    snapshot_id: int
    type: str  # "branch" | "tag"


@dataclass(frozen=True)
class BlobMetadata:
    type: str
    fields: tuple[int, ...]
    snapshot_id: int | None
    properties: Mapping[str, str]


@dataclass(frozen=True)
class StatisticsFile:
    snapshot_id: int
    path: str
    blobs: tuple[BlobMetadata, ...]


@dataclass(frozen=True)
class TableMetadata:
    format_version: int
    table_uuid: str | None
    location: str
    metadata_location: str | None
    last_sequence_number: int | None
    last_updated_ms: int | None
    schemas: Mapping[int, Schema]
    current_schema_id: int
    specs: Mapping[int, PartitionSpec]
    default_spec_id: int
    properties: Mapping[str, str]
    current_snapshot_id: int | None
    snapshots: tuple[Snapshot, ...]
    refs: Mapping[str, Ref]
    refs_explicit: bool
    snapshot_log: tuple[tuple[int, int], ...] = ()
    metadata_log: tuple[tuple[str, int], ...] = ()
    statistics: tuple[StatisticsFile, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, repr=False, compare=False)

    # -- identity -------------------------------------------------------------------------------------------------
    @property
    def identity(self) -> str:
        """The table's uuid, or a stable UUIDv5 of its normalised location when the metadata has none."""
        return self.table_uuid or stable_table_id(self.location)

    # -- lookups --------------------------------------------------------------------------------------------------
    def snapshot_by_id(self, snapshot_id: int) -> Snapshot | None:
        for s in self.snapshots:
            if s.snapshot_id == snapshot_id:
                return s
        return None

    @property
    def current_schema(self) -> Schema:
        return self.schemas[self.current_schema_id]

    def schema_for(self, snapshot: Snapshot | None) -> Schema:
        """The schema a snapshot was written with; the current schema when the snapshot does not say."""
        if snapshot is not None and snapshot.schema_id is not None and snapshot.schema_id in self.schemas:
            return self.schemas[snapshot.schema_id]
        return self.current_schema

    def snapshots_in_commit_order(self) -> tuple[Snapshot, ...]:
        """Snapshots ordered by sequence number (v2+), then timestamp, then position in the file."""
        indexed = list(enumerate(self.snapshots))
        indexed.sort(key=lambda p: (p[1].sequence_number or 0, p[1].timestamp_ms, p[0]))
        return tuple(s for _, s in indexed)

    def ancestors(self, snapshot_id: int | None) -> Iterator[Snapshot]:
        """The snapshot and its ancestors, newest first; stops at a missing parent or a cycle."""
        by_id = {s.snapshot_id: s for s in self.snapshots}
        seen: set[int] = set()
        current = by_id.get(snapshot_id) if snapshot_id is not None else None
        while current is not None and current.snapshot_id not in seen:
            seen.add(current.snapshot_id)
            yield current
            current = by_id.get(current.parent_id) if current.parent_id is not None else None

    def refs_by_snapshot(self) -> dict[int, tuple[str, ...]]:
        """For each snapshot, the branches and tags whose history contains it (sorted names)."""
        out: dict[int, list[str]] = {}
        for ref in self.refs.values():
            chain = self.ancestors(ref.snapshot_id) if ref.type == "branch" else iter(
                [s for s in [self.snapshot_by_id(ref.snapshot_id)] if s is not None]
            )
            for snap in chain:
                out.setdefault(snap.snapshot_id, []).append(ref.name)
        return {k: tuple(sorted(v)) for k, v in out.items()}

    def ndv_by_field(self, snapshot_id: int) -> dict[int, int]:
        """Distinct counts from theta-sketch blob properties of the statistics file of exactly this snapshot."""
        out: dict[int, int] = {}
        for stats_file in self.statistics:
            if stats_file.snapshot_id != snapshot_id:
                continue
            for blob in stats_file.blobs:
                if blob.type != "apache-datasketches-theta-v1" or len(blob.fields) != 1:
                    continue
                ndv = blob.properties.get("ndv")
                if ndv is not None and str(ndv).isdigit():
                    out[blob.fields[0]] = int(ndv)
        return out

    @property
    def target_file_size(self) -> int:

        value = self.properties.get("write.target-file-size-bytes")
        try:
            return int(value) if value is not None else DEFAULT_TARGET_FILE_SIZE
        except ValueError:
            return DEFAULT_TARGET_FILE_SIZE

    def metrics_mode(self, column: str) -> str:
        """The write metrics mode of a column (``none``, ``counts``, ``truncate(N)`` or ``full``)."""
        return self.properties.get(
            f"write.metadata.metrics.column.{column}",
            self.properties.get("write.metadata.metrics.default", "truncate(16)"),
        )


def stable_table_id(location: str) -> str:
    """UUIDv5 of the normalised location: the same table gets the same id on every parse, on every machine."""
    return str(uuid.uuid5(STABLE_ID_NAMESPACE, normalise_location(location)))


def normalise_location(location: str) -> str:
    loc = location.strip()
    for old, new in (("s3a://", "s3://"), ("s3n://", "s3://")):
        if loc.startswith(old):
            loc = new + loc[len(old) :]
    if loc.startswith("file:///"):
        loc = loc[len("file://") :]
    elif loc.startswith("file:/") and not loc.startswith("file://"):
        loc = loc[len("file:") :]
    return loc.rstrip("/")


def resolve_location(location: str, metadata_location: str | None) -> str:
    """A relative ``location`` (``./lineitem_iceberg``) is resolved against the directory that holds ``metadata/``."""
    if "://" in location or location.startswith("/") or not metadata_location:
        return location
    meta_dir = posixpath.dirname(metadata_location)
    table_dir = posixpath.dirname(meta_dir) if posixpath.basename(meta_dir) == "metadata" else meta_dir
    return table_dir


# --------------------------------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------------------------------

def _type_string(t: Any) -> tuple[str, tuple[Field, ...]]:
    if isinstance(t, str):
        return t, ()
    if not isinstance(t, Mapping):
        raise ValueError(f"bad type {t!r}")
    kind = t.get("type")
    if kind == "struct":
        return "struct", tuple(_parse_field(f) for f in t.get("fields", []))
    if kind == "list":
        elem_type, elem_children = _type_string(t["element"])
        element = Field(int(t["element-id"]), "element", elem_type, bool(t.get("element-required")), None, elem_children)
        return "list", (element,)
    if kind == "map":
        k_type, k_children = _type_string(t["key"])
        v_type, v_children = _type_string(t["value"])
        return "map", (
            Field(int(t["key-id"]), "key", k_type, True, None, k_children),
            Field(int(t["value-id"]), "value", v_type, bool(t.get("value-required")), None, v_children),
        )
    raise ValueError(f"unknown type {kind!r}")


def _parse_field(f: Mapping[str, Any]) -> Field:
    type_name, children = _type_string(f["type"])
    return Field(int(f["id"]), str(f["name"]), type_name, bool(f.get("required", False)), f.get("doc"), children)


def _parse_schema(s: Mapping[str, Any], default_id: int = 0) -> Schema:
    return Schema(int(s.get("schema-id", default_id)), tuple(_parse_field(f) for f in s.get("fields", [])))


def _parse_spec(spec_id: int, fields: list[Mapping[str, Any]]) -> PartitionSpec:
    out = []
    for i, f in enumerate(fields):
        out.append(
            PartitionField(int(f["source-id"]), int(f.get("field-id", 1000 + i)), str(f["name"]), str(f["transform"]))
        )
    return PartitionSpec(spec_id, tuple(out))


def _opt_int(v: Any) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"expected an integer, got {v!r}")
    return v


def _parse_snapshot(s: Mapping[str, Any]) -> Snapshot:
    summary = s.get("summary") or {}
    if not isinstance(summary, Mapping):
        raise ValueError("snapshot summary is not an object")
    manifests = s.get("manifests")
    return Snapshot(
        snapshot_id=_opt_int(s["snapshot-id"]),  # type: ignore[arg-type]
        parent_id=_opt_int(s.get("parent-snapshot-id")),
        sequence_number=_opt_int(s.get("sequence-number")),
        timestamp_ms=_opt_int(s["timestamp-ms"]),  # type: ignore[arg-type]
        manifest_list=s.get("manifest-list"),
        manifests=tuple(manifests) if manifests is not None else None,
        summary=MappingProxyType({str(k): str(v) for k, v in summary.items()}),
        schema_id=_opt_int(s.get("schema-id")),
        first_row_id=_opt_int(s.get("first-row-id")),
        added_rows=_opt_int(s.get("added-rows")),
    )


def parse_metadata(raw: Any, metadata_location: str | None = None) -> TableMetadata:
    """Parse raw metadata JSON (already decoded) into :class:`TableMetadata`; raises :class:`MetadataError`."""
    try:
        return _parse(raw, metadata_location)
    except MetadataError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
        raise MetadataError(f"invalid table metadata: {what}", file=metadata_location) from None


def _parse(raw: Any, metadata_location: str | None) -> TableMetadata:
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
        current_schema_id = int(raw.get("current-schema-id", next(iter(schemas), 0)))
    else:
        legacy = _parse_schema(raw["schema"])
        schemas = {legacy.schema_id: legacy}
        current_schema_id = legacy.schema_id
    if current_schema_id not in schemas:
        raise ValueError(f"current-schema-id {current_schema_id} has no schema")

    if "partition-specs" in raw:
        specs = {int(p["spec-id"]): _parse_spec(int(p["spec-id"]), p.get("fields", [])) for p in raw["partition-specs"]}
        default_spec_id = int(raw.get("default-spec-id", 0))
    else:
        specs = {0: _parse_spec(0, raw.get("partition-spec", []))}
        default_spec_id = 0

    snapshots = tuple(_parse_snapshot(s) for s in raw.get("snapshots") or [])
    current = raw.get("current-snapshot-id")
    current = None if current in (None, -1) else _opt_int(current)

    refs_raw = raw.get("refs")
    refs: dict[str, Ref] = {}
    if refs_raw:
        for name, r in refs_raw.items():
            refs[str(name)] = Ref(str(name), int(r["snapshot-id"]), str(r.get("type", "branch")))
    elif current is not None:
        # No refs (older writers): main is the current snapshot and its ancestors, as the spec defines it.
        refs["main"] = Ref("main", current, "branch")

    statistics = []
    for st in raw.get("statistics") or []:
        blobs = tuple(
            BlobMetadata(
                str(b.get("type")),
                tuple(int(x) for x in b.get("fields", [])),
                b.get("snapshot-id"),
                MappingProxyType({str(k): str(v) for k, v in (b.get("properties") or {}).items()}),
            )
            for b in st.get("blob-metadata", [])
        )
        statistics.append(StatisticsFile(int(st["snapshot-id"]), str(st.get("statistics-path", "")), blobs))

    props = raw.get("properties") or {}
    return TableMetadata(
        format_version=int(fv),
        table_uuid=raw.get("table-uuid"),
        location=location,
        metadata_location=metadata_location,
        last_sequence_number=raw.get("last-sequence-number"),
        last_updated_ms=raw.get("last-updated-ms"),
        schemas=MappingProxyType(schemas),
        current_schema_id=current_schema_id,
        specs=MappingProxyType(specs),
        default_spec_id=default_spec_id,
        properties=MappingProxyType({str(k): str(v) for k, v in props.items()}),
        current_snapshot_id=current,
        snapshots=snapshots,
        refs=MappingProxyType(refs),
        refs_explicit=bool(refs_raw),
        snapshot_log=tuple((int(e["snapshot-id"]), int(e["timestamp-ms"])) for e in raw.get("snapshot-log") or []),
        metadata_log=tuple((str(e["metadata-file"]), int(e["timestamp-ms"])) for e in raw.get("metadata-log") or []),
        statistics=tuple(statistics),
        raw=raw,
    )
