"""The table metadata model: small, frozen views of a ``metadata.json``, parsed by
:mod:`iceberg_lineage.read.metadata_json`.

PyIceberg's parser loses facts we need (it invents a random ``table-uuid`` for v1 tables that have none, fails on
types such as ``variant``, and rejects some writers' files), so the walker parses the JSON itself into these models.
"""
from __future__ import annotations

import functools
import uuid
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Container, Iterable, Iterator, Mapping

#: Default ``write.target-file-size-bytes`` (512 MiB); files below half of it count as small.
DEFAULT_TARGET_FILE_SIZE = 512 * 1024 * 1024
#: Namespace for stable ids of tables without a ``table-uuid`` (UUIDv5 of the normalised location).
STABLE_ID_NAMESPACE = uuid.UUID("6f1c1d2e-5b7a-5f0e-9c3b-1d2e3f4a5b6c")
#: The Puffin blob type whose ``ndv`` property is a column's distinct count.
THETA_BLOB = "apache-datasketches-theta-v1"

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


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One snapshot; slotted, as a table may hold 400,000 of them."""

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
class MetadataFile:
    """One parsed ``metadata.json`` (this project's model, not PyIceberg's ``TableMetadata``)."""

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
    @functools.cached_property
    def _by_id(self) -> Mapping[int, Snapshot]:
        return {s.snapshot_id: s for s in self.snapshots}

    def snapshot_by_id(self, snapshot_id: int) -> Snapshot | None:
        return self._by_id.get(snapshot_id)

    @property
    def current_schema(self) -> Schema:
        return self.schemas[self.current_schema_id]

    def schema_for(self, snapshot: Snapshot | None) -> Schema:
        """The schema a snapshot was written with; the current schema when the snapshot does not say."""
        if snapshot is not None and snapshot.schema_id is not None and snapshot.schema_id in self.schemas:
            return self.schemas[snapshot.schema_id]
        return self.current_schema

    def snapshots_in_commit_order(self, wanted: Container[int] | None = None) -> tuple[Snapshot, ...]:
        """Snapshots (those of ``wanted`` ids only, if given) ordered by sequence number (v2+), then timestamp, then
        position in the file."""
        indexed = [(i, s) for i, s in enumerate(self.snapshots) if wanted is None or s.snapshot_id in wanted]
        indexed.sort(key=lambda p: (p[1].sequence_number or 0, p[1].timestamp_ms, p[0]))
        return tuple(s for _, s in indexed)

    def ancestors(self, snapshot_id: int | None) -> Iterator[Snapshot]:
        """The snapshot and its ancestors, newest first; stops at a missing parent or a cycle."""
        by_id = self._by_id
        seen: set[int] = set()
        current = by_id.get(snapshot_id) if snapshot_id is not None else None
        while current is not None and current.snapshot_id not in seen:
            seen.add(current.snapshot_id)
            yield current
            current = by_id.get(current.parent_id) if current.parent_id is not None else None

    def refs_by_snapshot(self) -> dict[int, tuple[str, ...]]:
        """For each snapshot, the branches and tags whose history contains it (sorted names).

        Linear in snapshots plus refs: each chain is walked once, children before parents, and a snapshot whose
        branches are its only child's shares that child's tuple (10,000 branches over one chain share one tuple)."""
        branches: dict[int, list[str]] = {}
        tags: dict[int, list[str]] = {}
        for ref in self.refs.values():
            if ref.snapshot_id in self._by_id:
                (branches if ref.type == "branch" else tags).setdefault(ref.snapshot_id, []).append(ref.name)
        below = _branches_below(self._by_id, branches)
        named: dict[int, tuple[str, ...]] = {}  # sorted names by id() of a shared frozenset
        out: dict[int, tuple[str, ...]] = {}
        for sid, names in below.items():
            if sid not in tags:
                out[sid] = named.get(id(names)) or named.setdefault(id(names), tuple(sorted(names)))
        for sid, names in tags.items():
            out[sid] = tuple(sorted(below.get(sid, frozenset()).union(names)))
        return out

    def refs_of(self, snapshot_ids: Iterable[int]) -> dict[int, tuple[str, ...]]:
        """:meth:`refs_by_snapshot` for a few snapshots only, in time linear in snapshots plus refs times the
        wanted snapshots a branch's history holds: the sets of every snapshot, which 10,000 branches along one
        chain make quadratic (50 million names), are never built."""
        wanted = set(snapshot_ids)
        names: dict[int, list[str]] = {}
        nearest = _nearest_wanted(self._by_id, wanted)
        for ref in self.refs.values():
            sid = ref.snapshot_id
            if sid not in self._by_id:
                continue
            if ref.type != "branch":
                if sid in wanted:
                    names.setdefault(sid, []).append(ref.name)
                continue
            seen: set[int] = set()
            found = nearest(sid)
            while found is not None and found not in seen:  # the wanted snapshots in this branch's history
                seen.add(found)
                names.setdefault(found, []).append(ref.name)
                parent = self._by_id[found].parent_id
                found = nearest(parent) if parent in self._by_id else None
        return {sid: tuple(sorted(set(found))) for sid, found in names.items()}

    def ndv_by_field(self, snapshot_id: int) -> dict[int, int]:
        """Distinct counts from theta-sketch blob properties of the statistics file of exactly this snapshot."""
        out: dict[int, int] = {}
        for stats_file in self.statistics:
            if stats_file.snapshot_id != snapshot_id:
                continue
            for blob in stats_file.blobs:
                if blob.type != THETA_BLOB or len(blob.fields) != 1:
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


def _branches_below(by_id: Mapping[int, Snapshot], tips: Mapping[int, list[str]]) -> dict[int, frozenset[str]]:
    """For every snapshot on a branch's history, the branches whose history holds it.

    The snapshots reachable from the tips, each found once; then children before parents (a snapshot has at most
    one parent, so a count of unfinished children orders them), a parent taking the union of its children's sets.
    What is left once that order runs out is a cycle of parents (hostile metadata): every snapshot in it holds the
    same branches."""
    parent: dict[int, int | None] = {}
    for tip in tips:
        sid: int | None = tip
        while sid is not None and sid not in parent:
            snap = by_id[sid]
            parent[sid] = snap.parent_id if snap.parent_id in by_id else None
            sid = parent[sid]
    children = dict.fromkeys(parent, 0)
    for p in parent.values():
        if p is not None:
            children[p] += 1
    incoming: dict[int, list[frozenset[str]]] = {}
    ready = [sid for sid, n in children.items() if n == 0]
    out: dict[int, frozenset[str]] = {}
    while ready:
        sid = ready.pop()
        out[sid] = _union(incoming.pop(sid, []), tips.get(sid))
        p = parent[sid]
        if p is not None:
            incoming.setdefault(p, []).append(out[sid])
            children[p] -= 1
            if children[p] == 0:
                ready.append(p)
    for sid in [sid for sid in parent if sid not in out]:
        if sid in out:
            continue  # joined the cycle of an earlier snapshot
        cycle = [sid]
        while (nxt := parent[cycle[-1]]) != sid:
            cycle.append(nxt)  # type: ignore[arg-type]
        names = _union([s for c in cycle for s in incoming.pop(c, [])], [n for c in cycle for n in tips.get(c, ())])
        out.update(dict.fromkeys(cycle, names))
    return out


def _nearest_wanted(by_id: Mapping[int, Snapshot], wanted: set[int]) -> Callable[[int], int | None]:
    """A function from a snapshot to the nearest of ``wanted`` among it and its ancestors (``None``: none), each
    snapshot's answer found once and remembered for every snapshot on the way (a cycle of parents answers
    ``None`` past its wanted snapshots)."""
    known: dict[int, int | None] = {}

    def nearest(sid: int) -> int | None:
        path: list[int] = []
        on_path: set[int] = set()
        current: int | None = sid
        while current is not None and current not in known and current not in wanted and current not in on_path:
            path.append(current)
            on_path.add(current)
            parent = by_id[current].parent_id
            current = parent if parent in by_id else None
        answer = current if current in wanted else known.get(current) if current is not None else None
        for visited in path:
            known[visited] = answer
        return answer

    return nearest


def _union(sets: list[frozenset[str]], names: list[str] | None) -> frozenset[str]:
    """The union, reusing the one input set when nothing is added (what keeps long chains linear)."""
    if len(sets) == 1 and not names:
        return sets[0]
    return frozenset(names or ()).union(*sets)


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


#: The former name, kept for code that imports it.
TableMetadata = MetadataFile
