"""Why ``null_fraction`` found a column's counts unknown. A writer puts value and null counts in a data file's
manifest entry for the fields of the schema it wrote the file with; a column added by schema evolution afterwards
has none in the older files. Other files lack them because their writer left metrics out (``metrics.default``
``none``). Telling the two apart takes each live data file's entry and the schema of the snapshot that added it: a
second read of the snapshot's data manifests, made only when a count is unknown.
"""
from __future__ import annotations

from typing import Iterator, Mapping

from iceberg_lineage.quality.evaluate import CountsGap
from iceberg_lineage.read.manifests import DATA, DELETED, iter_manifest_entries, manifests_of_snapshot
from iceberg_lineage.read.metadata import MetadataFile
from iceberg_lineage.read.source import LoadedTable


def counts_gaps(table: LoadedTable, snapshot_id: int, columns: Mapping[str, int]) -> dict[str, CountsGap]:
    """For each of ``columns`` (name: field id), the live data files of the snapshot without a value or null count
    for it, and how many of those were added by a snapshot whose schema did not have the field."""
    md = table.metadata
    missing = dict.fromkeys(columns, 0)
    predating = dict.fromkeys(columns, 0)
    written_with: dict[int | None, frozenset[int] | None] = {}
    for entry in _live_data_entries(table, snapshot_id):
        df = entry["data_file"]
        counted = ({kv["key"] for kv in df.get("value_counts") or ()}
                   & {kv["key"] for kv in df.get("null_value_counts") or ()})
        for name, fid in columns.items():
            if fid in counted:
                continue
            missing[name] += 1
            sid = entry.get("snapshot_id")
            if sid not in written_with:
                written_with[sid] = _field_ids(md, sid)
            known = written_with[sid]
            predating[name] += known is not None and fid not in known
    return {name: CountsGap(missing[name], predating[name], _added_in(md, fid)) for name, fid in columns.items()}


def _live_data_entries(table: LoadedTable, snapshot_id: int) -> Iterator[dict]:
    snapshot = table.metadata.snapshot_by_id(snapshot_id)
    if snapshot is None:
        return
    for manifest in manifests_of_snapshot(table.io, snapshot.manifest_list, snapshot.manifests):
        if manifest.content != DATA:
            continue
        for entry in iter_manifest_entries(table.io, manifest):
            if entry["status"] != DELETED and (entry["data_file"].get("content") or DATA) == DATA:
                yield entry


def _field_ids(md: MetadataFile, snapshot_id: int | None) -> frozenset[int] | None:
    """The field ids of the schema a snapshot was written with; None when unknown (expired, or no schema id)."""
    snapshot = md.snapshot_by_id(snapshot_id) if snapshot_id is not None else None
    if snapshot is None or snapshot.schema_id is None or snapshot.schema_id not in md.schemas:
        return None
    return frozenset(md.schemas[snapshot.schema_id].by_id())


def _added_in(md: MetadataFile, field_id: int) -> int | None:
    """The id of the first schema that has the field."""
    return next((sid for sid in sorted(md.schemas) if field_id in md.schemas[sid].by_id()), None)
