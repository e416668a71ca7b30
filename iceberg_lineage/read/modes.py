"""The metrics modes in force when each snapshot was written, recovered from the table's metadata files.

The write mode is not stored per data file. But every metadata file listed in ``metadata-log`` records the table's
properties at that version, and the first version that lists a snapshot (with the version before it, which the
writer may have read its properties from) tells the modes that could have applied to the files that snapshot added.
Where the versions are gone (a missing or unreadable file, a log cut by ``write.metadata.previous-versions-max``),
any mode could have applied. Old metadata files are read only when a bound's flag needs them, each once, at most
:data:`MAX_VERSIONS` of them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from iceberg_lineage.errors import IcebergLineageError
from iceberg_lineage.read.metadata import MetadataFile
from iceberg_lineage.read.source import LoadedTable, read_metadata_file

#: Iceberg's default metrics mode, and the mode Java gives sort-order columns under ``counts`` or ``none``.
DEFAULT_MODE = "truncate(16)"
DEFAULT_KEY = "write.metadata.metrics.default"
COLUMN_KEY = "write.metadata.metrics.column."
#: The newest metadata-log entries read (Iceberg keeps 100 by default).
MAX_VERSIONS = 100

_TRUNCATE_RE = re.compile(r"truncate\((\d+)\)")

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


def _names(schema_fields: Iterable[Mapping[str, Any]], prefix: str = "") -> Iterable[tuple[int, str]]:
    for f in schema_fields:
        name = f"{prefix}{f['name']}"
        yield int(f["id"]), name
        t = f.get("type")
        if isinstance(t, Mapping) and t.get("type") == "struct":
            yield from _names(t.get("fields") or (), name + ".")


def version_of(raw: Any) -> Version | None:
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
        sids = frozenset(int(s["snapshot-id"]) for s in raw.get("snapshots") or ())
    except (AttributeError, KeyError, TypeError, ValueError, StopIteration, RecursionError):
        return None
    return Version(props, names, sids)


class ModeHistory:
    """The truncation lengths that could have applied to the files each snapshot added, per column.

    ``read_raw`` reads one old metadata file as decoded JSON, raising :class:`IcebergLineageError` when it cannot;
    it is called only when a flag needs the history, at most once per file."""

    def __init__(self, md: MetadataFile, read_raw: Callable[[str], Any]) -> None:
        self._md = md
        self._read_raw = read_raw
        self._paths = [path for path, _ in md.metadata_log[-MAX_VERSIONS:]]
        self._read: dict[int, Version | None] = {}
        self._complete: bool | None = None if self._paths else True
        self._memo: dict[tuple[int | None, int], frozenset[int] | None] = {}
        self._by_time = {s.snapshot_id: s.timestamp_ms for s in md.snapshots}

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
            if i == 0:
                # the oldest version read is the table's first only when its own log is empty
                log = self._md.metadata_log
                self._complete = len(log) <= MAX_VERSIONS and isinstance(raw, Mapping) and not raw.get("metadata-log")
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
        if k is None or (k == 0 and not self._complete):
            return None
        out: set[int] = set()
        for i in range(max(k - 1, 0), k + 1):
            v = self._version(i)
            found = None if v is None else truncation_lengths(column_mode(v.properties, v.names.get(field_id, name)))
            if found is None:
                return None
            out |= found
        return frozenset(out)

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
    return ModeHistory(table.metadata, lambda path: read_metadata_file(table.io, table.io.resolve(path)))
