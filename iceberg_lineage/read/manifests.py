"""Streaming readers for manifest lists and manifests, with every v1-v3 field.

PyIceberg 0.12 reads manifests with the v2 schema (it drops ``referenced_data_file``, ``content_offset`` and
``content_size_in_bytes``), materialises whole files, and spends ~0.85 ms of schema setup per file. These readers
decode with fastavro, map fields by Iceberg field id (so other writers' names do not matter), and yield entries one
at a time. Inherited values (snapshot id, sequence numbers) are filled from the manifest list, as the spec says.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Iterator, Mapping, Protocol

from iceberg_lineage.errors import ManifestError, ManifestNotFoundError
from iceberg_lineage.jsontypes import Json
from iceberg_lineage.read.avro import block_range, cached, in_memory, iter_records, read_header
from iceberg_lineage.read.files import local_path

if TYPE_CHECKING:
    from iceberg_lineage.read.source import RelocatingIO

    class FileOpener(Protocol):
        """What a manifest is read through: a table's RelocatingIO, or a worker process's local files."""

        def open(self, path: str) -> IO[bytes]: ...


# Manifest content (manifest list field 517) and data file content (field 134).
DATA, DELETES = 0, 1
POSITION_DELETES, EQUALITY_DELETES = 1, 2
# Manifest entry status (field 0).
EXISTING, ADDED, DELETED = 0, 1, 2

_MANIFEST_FILE_IDS = {
    500: "manifest_path",
    501: "manifest_length",
    502: "partition_spec_id",
    517: "content",
    515: "sequence_number",
    516: "min_sequence_number",
    503: "added_snapshot_id",
    504: "added_files_count",
    505: "existing_files_count",
    506: "deleted_files_count",
    512: "added_rows_count",
    513: "existing_rows_count",
    514: "deleted_rows_count",
    507: "partitions",
    519: "key_metadata",
    520: "first_row_id",
}
_ENTRY_IDS = {0: "status", 1: "snapshot_id", 3: "sequence_number", 4: "file_sequence_number", 2: "data_file"}
_DATA_FILE_IDS = {
    134: "content",
    100: "file_path",
    101: "file_format",
    102: "partition",
    103: "record_count",
    104: "file_size_in_bytes",
    108: "column_sizes",
    109: "value_counts",
    110: "null_value_counts",
    137: "nan_value_counts",
    125: "lower_bounds",
    128: "upper_bounds",
    135: "equality_ids",
    140: "sort_order_id",
    142: "first_row_id",
    143: "referenced_data_file",
    144: "content_offset",
    145: "content_size_in_bytes",
}


@dataclass(frozen=True)
class ManifestFile:
    """One row of a manifest list. Counts are ``None`` when the writer left them out (v1 allows that)."""

    manifest_path: str
    manifest_length: int
    partition_spec_id: int
    content: int
    sequence_number: int
    min_sequence_number: int
    added_snapshot_id: int | None
    added_files_count: int | None
    existing_files_count: int | None
    deleted_files_count: int | None
    added_rows_count: int | None
    existing_rows_count: int | None
    deleted_rows_count: int | None
    first_row_id: int | None = None

    @property
    def live_files_count(self) -> int | None:
        if self.added_files_count is None or self.existing_files_count is None:
            return None
        return self.added_files_count + self.existing_files_count

    @property
    def live_rows_count(self) -> int | None:
        if self.added_rows_count is None or self.existing_rows_count is None:
            return None
        return self.added_rows_count + self.existing_rows_count


def _field_renames(schema: Json, ids: dict[int, str]) -> dict[str, str]:
    """Writer field name -> canonical name, for fields whose writer name differs from the spec's."""
    renames = {}
    for f in schema.get("fields", []) if isinstance(schema, dict) else []:
        fid = f.get("field-id")
        if fid is not None:
            try:
                canonical = ids.get(int(fid))
            except (TypeError, ValueError):
                continue
            if canonical and canonical != f["name"]:
                renames[f["name"]] = canonical
    return renames


def _record_schema(schema: Json) -> Json:
    """The record inside a union such as ``["null", {record}]``."""
    if isinstance(schema, list):
        for s in schema:
            if isinstance(s, dict) and s.get("type") == "record":
                return s
    return schema


def not_found(what: str, exc: FileNotFoundError, path: str) -> str:
    """"manifest not found", naming where it was looked for when that is not the recorded path (``--relocate``)."""
    where = exc.filename
    if where and where not in (path, local_path(path)):
        return f"{what} not found at {where} (relocated from the recorded path)"
    return f"{what} not found"


def _nonneg(value: object, what: str, path: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or value < 0 or value > 1 << 62:
        raise ManifestError(f"invalid {what} {value!r}", file=path)
    return value


def _list_plan(schema: Json) -> tuple[dict[str, str], str]:
    """Field renames of a manifest list (empty when the writer used the spec's names) and the writer's name of
    ``manifest_path``."""
    renames = _field_renames(schema, _MANIFEST_FILE_IDS)
    names = {f.get("name") for f in schema.get("fields", [])} if isinstance(schema, dict) else set()
    # v1 writers used these names before the spec settled on *_files_count
    for old, canonical in (
        ("added_data_files_count", "added_files_count"),
        ("existing_data_files_count", "existing_files_count"),
        ("deleted_data_files_count", "deleted_files_count"),
    ):
        if old in names:
            renames.setdefault(old, canonical)
    path_name = next((k for k, v in renames.items() if v == "manifest_path"), "manifest_path")
    return renames, path_name


_LIST_PLANS: dict[bytes, tuple[dict[str, str], str]] = {}


def _open(io: FileOpener, path: str, what: str) -> IO[bytes]:
    """Open a manifest or manifest list; a missing file is its own error type (an expired snapshot's list)."""
    try:
        return io.open(path)
    except FileNotFoundError as exc:
        raise ManifestNotFoundError(not_found(what, exc, path), file=path) from None
    except OSError as exc:
        raise ManifestError(f"cannot read {what}: {exc}", file=path) from None


def read_manifest_list(io: RelocatingIO, path: str,
                       known: Mapping[str, ManifestFile] | None = None) -> list[ManifestFile]:
    """Read a manifest list. It is small (one row per manifest), so it is returned as a list.

    ``known`` holds rows already read from other lists, by manifest path: a manifest is immutable, and so is its
    row, so a known row is reused instead of being rebuilt (with fast appends, every list repeats its parent's rows).
    """
    stream = _open(io, path, "manifest list")
    out = []
    known = known or {}
    with stream:
        header = read_header(stream, path)
        renames, path_name = cached(_LIST_PLANS, header.schema_json, lambda: _list_plan(header.schema))
        for rec in iter_records(stream, header, path):
            manifest_path = rec.get(path_name)
            found = known.get(manifest_path) if type(manifest_path) is str else None
            if found is not None:
                out.append(found)
                continue
            if renames:
                rec = {renames.get(k, k): v for k, v in rec.items()}
            try:
                out.append(
                    ManifestFile(
                        manifest_path=str(rec["manifest_path"]),
                        manifest_length=int(rec["manifest_length"]),
                        partition_spec_id=int(rec["partition_spec_id"]),
                        content=int(rec.get("content") or DATA),
                        sequence_number=int(rec.get("sequence_number") or 0),
                        min_sequence_number=int(rec.get("min_sequence_number") or 0),
                        added_snapshot_id=rec.get("added_snapshot_id"),
                        added_files_count=_nonneg(rec.get("added_files_count"), "added_files_count", path),
                        existing_files_count=_nonneg(rec.get("existing_files_count"), "existing_files_count", path),
                        deleted_files_count=_nonneg(rec.get("deleted_files_count"), "deleted_files_count", path),
                        added_rows_count=_nonneg(rec.get("added_rows_count"), "added_rows_count", path),
                        existing_rows_count=_nonneg(rec.get("existing_rows_count"), "existing_rows_count", path),
                        deleted_rows_count=_nonneg(rec.get("deleted_rows_count"), "deleted_rows_count", path),
                        first_row_id=rec.get("first_row_id"),
                    )
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise ManifestError(f"manifest list row does not match the spec ({exc})", file=path) from None
    return out


def _entry_plan(schema: Json, path: str) -> tuple[dict[str, str], dict[str, str]]:
    """Field renames for entries and data files, after checking that the schema is a manifest entry schema."""
    entry_renames = _field_renames(schema, _ENTRY_IDS)
    data_file_schema = None
    for f in schema.get("fields", []) if isinstance(schema, dict) else []:
        if f.get("field-id") == 2 or f.get("name") == "data_file":
            data_file_schema = _record_schema(f.get("type"))
    if not isinstance(data_file_schema, dict) or not {"status", "data_file"} <= {
        entry_renames.get(f["name"], f["name"]) for f in schema.get("fields", [])
    }:
        raise ManifestError("Avro schema is not a manifest entry schema", file=path)
    df_renames = _field_renames(data_file_schema, _DATA_FILE_IDS)
    df_names = {df_renames.get(f["name"], f["name"]) for f in data_file_schema.get("fields", [])}
    if not {"file_path", "record_count", "file_size_in_bytes"} <= df_names:
        raise ManifestError("Avro schema is not a manifest entry schema (data_file fields missing)", file=path)
    return entry_renames, df_renames


_ENTRY_PLANS: dict[bytes, tuple[dict[str, str], dict[str, str]]] = {}


def iter_manifest_entries(io_: FileOpener, manifest: ManifestFile,
                          byte_range: tuple[int, int] | None = None) -> Iterator[dict]:
    """Stream the entries of one manifest (or of its blocks starting in ``byte_range``) as dicts with canonical
    field names.

    A null ``snapshot_id`` is inherited from the manifest list, as the spec says (sequence numbers are left as
    written: statistics do not use them). ``data_file`` keeps fastavro's decoding: maps are lists of
    ``{"key", "value"}`` records and bounds are ``bytes``.

    Decoding stays with fastavro on purpose: PyIceberg 0.12's compiled decoder reads byte strings past the end of
    its buffer when a length inside a record says so (no cap on blocks can see that), and pyiceberg-core 0.10 is
    slower than fastavro (docs/delivery.md, ``benchmarks/walk.py --decoders``).
    """
    path = manifest.manifest_path
    stream = _open(io_, path, "manifest")
    with stream:
        if byte_range is None:
            stream = in_memory(stream, manifest.manifest_length)
        else:
            stream = block_range(stream, byte_range, path)
        header = read_header(stream, path)
        entry_renames, df_renames = cached(_ENTRY_PLANS, header.schema_json, lambda: _entry_plan(header.schema, path))
        added_snapshot = manifest.added_snapshot_id
        for rec in iter_records(stream, header, path):  # one generator layer: this loop is the per-entry hot path
            if entry_renames:
                rec = {entry_renames.get(k, k): v for k, v in rec.items()}
            if df_renames:
                rec["data_file"] = {df_renames.get(k, k): v for k, v in rec["data_file"].items()}
            if rec.get("snapshot_id") is None:
                rec["snapshot_id"] = added_snapshot
            yield rec


def manifests_of_snapshot(
    io: RelocatingIO,
    manifest_list: str | None,
    v1_manifests: tuple[str, ...] | None,
    known: Mapping[str, ManifestFile] | None = None,
) -> list[ManifestFile]:
    """The manifests of a snapshot: from its manifest list, or (old v1 metadata) its inline ``manifests``."""
    if manifest_list:
        return read_manifest_list(io, manifest_list, known)
    return [
        ManifestFile(p, 0, 0, DATA, 0, 0, None, None, None, None, None, None, None) for p in (v1_manifests or ())
    ]
