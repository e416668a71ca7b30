"""The metrics modes in force when each snapshot was written, recovered from the table's metadata files.

The write mode is not stored per data file. But every metadata file listed in ``metadata-log`` records the table's
properties at that version, and the first version that lists a snapshot (with the version before it, which the
writer may have read its properties from) tells the modes that could have applied to the files that snapshot added.
The log "reaches" a snapshot only when it holds the version written just before the one that added it; otherwise
(a missing or unreadable file, a log cut by ``write.metadata.previous-versions-max``, stripped or with a hole) any
mode could have applied. An empty log proves the modes of a table's first version only: one parentless snapshot
whose ``timestamp-ms`` equals the file's ``last-updated-ms``, as a create-and-append commit writes it. Old metadata
files are read only when a bound's flag needs them, each once, at most :data:`MAX_VERSIONS` of them.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

from iceberg_lineage.errors import IcebergLineageError
from iceberg_lineage.jsontypes import Json
from iceberg_lineage.read.metadata import MetadataFile, Snapshot
from iceberg_lineage.read.source import LoadedTable, read_metadata_file

#: Iceberg's default metrics mode, and the mode Java gives sort-order columns under ``counts`` or ``none``.
DEFAULT_MODE = "truncate(16)"
DEFAULT_KEY = "write.metadata.metrics.default"
COLUMN_KEY = "write.metadata.metrics.column."
#: The newest metadata-log entries read (Iceberg keeps 100 by default).
MAX_VERSIONS = 100

_TRUNCATE_RE = re.compile(r"truncate\((\d+)\)")
#: The version number in a metadata file's name: ``00003-<uuid>.metadata.json`` (catalogs), ``v3.metadata.json``
#: (Hadoop tables), either optionally gzip-compressed.
_NUMBERED_RE = re.compile(r"v?(\d+)(?:-[^/]*)?\.(?:gz\.)?metadata\.json(?:\.gz)?")

_NONE: frozenset[int] = frozenset()


def truncation_lengths(mode: str) -> frozenset[int] | None:
    """The truncation lengths a mode string allows. ``counts`` and ``none`` store no bounds, so a bound found under
    them was written by a writer that promoted the column (Iceberg Java does so for sort-order columns) to the
    default ``truncate(16)``. A mode no writer accepts could have been replaced by anything."""
    m = mode.strip().lower()
    if m == "full":
        return _NONE
    if m in ("counts", "none"):
        return frozenset({16})
    found = _TRUNCATE_RE.fullmatch(m)
    if found and int(found.group(1)) > 0:
        return frozenset({int(found.group(1))})
    return None


def column_mode(properties: Mapping[str, str], column: str) -> str:
    """A column's write metrics mode under a set of table properties."""
    return properties.get(COLUMN_KEY + column, properties.get(DEFAULT_KEY, DEFAULT_MODE))


@dataclass(frozen=True)
class Version:
    """What one metadata version says about metrics modes: its properties, its column names by field id (modes are
    keyed by name) and the snapshots it lists."""

    properties: Mapping[str, str]
    names: Mapping[int, str]
    snapshot_ids: frozenset[int]
    #: The file name of the version before this one, by this version's own ``metadata-log`` (``None``: empty log).
    previous: str | None = None
    #: The snapshot this version shows as the table's first commit (empty log, one parentless snapshot as old as
    #: the file), else ``None``.
    first_snapshot: int | None = None


def _names(schema_fields: Iterable[Mapping[str, Any]], prefix: str = "") -> Iterable[tuple[int, str]]:
    for f in schema_fields:
        name = f"{prefix}{f['name']}"
        yield int(f["id"]), name
        t = f.get("type")
        if isinstance(t, Mapping) and t.get("type") == "struct":
            yield from _names(t.get("fields") or (), name + ".")


def version_of(raw: Json) -> Version | None:
    """The modes part of a raw metadata file, or ``None`` when it is not readable as one."""
    if raw is None:
        return None
    try:
        props = {str(k): str(v) for k, v in (raw.get("properties") or {}).items()}
        schemas = raw.get("schemas")
        if schemas:
            current = next(s for s in schemas if s.get("schema-id") == raw.get("current-schema-id", 0))
        else:
            current = raw["schema"]
        names = dict(_names(current.get("fields") or ()))
        snapshots = [_facts(s) for s in raw.get("snapshots") or ()]
        sids = frozenset(sid for sid, _, _ in snapshots)
        log = raw.get("metadata-log") or ()
        previous = _file_name(str(log[-1]["metadata-file"])) if log else None
        first = None
        if not log and len(snapshots) == 1:
            sid, parent, timestamp = snapshots[0]
            if parent is None and timestamp == raw.get("last-updated-ms"):
                first = sid
    except (AttributeError, KeyError, TypeError, ValueError, StopIteration, RecursionError):
        return None
    return Version(props, names, sids, previous, first)


def _facts(snapshot: Any) -> tuple[int, Any, Any]:
    """Id, parent and time of a snapshot as decoded: a dict, the :class:`Snapshot` it was parsed into while the
    file was read (:mod:`~iceberg_lineage.read.metadata_stream`), or the facts :data:`FACTS_ONLY` kept of it (JSON
    decodes to no tuple). The facts of a dict are the same as of the Snapshot it parses into, if it does."""
    if isinstance(snapshot, Snapshot):
        return snapshot.snapshot_id, snapshot.parent_id, snapshot.timestamp_ms
    if type(snapshot) is tuple:
        return snapshot
    return int(snapshot["snapshot-id"]), snapshot.get("parent-snapshot-id"), snapshot.get("timestamp-ms")


def _compact_facts(raw: Json, shared: dict) -> tuple[int, Any, Any] | Json:
    try:
        return _facts(raw)
    except (AttributeError, KeyError, TypeError, ValueError):
        return raw  # :func:`version_of` fails on it again, as it would have on the element itself


#: How an old metadata file is read for its modes: each snapshot kept as its facts only, the snapshot log not at
#: all; parsing whole snapshots (summaries) was most of the read.
FACTS_ONLY: Mapping[str, Callable[[Any, dict], Any]] = MappingProxyType(
    {"snapshots": _compact_facts, "snapshot-log": lambda raw, shared: None}
)


def _file_name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _follows(name: str, before: str, previous: str | None) -> bool:
    """Whether the metadata file ``name`` was written just after ``before`` (both file names): by their version
    numbers where both names carry one, else by the predecessor ``name``'s own log records (``previous``)."""
    this, that = _NUMBERED_RE.fullmatch(name), _NUMBERED_RE.fullmatch(before)
    if this and that:
        return int(this.group(1)) == int(that.group(1)) + 1
    return previous == before


def _numbered_first(name: str) -> bool:
    """Whether a metadata file name can be a table's first version: catalogs number it 0, Hadoop tables ``v1``; an
    unnumbered name cannot tell."""
    found = _NUMBERED_RE.fullmatch(name)
    return found is None or int(found.group(1)) == (1 if name.startswith("v") else 0)


class ModeHistory:
    """The truncation lengths that could have applied to the files each snapshot added, per column.

    ``read_raw`` reads one old metadata file as decoded JSON, raising :class:`IcebergLineageError` when it cannot;
    it is called only when a flag needs the history, at most once per file."""

    def __init__(self, md: MetadataFile, read_raw: Callable[[str], Any]) -> None:
        self._md = md
        self._read_raw = read_raw
        self._paths = [path for path, _ in md.metadata_log[-MAX_VERSIONS:]]
        self._names = [_file_name(p) for p in self._paths] + [_file_name(md.metadata_location or "")]
        self._read: dict[int, Version | None] = {}
        self._memo: dict[tuple[int | None, int], frozenset[int] | None] = {}

    @functools.cached_property
    def _by_time(self) -> dict[int, int]:
        """Each snapshot's time, built when a flag first needs it: not for every walk of a 400,000-snapshot table."""
        return {s.snapshot_id: s.timestamp_ms for s in self._md.snapshots}

    def _version(self, i: int) -> Version | None:
        """Version ``i``, oldest first (read on first use, ``None`` where unreadable); the last is the current
        metadata."""
        if i == len(self._paths) and i not in self._read:
            self._read[i] = version_of(self._md.raw) or Version(
                self._md.properties, {f.id: n for n, f in self._md.current_schema.columns()},
                frozenset(s.snapshot_id for s in self._md.snapshots))
        if i not in self._read:
            try:
                raw = self._read_raw(self._paths[i])
            except IcebergLineageError:
                raw = None
            self._read[i] = version_of(raw)
        return self._read[i]

    def lengths(self, snapshot_id: int | None, field_id: int, name: str) -> frozenset[int] | None:
        """The truncation lengths that could have applied to column ``field_id`` (``name`` where a version does
        not name it) in the files ``snapshot_id`` added: those of the first version that lists the snapshot and of
        the version before it."""
        key = (snapshot_id, field_id)
        if key not in self._memo:
            self._memo[key] = self._lengths(snapshot_id, field_id, name)
        return self._memo[key]

    def _lists(self, i: int, snapshot_id: int | None) -> bool:
        v = self._version(i)
        return v is not None and snapshot_id in v.snapshot_ids

    def _first_listing(self, snapshot_id: int | None) -> int | None:
        """The first version that lists the snapshot. The versions that list one are contiguous (it is added once
        and gone once expired), so: the oldest version (one read, and a snapshot older than the log ends there),
        else backwards from the newest version that lists it (a recent snapshot costs a few reads, not a hundred)."""
        if self._lists(0, snapshot_id):
            return 0
        last = next((i for i in range(len(self._paths), 0, -1) if self._lists(i, snapshot_id)), None)
        if last is None:
            return None
        while last > 1 and self._lists(last - 1, snapshot_id):
            last -= 1
        return last

    def _lengths(self, snapshot_id: int | None, field_id: int, name: str) -> frozenset[int] | None:
        k = self._first_listing(snapshot_id)
        if k is None or not self._reaches(k, snapshot_id):
            return None
        out: set[int] = set()
        for i in range(max(k - 1, 0), k + 1):
            v = self._version(i)
            found = None if v is None else truncation_lengths(column_mode(v.properties, v.names.get(field_id, name)))
            if found is None:
                return None
            out |= found
        return frozenset(out)

    def _reaches(self, k: int, snapshot_id: int | None) -> bool:
        """Whether the versions hold the one written just before version ``k``, the first to list the snapshot (or
        version ``k`` is the table's first commit, which added it)."""
        added_by = self._version(k)
        if added_by is None:
            return False
        if k == 0:  # a created-then-appended table with its log stripped differs only by its file's number
            return snapshot_id is not None and added_by.first_snapshot == snapshot_id and _numbered_first(self._names[0])
        return _follows(self._names[k], self._names[k - 1], added_by.previous)

    def union(self, snapshot_ids: Iterable[int | None], field_id: int, name: str) -> frozenset[int] | None:
        """The lengths that could have applied to any of these snapshots' files. The oldest snapshot is asked first:
        when it predates the log, the answer is known after one read."""
        by_time = self._by_time
        ordered = sorted(snapshot_ids, key=lambda sid: (sid is not None, by_time.get(sid, 0) if sid is not None else 0))
        out: set[int] = set()
        for sid in ordered:
            found = self.lengths(sid, field_id, name)
            if found is None:
                return None
            out |= found
        return frozenset(out)


def mode_history(table: LoadedTable) -> ModeHistory:
    """The history of a loaded table; old metadata files are read through its FileIO, relocation applied, each
    bounded as the current one is."""
    io = table.io
    return ModeHistory(table.metadata, lambda path: read_metadata_file(io, io.resolve(path), FACTS_ONLY))
