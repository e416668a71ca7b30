"""Observer payloads beyond Java's reports, for richer consumers such as the OpenLineage layer.

A reporter may implement any of ``after_commit(CommitOutcome)``, ``on_table_event(TableEvent)`` and
``after_scan(ScanOutcome)``; they are called with exceptions logged and swallowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from scan_reporters.reports import CommitReport, ScanReport

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.expressions import BooleanExpression
    from pyiceberg.table import Table
    from pyiceberg.table.metadata import TableMetadata

TableEventKind = Literal["create", "register", "drop", "rename"]


@dataclass(frozen=True)
class CommitOutcome:
    """One logical commit, after PyIceberg's retry loop ended (success, or final failure in ``error``).

    ``base_metadata`` is the client-side metadata the first attempt started from (``None`` for
    create-transactions); ``metadata``/``metadata_location`` are the committed ones (``None`` on failure).
    ``updates``/``requirements`` are those of the last attempt, after ``before_commit`` hooks.
    """

    catalog: Catalog
    identifier: tuple[str, ...]
    base_metadata: TableMetadata | None
    metadata: TableMetadata | None
    metadata_location: str | None
    updates: tuple[Any, ...]
    requirements: tuple[Any, ...]
    added_snapshot_ids: tuple[int, ...]
    commit_reports: tuple[CommitReport, ...]
    attempts: int
    duration_ns: int
    error: BaseException | None = None


@dataclass(frozen=True)
class TableEvent:
    """A catalog lifecycle operation that bypasses ``commit_table`` (purge is reported as ``drop``).

    For ``drop`` the metadata is the table's metadata loaded just before the drop (``None`` if that failed);
    for ``rename`` it is the metadata after the rename and ``new_identifier`` is set.
    """

    kind: TableEventKind
    catalog: Catalog
    identifier: tuple[str, ...]
    new_identifier: tuple[str, ...] | None = None
    metadata: TableMetadata | None = None
    metadata_location: str | None = None
    purge: bool = False


@dataclass(frozen=True)
class ScanOutcome:
    """A planned scan: the snapshot actually read (time travel included), its report and its result size.

    ``result_records`` is the sum of ``record_count`` of the result data files (before deletes and residual
    filtering), which is what OpenLineage ``inputStatistics`` can honestly state from metadata.
    ``table`` is the Table the scan was created from; for a scan built without ``Table.scan`` it is rebuilt
    from the scan's metadata, io and catalog, with an empty ``metadata_location``.
    """

    table: Table
    snapshot_id: int
    report: ScanReport
    row_filter: BooleanExpression
    result_data_files: int
    result_file_size_in_bytes: int
    result_records: int
