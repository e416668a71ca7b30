"""The catalog scanner: walk catalogs, emit every snapshot not yet emitted, advance the watermark after delivery.

Hooks see only what PyIceberg writes; most tables are written by Spark, Flink, Trino or managed services, so a
scheduled scan is how their commits become lineage. The work splits in three:

* discovery (driver): namespaces and tables are listed lazily, so 10,000 tables never sit in memory at once;
* per-table work (any executor): load, walk the new snapshots, build events, return them as JSON strings. It
  gets a picklable :class:`TableTask` and returns a picklable :class:`TableResult`;
* delivery and state (driver only): events are sent in commit order, and a snapshot is recorded as emitted only
  once its event was delivered or spooled; a failure stops that table's watermark where it is.
"""
from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import datetime as dt
import fnmatch
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Literal, Mapping, Sequence

from iceberg_lineage.config import Settings
from iceberg_lineage.lineage.tags import RUN_ID_PROPERTY
from iceberg_lineage.errors import CatalogError, ConfigError, IcebergLineageError
from iceberg_lineage.read.metadata import TableMetadata
from iceberg_lineage.read.source import LoadedTable
from iceberg_lineage.state.store import EmittedSnapshot, StateStore, TableRecord, TableState, Watermark

Mode = Literal["history", "current"]
MODES: tuple[str, ...] = ("history", "current")
#: Name of the embedded default catalog (SQLite under ./warehouse) used when none is configured.
DEFAULT_CATALOG = "default"

#: Sink statuses after which a snapshot counts as emitted ("printed": a dry run, whose state is read-only).
ADVANCING = frozenset({"delivered", "spooled", "printed"})


# ====================================================================================================================
# Catalogs
# ====================================================================================================================

@dataclass(frozen=True)
class CatalogSpec:
    """A catalog as name + properties: what a worker process or a Dask worker needs to load it itself."""

    name: str
    properties: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, name: str, properties: Mapping[str, Any]) -> "CatalogSpec":
        return cls(name, tuple(sorted((str(k), str(v)) for k, v in properties.items())))

    def load(self) -> Any:
        """The catalog, loaded once per process (threads share it)."""
        with _catalogs_lock:
            catalog = _catalogs.get(self)
            if catalog is None:
                from pyiceberg.catalog import load_catalog

                from iceberg_lineage.redact import protect

                protect(dict(self.properties))  # before PyIceberg (or our errors) can show any of them
                try:
                    catalog = load_catalog(self.name, **_coerced(self.properties))
                except Exception as exc:  # noqa: BLE001 - any misconfiguration is a catalog error
                    raise CatalogError(f"cannot load catalog {self.name!r}: {one_line(exc)}") from None
                _catalogs[self] = catalog
            return catalog


def _coerced(properties: Any) -> dict[str, Any]:
    """Catalog properties as ``load_catalog`` needs them. PyIceberg's configuration turns every value into a
    string, and botocore then fails on ``glue.max-retries`` (a TypeError): give it back its integer."""
    props: dict[str, Any] = dict(properties)
    if "glue.max-retries" in props:
        props["glue.max-retries"] = int(props["glue.max-retries"])
    return props


_catalogs: dict[CatalogSpec, Any] = {}
_catalogs_lock = threading.Lock()


def configured_catalogs(names: Sequence[str] = ()) -> tuple[CatalogSpec, ...]:
    """Catalogs from PyIceberg's configuration (``.pyiceberg.yaml``, ``PYICEBERG_CATALOG__*``), all or ``names``.

    With no catalog configured at all, the embedded default: SQLite in ``./warehouse/catalog.db``.
    """
    from pyiceberg.utils.config import Config

    config = Config()
    known = config.get_known_catalogs()
    if not known:
        unknown = [n for n in names if n != DEFAULT_CATALOG]
        if unknown:
            raise ConfigError(f"no PyIceberg catalog named {', '.join(unknown)} (none is configured)")
        return (embedded_catalog(),)
    wanted = list(dict.fromkeys(n.lower() for n in names)) or known
    missing = [n for n in wanted if n not in known]
    if missing:
        raise ConfigError(f"no PyIceberg catalog named {', '.join(missing)}; configured: {', '.join(sorted(known))}")
    return tuple(CatalogSpec.of(n, _flat(config.get_catalog_config(n) or {})) for n in wanted)


def embedded_catalog() -> CatalogSpec:
    """The embedded default catalog (see :func:`iceberg_lineage.demo.tables.demo_catalog`) as a spec."""
    from iceberg_lineage.demo.tables import demo_catalog

    return CatalogSpec.of(DEFAULT_CATALOG, {"type": "sql", **demo_catalog().properties})


def _flat(conf: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in conf.items():
        if isinstance(v, Mapping):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = str(v)
    return out


# ====================================================================================================================
# Discovery
# ====================================================================================================================

@dataclass(frozen=True)
class TableFilter:
    """Which tables are in scope: namespaces (with everything below them), include and exclude globs.

    Globs match the dotted identifier (``sales.orders``) or the same prefixed with the catalog (``glue.sales.orders``).
    """

    namespaces: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def roots(self) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(ns.split(".")) for ns in self.namespaces) or ((),)

    def in_namespaces(self, namespace: tuple[str, ...]) -> bool:
        return any(namespace[: len(root)] == root for root in self.roots())

    def wants(self, catalog: str, identifier: tuple[str, ...]) -> bool:
        if not self.in_namespaces(tuple(identifier[:-1])):
            return False
        names = (".".join(identifier), ".".join((catalog, *identifier)))
        if self.include and not any(fnmatch.fnmatchcase(n, g) for g in self.include for n in names):
            return False
        return not any(fnmatch.fnmatchcase(n, g) for g in self.exclude for n in names)


@dataclass(frozen=True)
class NamespaceListed:
    """A namespace whose tables were listed (``error`` None) or could not be."""

    catalog: str
    namespace: tuple[str, ...]
    error: str | None = None


@dataclass(frozen=True)
class TableListed:
    catalog: CatalogSpec
    identifier: tuple[str, ...]


def discover(spec: CatalogSpec, filters: TableFilter) -> Iterator[NamespaceListed | TableListed]:
    """Every namespace (nested ones too) and every table of a catalog, lazily, depth first.

    A namespace that cannot be listed is reported and skipped; its tables are then out of drop detection.
    """
    try:
        catalog = spec.load()
    except CatalogError as exc:
        yield NamespaceListed(spec.name, (), exc.reason)
        return
    stack: list[tuple[str, ...]] = list(reversed(filters.roots()))
    seen: set[tuple[str, ...]] = set()
    while stack:
        namespace = stack.pop()
        if namespace in seen:
            continue
        seen.add(namespace)
        try:
            children = [tuple(c) for c in catalog.list_namespaces(namespace)]
            tables = [tuple(t) for t in catalog.list_tables(namespace)] if namespace else []
        except Exception as exc:  # noqa: BLE001 - one namespace must not stop the walk
            yield NamespaceListed(spec.name, namespace, one_line(exc))
            continue
        yield NamespaceListed(spec.name, namespace)
        for identifier in tables:
            if filters.wants(spec.name, identifier):
                yield TableListed(spec, identifier)
        # Some catalogs list every level below (or the namespace itself); keep strict children only.
        stack.extend(reversed([c for c in children if len(c) > len(namespace) and c[: len(namespace)] == namespace]))


# ====================================================================================================================
# Per-table work (runs on any executor: picklable in, picklable out)
# ====================================================================================================================

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


@dataclass(frozen=True)
class PendingEvent:
    """One snapshot to account for, in commit order: with its event JSON, or (``json`` None) tagged by the hook."""

    snapshot_id: int
    sequence_number: int | None
    timestamp_ms: int
    run_id: str | None
    json: str | None

    @property
    def by_hook(self) -> bool:
        return self.json is None


@dataclass(frozen=True)
class Gap:
    """Snapshots that expired before they were ever emitted: how many, and when (ms, inclusive bounds)."""

    count: int
    first_ms: int | None
    last_ms: int | None


@dataclass(frozen=True)
class TableFailure:
    catalog: str
    table: str
    reason: str
    file: str | None = None
    kind: str = "error"

    def __post_init__(self) -> None:
        from iceberg_lineage.redact import scrub

        object.__setattr__(self, "reason", scrub(self.reason))  # reasons quote URIs, which may hold credentials

    def one_line(self) -> str:
        where = f" (file {self.file})" if self.file else ""
        return f"{self.catalog}.{self.table}: {self.reason}{where}"


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


def one_line(exc: BaseException, limit: int = 300) -> str:
    """An exception as one bounded line (pydantic and botocore messages span many)."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _scan_table(task: TableTask) -> TableResult:
    from iceberg_lineage.stats.parallel import manifest_pool
    from iceberg_lineage.read.source import load_table_object
    from iceberg_lineage.stats import ManifestCache, snapshot_stats, table_history

    catalog = task.catalog.load()
    try:
        pyiceberg_table = catalog.load_table(task.identifier)
    except Exception as exc:  # noqa: BLE001 - unreadable metadata, access denied, unknown types...
        raise CatalogError(f"cannot load table: {one_line(exc)}") from None
    # read_file=True: PyIceberg invents a random uuid for v1 tables without one; the raw file keeps identity stable.
    table = load_table_object(pyiceberg_table)
    md = table.metadata
    watermark = task.watermark if md.identity == task.expected_identity else Watermark()
    result = TableResult(
        task.catalog.name, task.identifier, md.identity, md.location, md.metadata_location, md.current_snapshot_id
    )
    columns = task.settings.columns
    if task.mode == "current":
        sid = md.current_snapshot_id
        if sid is None or sid == watermark.current_snapshot_id:
            return result
        from iceberg_lineage.lineage.events import dataset_event, to_json

        stats = snapshot_stats(table, sid, depth=task.depth, columns=columns, executor=manifest_pool())
        event = to_json(dataset_event(table, stats, task.settings, capture_time=task.capture_time))
        snap = md.snapshot_by_id(sid)
        return dataclasses.replace(
            result, items=(PendingEvent(sid, snap.sequence_number, snap.timestamp_ms, None, event),)  # type: ignore[union-attr]
        )

    new = new_snapshots(md, watermark, task.since_ms)
    to_walk = [s.snapshot_id for s in new if RUN_ID_PROPERTY not in s.summary]
    events: dict[int, tuple[str, str]] = {}
    if to_walk:
        from iceberg_lineage.lineage.events import snapshot_run_event, to_json

        history = table_history(
            table, depth=task.depth, columns=columns, snapshot_ids=to_walk, executor=manifest_pool(),
            cache=ManifestCache(),
        )
        for stats in history:
            event = snapshot_run_event(table, stats, task.settings, capture_time=task.capture_time)
            events[stats.snapshot_id] = (event.run.runId, to_json(event))
    items = tuple(
        PendingEvent(s.snapshot_id, s.sequence_number, s.timestamp_ms, *events[s.snapshot_id])
        if s.snapshot_id in events
        else PendingEvent(s.snapshot_id, s.sequence_number, s.timestamp_ms, s.summary[RUN_ID_PROPERTY], None)
        for s in new
    )
    return dataclasses.replace(result, items=items, gap=find_gap(md, watermark))


def new_snapshots(md: TableMetadata, watermark: Watermark, since_ms: int | None = None) -> list:
    """Snapshots not yet emitted (branches, tags and staged ones included), in commit order."""
    return [
        s for s in md.snapshots_in_commit_order()
        if s.snapshot_id not in watermark.emitted and (since_ms is None or s.timestamp_ms >= since_ms)
    ]


def find_gap(md: TableMetadata, watermark: Watermark) -> Gap | None:
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
        missing = [n for n in range(low + 1, md.last_sequence_number + 1) if n not in by_seq]
        seq_missing = len(missing)
        if missing:
            below = [ts for n, ts in by_seq.items() if n < missing[0]]
            above = [ts for n, ts in by_seq.items() if n > missing[-1]]
            bounds.append(max(below) if below else (after if after is not None else min(by_seq.values(), default=0)))
            bounds.append(min(above) if above else (md.last_updated_ms or max(by_seq.values(), default=0)))
    count = max(seq_missing, len(log_missing))
    if not count:
        return None
    return Gap(count, min(bounds) if bounds else None, max(bounds) if bounds else None)


# ====================================================================================================================
# Driver: delivery, state, drops and renames
# ====================================================================================================================

Status = Literal["unchanged", "updated", "failed"]


@dataclass(frozen=True)
class TableOutcome:
    catalog: str
    identifier: tuple[str, ...]
    status: Status
    emitted: int = 0
    by_hooks: int = 0
    gap: Gap | None = None
    failure: TableFailure | None = None

    @property
    def name(self) -> str:
        return ".".join(self.identifier)


@dataclass(frozen=True)
class ScanSummary:
    mode: str
    dry_run: bool
    tables_scanned: int
    unchanged: int
    updated: int
    failed: int
    snapshots_emitted: int
    snapshots_by_hooks: int
    drops: int
    renames: int
    gaps: tuple[tuple[str, Gap], ...]
    failures: tuple[TableFailure, ...]
    elapsed_s: float

    @property
    def exit_code(self) -> int:
        return 1 if self.failures else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "dry_run": self.dry_run,
            "tables": {"scanned": self.tables_scanned, "unchanged": self.unchanged, "updated": self.updated,
                       "failed": self.failed},
            "snapshots": {"emitted": self.snapshots_emitted, "already_emitted_by_hooks": self.snapshots_by_hooks},
            "drops": self.drops,
            "renames": self.renames,
            "gaps": [{"table": t, **dataclasses.asdict(g)} for t, g in self.gaps],
            "failures": [dataclasses.asdict(f) for f in self.failures],
            "elapsed_s": round(self.elapsed_s, 3),
            "exit_code": self.exit_code,
        }


@dataclass(frozen=True)
class ScanOptions:
    catalogs: tuple[CatalogSpec, ...]
    filters: TableFilter = TableFilter()
    mode: Mode = "history"
    depth: str = "entries"
    since_ms: int | None = None
    executor: str = "threads"
    workers: int | None = None
    dask_scheduler: str | None = None
    dry_run: bool = False
    capture_time: dt.datetime | None = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        from iceberg_lineage.stats.model import DEPTHS

        if self.depth not in DEPTHS:
            raise ConfigError(f"depth must be one of {', '.join(DEPTHS)}, not {self.depth!r}")


#: Sends one event (JSON) and says what happened: "delivered", "spooled", "failed", "disabled" or "printed".
Sink = Callable[[str], str]


def scan(
    options: ScanOptions,
    settings: Settings,
    state: StateStore,
    sink: Sink,
    *,
    on_outcome: Callable[[TableOutcome], None] = lambda o: None,
) -> ScanSummary:
    """Scan the catalogs, send new events through ``sink`` and advance ``state`` (unless it is read-only)."""
    from iceberg_lineage.stats.parallel import open_executor

    run = _Run(options, settings, state, sink, on_outcome)
    started = time.monotonic()
    with open_executor(options.executor, options.workers, options.dask_scheduler) as executor:
        limit = 4 * (options.workers or 8)
        pending: dict[cf.Future, TableTask] = {}
        for spec in options.catalogs:
            for item in discover(spec, options.filters):
                if isinstance(item, NamespaceListed):
                    run.namespace_listed(item)
                    continue
                task = run.task_for(item)
                if task is None:
                    continue
                while len(pending) >= limit:
                    run.collect(pending, cf.FIRST_COMPLETED)
                pending[executor.submit(scan_table, task)] = task
        while pending:
            run.collect(pending, cf.ALL_COMPLETED)
    run.emit_catalog_changes()
    return run.summary(time.monotonic() - started)


class _Run:
    """The driver's mutable bookkeeping of one scan; everything it touches happens on the driver thread."""

    def __init__(self, options: ScanOptions, settings: Settings, state: StateStore, sink: Sink,
                 on_outcome: Callable[[TableOutcome], None]) -> None:
        self.options = options
        self.settings = settings
        self.state = state
        self.sink = sink
        self.on_outcome = on_outcome
        self.capture_time = options.capture_time or dt.datetime.now(dt.timezone.utc)
        self.listed_ok: set[tuple[str, tuple[str, ...]]] = set()
        self.listed_tables: set[tuple[str, tuple[str, ...]]] = set()
        self.seen: set[str] = set()
        self.renamed: dict[str, tuple[tuple[str, ...], TableTask]] = {}
        self.outcomes: dict[Status, int] = {"unchanged": 0, "updated": 0, "failed": 0}
        self.emitted = 0
        self.by_hooks = 0
        self.drops = 0
        self.renames = 0
        self.gaps: list[tuple[str, Gap]] = []
        self.failures: list[TableFailure] = []

    # -- discovery -----------------------------------------------------------------------------------------------
    def namespace_listed(self, item: NamespaceListed) -> None:
        if item.error is None:
            self.listed_ok.add((item.catalog, item.namespace))
        else:
            ns = ".".join(item.namespace) or "(catalog)"
            self.failures.append(TableFailure(item.catalog, ns, f"cannot list: {item.error}", kind="catalog"))

    def task_for(self, item: TableListed) -> TableTask | None:
        key = (item.catalog.name, item.identifier)
        if key in self.listed_tables:
            return None
        self.listed_tables.add(key)
        known = self.state.find(item.catalog.name, item.identifier)
        return TableTask(
            catalog=item.catalog,
            identifier=item.identifier,
            settings=self.settings,
            mode=self.options.mode,
            depth=self.options.depth,
            expected_identity=known.identity if known else None,
            watermark=self.state.watermark(known.identity) if known else Watermark(),
            since_ms=self.options.since_ms,
            capture_time=self.capture_time,
        )

    # -- results -------------------------------------------------------------------------------------------------
    def collect(self, pending: dict[cf.Future, TableTask], when: str) -> None:
        done, _ = cf.wait(pending, return_when=when)
        for future in done:
            task = pending.pop(future)
            try:
                result = future.result()
            except Exception as exc:  # noqa: BLE001 - a lost worker fails its table, not the scan
                failure = TableFailure(task.catalog.name, ".".join(task.identifier), one_line(exc))
                result = TableResult(task.catalog.name, task.identifier, failure=failure)
            self.finish(self.apply(result, task))

    def finish(self, outcome: TableOutcome) -> None:
        self.outcomes[outcome.status] += 1
        self.emitted += outcome.emitted
        self.by_hooks += outcome.by_hooks
        if outcome.gap:
            self.gaps.append((f"{outcome.catalog}.{outcome.name}", outcome.gap))
        if outcome.failure:
            self.failures.append(outcome.failure)
        self.on_outcome(outcome)

    def apply(self, result: TableResult, task: TableTask) -> TableOutcome:
        """Deliver one table's events in commit order and record what was delivered, in one transaction."""
        base = TableOutcome(result.catalog, result.identifier, "failed", failure=result.failure)
        if result.failure is not None or result.identity is None:
            return base
        if result.identity in self.seen:  # the same table registered twice: the first name wins this run
            return dataclasses.replace(base, status="unchanged", failure=None)
        self.seen.add(result.identity)
        previous = self.state.get(result.identity)
        watermark, gap = task.watermark, result.gap
        if result.identity != task.expected_identity:
            # a renamed (or re-created) table: the worker could not know its watermark; filter here
            watermark = self.state.watermark(result.identity)
            gap = gap if previous is None else None
        # A new name for a known table: a RENAME, unless the old name is still listed (one table registered under
        # two names). Decided at the end of the run, when every name was listed; until then the old name stays.
        name = result.identifier
        if previous and not previous.dropped and previous.catalog == result.catalog and previous.identifier != name:
            self.renamed[result.identity] = (previous.identifier, task)
            name = previous.identifier
        history = self.options.mode == "history"
        items = [i for i in result.items if not history or i.snapshot_id not in watermark.emitted]
        sent, stop = self._send(items)
        recorded = tuple(
            EmittedSnapshot(i.snapshot_id, i.sequence_number, i.timestamp_ms, "hook" if i.by_hook else "scan", i.run_id)
            for i in sent
        ) if history else ()
        current = sent[-1].snapshot_id if not history and sent else None
        if not self.state.readonly and (recorded or current is not None or previous is None or previous.dropped
                                        or previous.metadata_location != result.metadata_location):
            self.state.record(TableRecord(
                result.identity, result.catalog, name, result.location or "", result.metadata_location,
                recorded, current,
            ))
        emitted = sum(1 for i in sent if not i.by_hook)
        outcome = dataclasses.replace(
            base, status="updated" if sent else "unchanged", failure=None, emitted=emitted,
            by_hooks=len(sent) - emitted, gap=gap,
        )
        if stop is not None:
            return self._stopped(outcome, stop, f"snapshot {items[len(sent)].snapshot_id}")
        return outcome

    def _send(self, items: list[PendingEvent]) -> tuple[list[PendingEvent], str | None]:
        """Send in commit order; stop at the first event the sink did not take. Returns the prefix taken (hook-tagged
        snapshots need no event) and the status that stopped it."""
        for n, item in enumerate(items):
            if not item.by_hook:
                status = self.sink(item.json)  # type: ignore[arg-type]
                if status not in ADVANCING:
                    return items[:n], status
        return items, None

    def _stopped(self, outcome: TableOutcome, status: str, what: str) -> TableOutcome:
        if status == "disabled":  # OpenLineage switched off: nothing sent, nothing recorded, nothing wrong
            return outcome
        reason = f"delivery {status} for {what}; the table's watermark stays before it"
        return dataclasses.replace(outcome, status="failed", failure=TableFailure(
            outcome.catalog, outcome.name, reason, kind="delivery"))

    # -- renames and drops ---------------------------------------------------------------------------------------
    def emit_catalog_changes(self) -> None:
        """RENAMEs, then DROPs: both need every name of the run listed first."""
        for identity, (old, task) in self.renamed.items():
            if (task.catalog.name, old) in self.listed_tables:
                continue  # still listed under its old name too: an alias, not a rename
            self._lifecycle(task.catalog.name, task.identifier, "RENAME", lambda: _rename_event(
                task, old, self.settings, self.capture_time), lambda: self.state.rename(identity, task.identifier))
        for spec in self.options.catalogs:
            gone = [
                t for t in self.state.tables(spec.name)
                if (spec.name, tuple(t.identifier[:-1])) in self.listed_ok
                and self.options.filters.wants(spec.name, t.identifier)
                and t.identity not in self.seen
                and (spec.name, t.identifier) not in self.listed_tables
            ]
            for entry in gone:
                self._lifecycle(spec.name, entry.identifier, "DROP", lambda: _drop_event(
                    spec, entry, self.settings, self.capture_time), lambda: self.state.mark_dropped(entry.identity))

    def _lifecycle(self, catalog: str, identifier: tuple[str, ...], kind: str, build: Callable[[], str],
                   record: Callable[[], None]) -> None:
        """Send one RENAME or DROP; record it once delivered, so a failed one comes again next run."""
        try:
            status = self.sink(build())
        except IcebergLineageError as exc:
            status = f"impossible ({exc.reason})"
        if status in ADVANCING:
            self.renames += kind == "RENAME"
            self.drops += kind == "DROP"
            if not self.state.readonly:
                record()
        elif status != "disabled":
            self.failures.append(TableFailure(catalog, ".".join(identifier), f"delivery {status} for the {kind} event",
                                              kind="delivery"))

    def summary(self, elapsed: float) -> ScanSummary:
        return ScanSummary(
            mode=self.options.mode,
            dry_run=self.options.dry_run,
            tables_scanned=sum(self.outcomes.values()),
            unchanged=self.outcomes["unchanged"],
            updated=self.outcomes["updated"],
            failed=self.outcomes["failed"],
            snapshots_emitted=self.emitted,
            snapshots_by_hooks=self.by_hooks,
            drops=self.drops,
            renames=self.renames,
            gaps=tuple(self.gaps),
            failures=tuple(self.failures),
            elapsed_s=elapsed,
        )


def _rename_event(task: TableTask, old: tuple[str, ...], settings: Settings, when: dt.datetime) -> str:
    from iceberg_lineage.lineage.events import lifecycle_event, to_json
    from iceberg_lineage.read.source import open_table

    table = open_table(task.identifier, catalog=task.catalog.load())
    return to_json(lifecycle_event(table, "RENAME", settings, previous_identifier=old, event_time=when))


def _drop_event(spec: CatalogSpec, entry: TableState, settings: Settings, when: dt.datetime) -> str:
    """The DROP of a table that is gone: described by its last metadata file when that still exists."""
    from iceberg_lineage.lineage.events import lifecycle_event, to_json

    return to_json(lifecycle_event(_tombstone(spec, entry), "DROP", settings, event_time=when))


def _tombstone(spec: CatalogSpec, entry: TableState) -> LoadedTable:
    from iceberg_lineage.errors import MetadataError
    from iceberg_lineage.read.metadata import parse_metadata
    from iceberg_lineage.read.source import RelocatingIO, catalog_type_of, load_metadata_path

    try:
        if not entry.metadata_location:
            raise MetadataError("no metadata location recorded")
        loaded = load_metadata_path(entry.metadata_location, properties=dict(spec.properties))
    except IcebergLineageError:
        raw = {"format-version": 2, "table-uuid": entry.identity, "location": entry.location,
               "schemas": [{"schema-id": 0, "type": "struct", "fields": []}], "current-schema-id": 0}
        loaded = LoadedTable(parse_metadata(raw, entry.metadata_location), RelocatingIO(None))
    try:
        catalog_type = catalog_type_of(spec.load())
    except CatalogError:
        catalog_type = dict(spec.properties).get("type", "static")
    return dataclasses.replace(
        loaded, name=entry.identifier[-1], catalog_name=spec.name, catalog_type=catalog_type,
        catalog_properties=dict(spec.properties), identifier=entry.identifier,
    )


# ====================================================================================================================
# Sinks
# ====================================================================================================================

def delivery_sink(delivery: Any) -> Sink:
    """Send through :class:`~iceberg_lineage.delivery.delivery.Delivery` (the one delivery path)."""
    from iceberg_lineage.lineage.events import from_json

    return lambda text: delivery.emit(from_json(text)).status


def printing_sink(write: Callable[[str], Any]) -> Sink:
    """Dry run: each event as one JSON line, nothing sent, nothing recorded."""

    def sink(text: str) -> str:
        write(text + "\n")
        return "printed"

    return sink

