"""The ScanReport of a PyIceberg ``DataScan``, with Java ``ScanMetrics`` counter semantics.

The report describes the scan PyIceberg actually runs. ``plan_with_report`` plans the scan once through a
``ManifestGroupPlanner`` subclass that only overrides the manifest filtering step to count what it prunes;
the tasks themselves come from PyIceberg's own ``plan_files`` (delete index, residuals, the equality-delete
error), so ``result-data-files == len(plan_files())`` by construction. Pruning reuses PyIceberg's private
evaluators (``_build_manifest_evaluator``, ``_build_partition_evaluator``, ``_build_metrics_evaluator`` which
wraps ``_InclusiveMetricsEvaluator``, ``_check_sequence_number``); pyproject pins ``pyiceberg>=0.12,<0.13`` and
``tests/scan_reporters/test_sr_pyiceberg_private_api.py`` fails loudly if they move.

Counter definitions (Java ``ManifestGroup`` / ``DeleteFileIndex`` / ``ScanMetricsUtil``):

* manifests are skipped by the partition-summary evaluator, because they have no added or existing files
  (Java's ``ignoreDeleted``), or, for delete manifests, by PyIceberg's older-than-all-data sequence check;
  ``total = scanned + skipped`` always holds;
* entries of opened manifests rejected by the partition evaluator or the inclusive metrics evaluator
  (which also rejects ``record_count == 0``) are skipped data/delete files; DELETED entries are not counted;
* every delete file that survives pruning is indexed once (``indexed``, split into ``positional``/``dvs``/
  ``equality``), while ``result-delete-files`` and ``total-delete-file-size-in-bytes`` count per task
  occurrence, using the spec's scope rules (see ``DeleteScope``) rather than PyIceberg's ``DeleteFileIndex``,
  which attaches DVs to every file of a partition and raises on equality deletes;
* DV sizes are ``content_size_in_bytes``. PyIceberg's manifest reader drops that and
  ``referenced_data_file``, so delete manifests are read with PyIceberg's own ``AvroFile`` and the v3
  manifest-entry read schema.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyiceberg.manifest import (
    DATA_FILE_TYPE,
    INITIAL_SEQUENCE_NUMBER,
    MANIFEST_ENTRY_SCHEMAS,
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
)
from pyiceberg.table import ManifestGroupPlanner

from scan_reporters.reports import ScanMetricsResult, ScanReport
from scan_reporters.sanitize import sanitize

if TYPE_CHECKING:
    from pyiceberg.io import FileIO
    from pyiceberg.schema import Schema
    from pyiceberg.table import DataScan, FileScanTask

PATH_FIELD_ID = 2147483546  # file_path column of position delete files
_V3_POS = {f.name: pos for pos, f in enumerate(DATA_FILE_TYPE[3].fields)}


def v3_field(data_file: DataFile, name: str) -> Any:
    """A v3-only ``data_file`` field (``referenced_data_file``, ``content_size_in_bytes``, ...) or ``None``."""
    try:
        return data_file[_V3_POS[name]]
    except IndexError:
        return None


def read_live_entries(io: FileIO, manifest: ManifestFile) -> list[ManifestEntry]:
    """Live entries of a manifest, keeping the v3 fields PyIceberg's ``fetch_manifest_entry`` drops."""
    from pyiceberg.avro.file import AvroFile
    from pyiceberg.manifest import _inherit_from_manifest

    with AvroFile[ManifestEntry](
        io.new_input(manifest.manifest_path),
        MANIFEST_ENTRY_SCHEMAS[3],
        read_types={-1: ManifestEntry, 2: DataFile},
        read_enums={0: ManifestEntryStatus, 101: FileFormat, 134: DataFileContent},
    ) as reader:
        return [_inherit_from_manifest(e, manifest) for e in reader if e.status != ManifestEntryStatus.DELETED]


def is_dv(delete_file: DataFile) -> bool:
    return delete_file.file_format == FileFormat.PUFFIN


def content_size(delete_file: DataFile) -> int:
    """Java ``ScanTaskUtil.contentSizeInBytes``: a DV's blob length, else the file size."""
    if is_dv(delete_file):
        size = v3_field(delete_file, "content_size_in_bytes")
        if size is not None:
            return int(size)
    return int(delete_file.file_size_in_bytes)


def referenced_data_file(delete_file: DataFile) -> str | None:
    """``referenced_data_file``, or the path when a position delete file's path bounds are equal."""
    ref = v3_field(delete_file, "referenced_data_file")
    if ref:
        return str(ref)
    lower, upper = delete_file.lower_bounds or {}, delete_file.upper_bounds or {}
    lo, hi = lower.get(PATH_FIELD_ID), upper.get(PATH_FIELD_ID)
    if lo is not None and lo == hi:
        try:
            return bytes(lo).decode("utf-8")
        except UnicodeDecodeError:
            return None
    return None


def _seq(entry: ManifestEntry) -> int:
    return entry.sequence_number or INITIAL_SEQUENCE_NUMBER


def _partition_key(data_file: DataFile) -> tuple[int, Any]:
    return (data_file.spec_id or 0, data_file.partition)


@dataclass
class DeleteScope:
    """Spec scope rules for delete files (format/spec.md "Scan Planning"), indexed for per-file lookup.

    * a DV applies to the data file named by ``referenced_data_file`` with data seq <= DV seq, and then
      supersedes position delete files for that data file;
    * a position delete file applies when data seq <= delete seq and the partition matches, and, when it names
      a data file (``referenced_data_file`` or equal ``file_path`` bounds), only to that file;
    * an equality delete file applies when data seq < delete seq, in the same partition, or to every partition
      when it was written with an unpartitioned spec (global).
    Java's extra column-stats overlap test for equality deletes is not applied.
    """

    unpartitioned_specs: frozenset[int]
    dvs: dict[str, list[tuple[int, DataFile]]] = field(default_factory=lambda: defaultdict(list))
    pos_by_path: dict[str, list[tuple[int, DataFile]]] = field(default_factory=lambda: defaultdict(list))
    pos_by_partition: dict[Any, list[tuple[int, DataFile]]] = field(default_factory=lambda: defaultdict(list))
    eq_by_partition: dict[Any, list[tuple[int, DataFile]]] = field(default_factory=lambda: defaultdict(list))
    eq_global: list[tuple[int, DataFile]] = field(default_factory=list)

    def add(self, entry: ManifestEntry) -> None:
        f, seq = entry.data_file, _seq(entry)
        if f.content == DataFileContent.EQUALITY_DELETES:
            if (f.spec_id or 0) in self.unpartitioned_specs:
                self.eq_global.append((seq, f))
            else:
                self.eq_by_partition[_partition_key(f)].append((seq, f))
            return
        ref = referenced_data_file(f)
        if is_dv(f) and ref:
            self.dvs[ref].append((seq, f))
        elif ref:
            self.pos_by_path[ref].append((seq, f))
        else:
            self.pos_by_partition[_partition_key(f)].append((seq, f))

    def for_data_file(self, data_seq: int, data_file: DataFile) -> list[DataFile]:
        key = _partition_key(data_file)
        found = [f for s, f in self.eq_global if s > data_seq]
        found += [f for s, f in self.eq_by_partition.get(key, ()) if s > data_seq]
        dvs = [f for s, f in self.dvs.get(data_file.file_path, ()) if s >= data_seq and _partition_key(f) == key]
        if dvs:
            return found + dvs
        found += [f for s, f in self.pos_by_partition.get(key, ()) if s >= data_seq]
        found += [f for s, f in self.pos_by_path.get(data_file.file_path, ()) if s >= data_seq and _partition_key(f) == key]
        return found


@dataclass
class _Counts:
    total_data_manifests: int = 0
    total_delete_manifests: int = 0
    scanned_data_manifests: int = 0
    scanned_delete_manifests: int = 0
    skipped_data_files: int = 0
    skipped_delete_files: int = 0
    data_entries: list[ManifestEntry] = field(default_factory=list)
    delete_entries: list[ManifestEntry] = field(default_factory=list)


class _CountingPlanner(ManifestGroupPlanner):
    """``ManifestGroupPlanner`` whose manifest/entry filtering step also counts what it prunes.

    Everything is read eagerly so the counts are complete even when ``plan_files`` raises afterwards
    (equality deletes).
    """

    counts: _Counts | None = None

    def plan_manifest_entries(self, manifests: Iterable[ManifestFile]) -> Iterator[list[ManifestEntry]]:
        from pyiceberg.table import _min_sequence_number
        from pyiceberg.typedef import KeyDefaultDict
        from pyiceberg.utils.concurrent import ExecutorFactory

        manifests = list(manifests)
        counts = _Counts(
            total_data_manifests=sum(m.content == ManifestContent.DATA for m in manifests),
            total_delete_manifests=sum(m.content == ManifestContent.DELETES for m in manifests),
        )
        manifest_evaluators = KeyDefaultDict(self._build_manifest_evaluator)
        matching = [m for m in manifests if manifest_evaluators[m.partition_spec_id](m)]
        min_sequence_number = _min_sequence_number(matching)
        to_open = [
            m
            for m in matching
            if self._check_sequence_number(min_sequence_number, m) and (m.has_added_files() or m.has_existing_files())
        ]
        counts.scanned_data_manifests = sum(m.content == ManifestContent.DATA for m in to_open)
        counts.scanned_delete_manifests = len(to_open) - counts.scanned_data_manifests

        partition_evaluators = KeyDefaultDict(self._build_partition_evaluator)
        metrics_evaluator = self._build_metrics_evaluator()

        def open_manifest(args: tuple[ManifestFile, Any]) -> tuple[ManifestFile, list[ManifestEntry], int]:
            manifest, partition_filter = args
            entries = (
                manifest.fetch_manifest_entry(self.io, discard_deleted=True)
                if manifest.content == ManifestContent.DATA
                else read_live_entries(self.io, manifest)
            )
            kept = [e for e in entries if partition_filter(e.data_file) and metrics_evaluator(e.data_file)]
            return manifest, kept, len(entries) - len(kept)

        # evaluators are built here, in the calling thread, as PyIceberg does; the workers only apply them
        work = [(m, partition_evaluators[m.partition_spec_id]) for m in to_open]
        results = list(ExecutorFactory.get_or_create().map(open_manifest, work))
        for manifest, kept, skipped in results:
            if manifest.content == ManifestContent.DATA:
                counts.skipped_data_files += skipped
            else:
                counts.skipped_delete_files += skipped
            for entry in kept:
                is_data = entry.data_file.content == DataFileContent.DATA
                (counts.data_entries if is_data else counts.delete_entries).append(entry)
        self.counts = counts
        return iter([kept for _, kept, _ in results])


def _metrics(counts: _Counts, scope: DeleteScope, planning_ns: int) -> ScanMetricsResult:
    delete_files = [e.data_file for e in counts.delete_entries]
    result_deletes = 0
    result_delete_bytes = 0
    for entry in counts.data_entries:
        for delete_file in scope.for_data_file(_seq(entry), entry.data_file):
            result_deletes += 1
            result_delete_bytes += content_size(delete_file)
    positional = [f for f in delete_files if f.content == DataFileContent.POSITION_DELETES]
    return ScanMetricsResult.from_values(
        {
            "total-planning-duration": planning_ns,
            "result-data-files": len(counts.data_entries),
            "result-delete-files": result_deletes,
            "total-data-manifests": counts.total_data_manifests,
            "total-delete-manifests": counts.total_delete_manifests,
            "scanned-data-manifests": counts.scanned_data_manifests,
            "skipped-data-manifests": counts.total_data_manifests - counts.scanned_data_manifests,
            "total-file-size-in-bytes": sum(e.data_file.file_size_in_bytes for e in counts.data_entries),
            "total-delete-file-size-in-bytes": result_delete_bytes,
            "skipped-data-files": counts.skipped_data_files,
            "skipped-delete-files": counts.skipped_delete_files,
            "scanned-delete-manifests": counts.scanned_delete_manifests,
            "skipped-delete-manifests": counts.total_delete_manifests - counts.scanned_delete_manifests,
            "indexed-delete-files": len(delete_files),
            "equality-delete-files": sum(f.content == DataFileContent.EQUALITY_DELETES for f in delete_files),
            "positional-delete-files": sum(not is_dv(f) for f in positional),
            "dvs": sum(is_dv(f) for f in positional),
        }
    )


def projected_field_ids(schema: Schema) -> tuple[int, ...]:
    """Java ``TypeUtil.getProjectedIds``: ids of primitive fields, list elements and map keys/values included."""
    from pyiceberg.schema import index_by_id

    return tuple(sorted(fid for fid, f in index_by_id(schema).items() if f.field_type.is_primitive))


@dataclass(frozen=True)
class PlannedScan:
    """Result of ``plan_with_report``: PyIceberg's tasks (or its error) plus what the report needs."""

    tasks: list[FileScanTask] | None
    error: BaseException | None
    report: ScanReport | None
    snapshot_id: int | None
    result_records: int = 0


def plan_with_report(scan: DataScan, table_name: str, metadata: Mapping[str, str] | None = None) -> PlannedScan:
    """Plan ``scan`` locally once, returning PyIceberg's tasks and the ScanReport of that planning.

    An empty table (no snapshot) gives no report, as in Java. When PyIceberg's planning raises after the
    manifests were read (equality deletes), the report still describes what planning would scan and the
    error is returned for the caller to re-raise.
    """
    start = time.perf_counter_ns()
    snapshot = scan.snapshot()
    if snapshot is None:
        return PlannedScan(tasks=[], error=None, report=None, snapshot_id=None)
    planner = _CountingPlanner(
        table_metadata=scan.table_metadata,
        io=scan.io,
        row_filter=scan.row_filter,
        case_sensitive=scan.case_sensitive,
        options=scan.options,
    )
    tasks: list[FileScanTask] | None = None
    error: BaseException | None = None
    try:
        tasks = list(planner.plan_files(snapshot.manifests(scan.io)))
    except Exception as exc:  # noqa: BLE001 - re-raised by the caller after reporting
        if planner.counts is None:
            raise
        error = exc
    counts = planner.counts
    assert counts is not None
    specs = scan.table_metadata.specs()
    scope = DeleteScope(frozenset(sid for sid, spec in specs.items() if spec.is_unpartitioned()))
    for entry in counts.delete_entries:
        scope.add(entry)
    projection = scan.projection()
    field_ids = projected_field_ids(projection)
    metrics = _metrics(counts, scope, time.perf_counter_ns() - start)
    report = ScanReport(
        table_name=table_name,
        snapshot_id=snapshot.snapshot_id,
        filter=sanitize(scan.row_filter, scan.table_metadata.schema(), scan.case_sensitive),
        schema_id=projection.schema_id,
        projected_field_ids=field_ids,
        projected_field_names=tuple(projection.find_column_name(i) or "" for i in field_ids),
        scan_metrics=metrics,
        metadata={**{str(k): str(v) for k, v in scan.options.items()}, **(metadata or {})},
    )
    return PlannedScan(
        tasks=tasks,
        error=error,
        report=report,
        snapshot_id=snapshot.snapshot_id,
        result_records=sum(e.data_file.record_count for e in counts.data_entries),
    )


def scan_report(scan: DataScan, table_name: str, metadata: Mapping[str, str] | None = None) -> ScanReport | None:
    """ScanReport of ``scan`` without executing it (what planning would scan); ``None`` for an empty table."""
    return plan_with_report(scan, table_name, metadata).report
