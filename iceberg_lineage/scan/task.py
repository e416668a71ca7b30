"""The per-table task, on any executor (threads, processes, Dask): picklable :class:`TableTask` in, picklable
:class:`TableResult` out. It loads one table, walks its snapshots not yet emitted and returns their events as JSON.
The statistics and event builders are imported on the first table that has something new: a rescan that finds every
table unchanged never pays for them."""
from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Collection, Sequence

from iceberg_lineage.config import Settings
from iceberg_lineage.errors import CatalogError, IcebergLineageError
from iceberg_lineage.lineage.tags import RUN_ID_PROPERTY, ownership, tagged
from iceberg_lineage.read.catalogs import CatalogSpec, catalog_account, one_line
from iceberg_lineage.scan.modes import Mode
from iceberg_lineage.scan.summary import Gap, TableFailure
from iceberg_lineage.state.store import Watermark

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from pyiceberg.catalog import Catalog

    from iceberg_lineage.read.metadata import MetadataFile
    from iceberg_lineage.read.source import LoadedTable

@dataclass(frozen=True)
class TableTask:
    catalog: CatalogSpec
    identifier: tuple[str, ...]
    settings: Settings
    mode: Mode
    depth: str
    #: identity recorded for this identifier; the watermark only applies when the loaded table has it
    expected_identity: str | None
    watermark: Watermark
    since_ms: int | None
    capture_time: dt.datetime
    #: the metadata location the catalog's listing gave (:mod:`iceberg_lineage.read.listing`): read directly
    metadata_location: str | None = None
    #: a REST catalog's ETag of the table at the location where it was fully emitted: the load asks whether the
    #: table changed since (:mod:`iceberg_lineage.read.rest_load`), and a 304 ends the task there
    etag: str | None = None


@dataclass(frozen=True)
class PendingEvent:
    """One snapshot to account for, in commit order, with the JSON of its events.

    ``owned``: tagged by the hook. Its events (``texts``) are then the rebuild of the owner's run, sent only if the
    ledger does not know the snapshot as delivered; none when the task already knew it was (or for a tag written
    before the ledger existed).
    """

    snapshot_id: int
    sequence_number: int | None
    timestamp_ms: int
    run_id: str | None
    texts: tuple[str, ...]
    owned: bool = False
    #: Schema-change alerts of the snapshot (its checks run is the last of ``texts``): announced once it is sent.
    alerts: tuple = ()

    @property
    def by_hook(self) -> bool:
        """Counted as already emitted by the hook: nothing to send."""
        return self.owned and not self.texts


@dataclass(frozen=True)
class TableResult:
    catalog: str
    identifier: tuple[str, ...]
    identity: str | None = None
    location: str | None = None
    metadata_location: str | None = None
    current_snapshot_id: int | None = None
    items: tuple[PendingEvent, ...] = ()
    gap: Gap | None = None
    failure: TableFailure | None = None
    #: the ETag the REST catalog sent with the table (recorded with ``metadata_location``)
    etag: str | None = None
    #: the REST catalog answered 304 to the task's ETag: the table is as it was fully emitted, nothing was read
    not_modified: bool = False


def scan_tables(tasks: Sequence[TableTask]) -> list[TableResult]:
    """A batch of tables, in one executor task (:func:`scan_table` each)."""
    return [scan_table(task) for task in tasks]


def scan_table(task: TableTask) -> TableResult:
    """Load one table and build the events of its snapshots not in the watermark. Never raises: a failure is
    returned with the table, the file and the reason, so one bad table cannot stop a scan."""
    display = ".".join(task.identifier)
    try:
        return _scan_table(task)
    except IcebergLineageError as exc:
        failure = TableFailure(task.catalog.name, display, exc.reason, exc.file, exc.kind)
    except Exception as exc:  # noqa: BLE001 - isolation: whatever one table does, the scan goes on
        failure = TableFailure(task.catalog.name, display, one_line(exc))
    return TableResult(task.catalog.name, task.identifier, failure=failure)


def _scan_table(task: TableTask) -> TableResult:
    table, etag = _load(task)
    if table is None:
        return TableResult(task.catalog.name, task.identifier, task.expected_identity, not_modified=True)
    md = table.metadata
    watermark = task.watermark if md.identity == task.expected_identity else Watermark()
    result = TableResult(
        task.catalog.name, task.identifier, md.identity, md.location, md.metadata_location, md.current_snapshot_id,
        etag=etag,
    )
    if task.mode == "current":
        return dataclasses.replace(result, items=_current_items(task, table, watermark))
    return dataclasses.replace(result, items=_history_items(task, table, watermark), gap=find_gap(md, watermark))


def _load(task: TableTask) -> tuple[LoadedTable | None, str | None]:
    """The table, read once, and the ETag a REST catalog sent with it; no table when the catalog answered that it
    did not change since ``task.etag``. At the metadata location its listing gave, the file is read and parsed by us
    alone: PyIceberg's ``load_table`` would read and parse it too (a catalog query besides), and that was most of a
    summary-depth table. Anything unexpected there takes PyIceberg's way, with its errors as ever."""
    from iceberg_lineage.read.rest_load import asks_etag, load_with_etag
    from iceberg_lineage.read.source import load_table_object

    catalog = task.catalog.load()
    if task.metadata_location is not None:
        try:
            return _read_listed(catalog, task.identifier, task.metadata_location), None
        except Exception:  # noqa: BLE001, S110 - PyIceberg's load below says what is wrong, as it always did
            pass
    etag = None
    try:
        if asks_etag(catalog):
            answer = load_with_etag(catalog, task.identifier, task.etag)
            if answer.table is None:
                return None, None  # not modified: the recorded ETag stands
            pyiceberg_table, etag = answer.table, answer.etag
        else:
            pyiceberg_table = catalog.load_table(task.identifier)
    except Exception as exc:  # noqa: BLE001 - unreadable metadata, access denied, unknown types...
        raise CatalogError(f"cannot load table: {one_line(exc)}") from None
    # read_file=True: PyIceberg invents a random uuid for v1 tables without one; the raw file keeps identity stable.
    return load_table_object(pyiceberg_table), etag


def _read_listed(catalog: Catalog, identifier: tuple[str, ...], metadata_location: str) -> LoadedTable:
    """What :func:`load_table_object` makes of ``catalog.load_table``, from the metadata file alone: the FileIO is
    the one PyIceberg's SQL and Glue catalogs give a table (catalog properties, then the table's)."""
    from iceberg_lineage.read.metadata_json import parse_metadata
    from iceberg_lineage.read.source import (
        LoadedTable, RelocatingIO, catalog_file_io, catalog_type_of, read_metadata_file,
    )

    raw = read_metadata_file(catalog_file_io(catalog, metadata_location), metadata_location)
    metadata = parse_metadata(raw, metadata_location, ".".join(identifier))
    return LoadedTable(
        metadata=metadata,
        io=RelocatingIO(catalog_file_io(catalog, metadata_location, metadata.properties)),
        name=identifier[-1],
        catalog_name=catalog.name,
        catalog_type=catalog_type_of(catalog),
        catalog_properties=dict(catalog.properties),
        identifier=identifier,
        aws_account=catalog_account(catalog),
    )


def _manifest_executor(table: LoadedTable) -> Executor | None:
    """The pool for the table's manifest reads where they wait on a network (an object store); none for local files:
    decoding holds the GIL, so handing them to threads only adds their hand-offs (large local manifests are split
    across processes instead, :func:`~iceberg_lineage.stats.cache.fetch_partials`)."""
    from iceberg_lineage.read.files import local_path
    from iceberg_lineage.stats.parallel import manifest_pool

    return None if local_path(table.metadata.metadata_location or table.metadata.location) is not None \
        else manifest_pool()


def _current_items(task: TableTask, table: LoadedTable, watermark: Watermark) -> tuple[PendingEvent, ...]:
    """``--mode current``: one DatasetEvent of the current snapshot (a RunEvent-only consumer profile: the current
    snapshot's run, with its START), unless it is the one sent last time."""
    from openlineage.client.event_v2 import RunEvent

    from iceberg_lineage.lineage.events import with_start
    from iceberg_lineage.lineage.profiles import current_state_event
    from iceberg_lineage.lineage.serde import to_json
    from iceberg_lineage.stats import snapshot_stats

    md = table.metadata
    sid = md.current_snapshot_id
    if sid is None or sid == watermark.current_snapshot_id:
        return ()
    stats = snapshot_stats(table, sid, depth=task.depth, columns=task.settings.column_stats,
                          executor=_manifest_executor(table))
    event = current_state_event(table, stats, task.settings, capture_time=task.capture_time)
    built = with_start(event, task.settings) if isinstance(event, RunEvent) else [event]
    snap = md.snapshot_by_id(sid)
    return (PendingEvent(sid, snap.sequence_number, snap.timestamp_ms, None,  # type: ignore[union-attr]
                         tuple(to_json(e) for e in built)),)


def _history_items(task: TableTask, table: LoadedTable, watermark: Watermark) -> tuple[PendingEvent, ...]:
    """``--mode history``: a run event per new snapshot, in commit order. A hook-tagged snapshot the ledger does
    not know as delivered gets the rebuild of its owner's events (the driver checks the ledger again before
    sending); one it knows, or with a tag older than the ledger, gets none."""
    new = new_snapshots(table.metadata, watermark, task.since_ms)
    owners = {s.snapshot_id: owner for s in new
              if s.snapshot_id not in watermark.hook_delivered and (owner := ownership(s.summary)) is not None}
    to_walk = [s.snapshot_id for s in new if not tagged(s.summary) or s.snapshot_id in owners]
    events: dict[int, tuple[str, tuple[str, ...]]] = {}
    alerts: dict[int, tuple] = {}
    if to_walk:
        from iceberg_lineage.lineage.checks import snapshot_alert_run
        from iceberg_lineage.lineage.events import snapshot_runs, with_start
        from iceberg_lineage.lineage.objects import part
        from iceberg_lineage.lineage.serde import serialised_once, to_json
        from iceberg_lineage.stats import ManifestCache

        with serialised_once():  # the events measured against the byte budget are not serialised again
            # plain: the events are built as the JSON they are sent as, never as objects (an owner's rebuild is)
            runs = snapshot_runs(table, to_walk, task.settings, depth=task.depth, owners=owners,
                                 capture_time=task.capture_time, executor=_manifest_executor(table),
                                 cache=ManifestCache(), plain=True)
            for snapshot_id, built in runs.items():
                events[snapshot_id] = (part(part(built[-1], "run"), "runId"),
                                       tuple(to_json(e) for e in built))
        for snapshot_id in runs:  # a schema change: the snapshot's checks run follows its own events
            found, check = snapshot_alert_run(table, snapshot_id, task.settings)
            if check is not None:
                run_id, texts = events[snapshot_id]
                checks = tuple(to_json(e) for e in with_start(check, task.settings))
                events[snapshot_id], alerts[snapshot_id] = (run_id, (*texts, *checks)), found
    items = []
    for s in new:
        run_id, texts = events.get(s.snapshot_id, (s.summary.get(RUN_ID_PROPERTY), ()))
        items.append(PendingEvent(s.snapshot_id, s.sequence_number, s.timestamp_ms, run_id, texts,
                                  owned=tagged(s.summary), alerts=alerts.get(s.snapshot_id, ())))
    return tuple(items)


def new_snapshots(md: MetadataFile, watermark: Watermark, since_ms: int | None = None) -> list:
    """Snapshots not yet emitted (branches, tags and staged ones included), in commit order."""
    return [
        s for s in md.snapshots_in_commit_order()
        if s.snapshot_id not in watermark.emitted and (since_ms is None or s.timestamp_ms >= since_ms)
    ]


def find_gap(md: MetadataFile, watermark: Watermark) -> Gap | None:
    """Snapshots that expired before they were emitted, where the metadata lets us see them.

    Two signs: sequence numbers (v2+) between the newest emitted one and ``last-sequence-number`` that no present
    snapshot carries, and snapshot-log entries newer than the newest emitted snapshot whose ids are gone from
    ``snapshots``. The count is the larger of the two (they see the same commits from two sides).
    """
    present = {s.snapshot_id for s in md.snapshots}
    after = watermark.last_timestamp_ms
    log_missing = [
        ts for sid, ts in md.snapshot_log
        if sid not in present and sid not in watermark.emitted and (after is None or ts > after)
    ]
    bounds: list[int] = list(log_missing)
    seq_missing = 0
    if md.format_version >= 2 and md.last_sequence_number:
        by_seq = {s.sequence_number: s.timestamp_ms for s in md.snapshots if s.sequence_number is not None}
        low = watermark.last_sequence_number or 0
        missing = _missing_range(low, md.last_sequence_number, by_seq)
        if missing:
            seq_missing, first, last = missing
            below = [ts for n, ts in by_seq.items() if n < first]
            above = [ts for n, ts in by_seq.items() if n > last]
            bounds.append(max(below) if below else (after if after is not None else min(by_seq.values(), default=0)))
            bounds.append(min(above) if above else (md.last_updated_ms or max(by_seq.values(), default=0)))
    count = max(seq_missing, len(log_missing))
    if not count:
        return None
    return Gap(count, min(bounds) if bounds else None, max(bounds) if bounds else None)


def _missing_range(low: int, high: int, present: Collection[int]) -> tuple[int, int, int] | None:
    """How many of the numbers ``low+1 .. high`` are not ``present``, and the first and last of them, or ``None``.

    Computed from the present numbers alone: ``last-sequence-number`` is the writer's word, and 2^62 must not
    cost 2^62 of anything."""
    inside = sorted(n for n in set(present) if low < n <= high)
    count = high - low - len(inside)
    if count <= 0:
        return None
    first = low + 1
    for n in inside:  # ascending: the first number not taken
        if n != first:
            break
        first += 1
    last = high
    for n in reversed(inside):
        if n != last:
            break
        last -= 1
    return count, first, last
