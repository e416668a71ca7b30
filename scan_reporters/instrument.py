"""Instrument PyIceberg catalogs so scans produce ScanReports and commits produce CommitReports.

How it hooks in (see the reference notes on PyIceberg 0.12 for why):

* ``instrument(catalog)`` swaps ``catalog.__class__`` for a per-class dynamic subclass of
  ``(_InstrumentedCatalog, type(catalog))``. ``commit_table`` is the chokepoint of every write, evolution and
  maintenance API, and tables already loaded from the catalog hold that very object, so they are covered.
  A delegating proxy would miss commits; the mixin derives from ``Catalog`` so the ``__class__`` swap is legal.
  ``create_table``, ``register_table``, ``drop_table``, ``purge_table`` and ``rename_table`` bypass
  ``commit_table`` and are wrapped for ``TableEvent`` notifications.
* Scans: ``DataScan.plan_files`` is patched once, process-wide, but acts only when ``scan.catalog`` is an
  instrumented catalog; all of ``plan_files``/``to_arrow``/``to_pandas``/``to_arrow_batch_reader``/``count``
  plan exactly once through it, so one execution gives one report. Server-side (REST) planning is left alone
  and reports nothing, as in Java. ``Table.scan`` and ``DataScan.update`` are patched to carry the originating
  ``Table`` to the scan for ``ScanOutcome.table``.
* Commits: PyIceberg's retry loop (``Transaction.commit_transaction``) calls ``commit_table`` once per
  attempt. Attempts are keyed by (thread, identifier, added snapshot ids), which are stable across retries;
  ``Transaction.commit_transaction`` is bracketed so that a commit failing for good is reported with its
  error, once. Reporters' ``before_commit`` runs inside ``commit_table`` on every attempt. CommitReports come
  from the snapshot summaries of the committed metadata, never from manifests, so reporting adds no I/O to
  the commit path. Schema/spec/property-only commits add no snapshot and therefore, as in Java, no
  CommitReport, but they do reach ``after_commit``.
* ``install()`` patches ``pyiceberg.catalog.load_catalog`` so every catalog it returns is instrumented with
  the reporters named in its ``metrics-reporter-impl`` property. Modules that did
  ``from pyiceberg.catalog import load_catalog`` before ``install()`` keep the unpatched function.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyiceberg.catalog import Catalog

from scan_reporters.commit_metrics import commit_report_from_snapshot
from scan_reporters.events import CommitOutcome, ScanOutcome, TableEvent, TableEventKind
from scan_reporters.reporters.base import CompositeMetricsReporter, MetricsReporter, load_reporters

if TYPE_CHECKING:
    from pyiceberg.table import DataScan, Table
    from pyiceberg.table.metadata import TableMetadata

LOG = logging.getLogger("scan_reporters")
_STATE_ATTR = "_scan_reporters_state"
_TABLE_ATTR = "_scan_reporters_table"
_LOCK = threading.RLock()


@dataclass
class _CatalogState:
    reporter: CompositeMetricsReporter
    original_class: type
    metadata: dict[str, str]


def _engine_metadata() -> dict[str, str]:
    """Java puts ``EnvironmentContext`` into every report's metadata; this is PyIceberg's equivalent."""
    import pyiceberg

    return {"engine-name": "pyiceberg", "engine-version": str(pyiceberg.__version__)}


def _state(catalog: Any) -> _CatalogState | None:
    if isinstance(catalog, _InstrumentedCatalog):
        return getattr(catalog, _STATE_ATTR, None)
    return None


def table_name(catalog: Catalog, identifier: tuple[str, ...]) -> str:
    """Java ``fullTableName``: ``<catalog name>.<namespace...>.<table>``."""
    return ".".join((catalog.name, *identifier))


# ----------------------------------------------------------------------------------------------- commits


@dataclass
class _Attempts:
    """A logical commit in progress: first-attempt start and base, attempt count, last attempt's inputs."""

    start_ns: int
    base_metadata: TableMetadata | None
    attempts: int = 0
    updates: tuple[Any, ...] = ()
    requirements: tuple[Any, ...] = ()


class _CommitTracker:
    """Attempts keyed by (thread id, identifier, added snapshot ids), plus per-thread transaction brackets."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[tuple[Any, ...], _Attempts] = {}
        self._local = threading.local()

    def brackets(self) -> list[list[tuple[Any, ...]]]:
        if not hasattr(self._local, "stack"):
            self._local.stack = []
        return self._local.stack  # type: ignore[no-any-return]

    def begin(self, key: tuple[Any, ...], base: TableMetadata | None) -> _Attempts:
        with self._lock:
            record = self._open.get(key)
            if record is None:
                record = self._open[key] = _Attempts(start_ns=time.perf_counter_ns(), base_metadata=base)
                if self.brackets():
                    self.brackets()[-1].append(key)
            record.attempts += 1
            return record

    def pop(self, key: tuple[Any, ...]) -> _Attempts | None:
        with self._lock:
            return self._open.pop(key, None)


_TRACKER = _CommitTracker()


def _added_snapshot_ids(updates: tuple[Any, ...]) -> tuple[int, ...]:
    from pyiceberg.table.update import AddSnapshotUpdate

    return tuple(u.snapshot.snapshot_id for u in updates if isinstance(u, AddSnapshotUpdate))


def _finish_commit(
    catalog: Catalog,
    state: _CatalogState,
    key: tuple[Any, ...],
    *,
    metadata: TableMetadata | None,
    metadata_location: str | None,
    error: BaseException | None,
) -> None:
    """Close a logical commit: one CommitReport per added snapshot, then ``after_commit``."""
    record = _TRACKER.pop(key)
    if record is None:
        return
    try:
        identifier, snapshot_ids = key[1], key[2]
        duration_ns = time.perf_counter_ns() - record.start_ns
        reports = []
        if metadata is not None and error is None:
            name = table_name(catalog, identifier)
            for snapshot_id in snapshot_ids:
                snapshot = metadata.snapshot_by_id(snapshot_id)
                if snapshot is not None:
                    reports.append(
                        commit_report_from_snapshot(
                            name, snapshot, duration_ns=duration_ns, attempts=record.attempts, metadata=state.metadata
                        )
                    )
        for report in reports:
            state.reporter.report(report)
        state.reporter.after_commit(
            CommitOutcome(
                catalog=catalog,
                identifier=identifier,
                base_metadata=record.base_metadata,
                metadata=metadata,
                metadata_location=metadata_location,
                updates=record.updates,
                requirements=record.requirements,
                added_snapshot_ids=snapshot_ids,
                commit_reports=tuple(reports),
                attempts=record.attempts,
                duration_ns=duration_ns,
                error=error,
            )
        )
    except Exception:  # noqa: BLE001 - reporting must never fail a commit
        LOG.exception("Failed to report commit of %s", key[1])


def _commit_transaction(original: Any) -> Any:
    """Bracket PyIceberg's retry loop so a commit that fails for good is reported once, with its error."""

    def commit_transaction(self: Any) -> Any:
        catalog = self._table.catalog
        state = _state(catalog)
        if state is None:
            return original(self)
        stack = _TRACKER.brackets()
        stack.append([])
        error: BaseException | None = None
        try:
            return original(self)
        except BaseException as exc:
            error = exc
            raise
        finally:
            for key in stack.pop():
                # Success already closed its key in commit_table; what is left failed, or landed in an earlier
                # attempt whose response was lost (PyIceberg then stops without another commit_table call).
                _finish_commit(
                    catalog,
                    state,
                    key,
                    metadata=None if error else self._table.metadata,
                    metadata_location=None if error else self._table.metadata_location,
                    error=error,
                )

    commit_transaction.__wrapped__ = original  # type: ignore[attr-defined]
    return commit_transaction


class _InstrumentedCatalog(Catalog):
    """Mixin placed in front of the catalog's own class by ``instrument``; never instantiated directly."""

    def commit_table(self, table: Table, requirements: tuple[Any, ...], updates: tuple[Any, ...]) -> Any:
        state = _state(self)
        if state is None:
            return super().commit_table(table, requirements, updates)
        from pyiceberg.table import AssertCreate

        identifier = tuple(table.name())
        key = (threading.get_ident(), identifier, _added_snapshot_ids(updates))
        is_create = any(isinstance(r, AssertCreate) for r in requirements)
        record = _TRACKER.begin(key, None if is_create else table.metadata)
        updates = state.reporter.before_commit(table, tuple(updates))
        record.updates, record.requirements = tuple(updates), tuple(requirements)
        try:
            response = super().commit_table(table, requirements, updates)
        except BaseException as exc:
            if not _TRACKER.brackets():  # no retry loop around us: this failure is final
                _finish_commit(self, state, key, metadata=None, metadata_location=None, error=exc)
            raise
        _finish_commit(
            self, state, key, metadata=response.metadata, metadata_location=response.metadata_location, error=None
        )
        return response

    def __reduce_ex__(self, protocol: Any) -> Any:
        """Pickle as the plain catalog: instrumentation is process-local (process pools, Dask workers)."""
        state = _state(self)
        if state is None:
            return super().__reduce_ex__(protocol)
        return (_plain_catalog, (state.original_class, {k: v for k, v in vars(self).items() if k != _STATE_ATTR}))

    def _table_event(self, kind: TableEventKind, identifier: Any, table: Any = None, **extra: Any) -> None:
        state = _state(self)
        if state is None or getattr(_EVENT_GUARD, "active", False):
            return
        state.reporter.on_table_event(
            TableEvent(
                kind=kind,
                catalog=self,
                identifier=tuple(Catalog.identifier_to_tuple(identifier)),
                metadata=getattr(table, "metadata", None),
                metadata_location=getattr(table, "metadata_location", None),
                **extra,
            )
        )

    def _load_quietly(self, identifier: Any) -> Any:
        try:
            return self.load_table(identifier)
        except Exception:  # noqa: BLE001 - the drop proceeds and is reported without metadata
            return None

    def create_table(self, identifier: Any, *args: Any, **kwargs: Any) -> Any:
        table = super().create_table(identifier, *args, **kwargs)
        self._table_event("create", identifier, table)
        return table

    def register_table(self, identifier: Any, *args: Any, **kwargs: Any) -> Any:
        table = super().register_table(identifier, *args, **kwargs)
        self._table_event("register", identifier, table)
        return table

    def drop_table(self, identifier: Any) -> None:
        before = None if getattr(_EVENT_GUARD, "active", False) else self._load_quietly(identifier)
        super().drop_table(identifier)
        self._table_event("drop", identifier, before)

    def purge_table(self, identifier: Any) -> None:
        before = self._load_quietly(identifier)
        _EVENT_GUARD.active = True  # purge calls drop_table: report one event, not two
        try:
            super().purge_table(identifier)
        finally:
            _EVENT_GUARD.active = False
        self._table_event("drop", identifier, before, purge=True)

    def rename_table(self, from_identifier: Any, to_identifier: Any) -> Any:
        table = super().rename_table(from_identifier, to_identifier)
        self._table_event(
            "rename", from_identifier, table, new_identifier=tuple(Catalog.identifier_to_tuple(to_identifier))
        )
        return table


def _plain_catalog(cls: type, attrs: dict[str, Any]) -> Catalog:
    catalog = cls.__new__(cls)
    vars(catalog).update(attrs)
    return catalog  # type: ignore[no-any-return]


_EVENT_GUARD = threading.local()
_SUBCLASSES: dict[type, type] = {}


def _instrumented_class(cls: type) -> type:
    with _LOCK:
        if cls not in _SUBCLASSES:
            _SUBCLASSES[cls] = type(f"Instrumented{cls.__name__}", (_InstrumentedCatalog, cls), {"__module__": __name__})
        return _SUBCLASSES[cls]


# -------------------------------------------------------------------------------------------------- scans


def _table_of(scan: DataScan) -> Any:
    table = scan.__dict__.get(_TABLE_ATTR)
    if table is not None:
        return table
    from pyiceberg.table import Table

    return Table(
        identifier=scan.table_identifier or (),
        metadata=scan.table_metadata,
        metadata_location="",
        io=scan.io,
        catalog=scan.catalog,  # type: ignore[arg-type]
    )


def _plan_files(original: Any) -> Any:
    def plan_files(self: DataScan) -> Any:
        state = _state(self.catalog)
        if state is None or self.table_identifier is None or self._should_use_server_side_planning():
            return original(self)
        from scan_reporters.scan_metrics import plan_with_report

        catalog = self.catalog
        assert catalog is not None
        try:
            planned = plan_with_report(self, table_name(catalog, tuple(self.table_identifier)), state.metadata)
        except Exception:  # noqa: BLE001 - fall back to PyIceberg untouched (it raises the same error, if any)
            LOG.exception("Scan metrics planning failed; planning without a report")
            return original(self)
        if planned.report is not None and planned.snapshot_id is not None:
            try:
                state.reporter.report(planned.report)
                metrics = planned.report.scan_metrics.values()
                state.reporter.after_scan(
                    ScanOutcome(
                        table=_table_of(self),
                        snapshot_id=planned.snapshot_id,
                        report=planned.report,
                        row_filter=self.row_filter,
                        result_data_files=metrics["result-data-files"],
                        result_file_size_in_bytes=metrics["total-file-size-in-bytes"],
                        result_records=planned.result_records,
                    )
                )
            except Exception:  # noqa: BLE001
                LOG.exception("Failed to report scan of %s", self.table_identifier)
        if planned.error is not None:
            raise planned.error
        return planned.tasks

    plan_files.__wrapped__ = original  # type: ignore[attr-defined]
    return plan_files


def _table_scan(original: Any) -> Any:
    def scan(self: Table, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        if _state(self.catalog) is not None:
            result.__dict__[_TABLE_ATTR] = self
        return result

    scan.__wrapped__ = original  # type: ignore[attr-defined]
    return scan


def _scan_update(original: Any) -> Any:
    def update(self: Any, **overrides: Any) -> Any:
        result = original(self, **overrides)
        if _TABLE_ATTR in self.__dict__:
            result.__dict__[_TABLE_ATTR] = self.__dict__[_TABLE_ATTR]
        return result

    update.__wrapped__ = original  # type: ignore[attr-defined]
    return update


def _patch_targets() -> list[tuple[Any, str, Any]]:
    from pyiceberg.table import DataScan, Table, Transaction

    return [
        (DataScan, "plan_files", _plan_files),
        (DataScan, "update", _scan_update),
        (Table, "scan", _table_scan),
        (Transaction, "commit_transaction", _commit_transaction),
    ]


_ORIGINALS: dict[tuple[Any, str], Any] = {}  # (owner, name) -> own attribute before patching, or None
_LIVE: weakref.WeakSet[Catalog] = weakref.WeakSet()  # every instrumented catalog
_INSTALLED: weakref.WeakSet[Catalog] = weakref.WeakSet()  # those instrumented by install()
_ORIGINAL_LOAD_CATALOG: Any = None


def _ensure_patched() -> None:
    """Install the class-level wrappers once; they are inert for catalogs that are not instrumented."""
    with _LOCK:
        for owner, name, wrap in _patch_targets():
            if (owner, name) not in _ORIGINALS:
                _ORIGINALS[(owner, name)] = owner.__dict__.get(name)
                setattr(owner, name, wrap(getattr(owner, name)))


def _unpatch_if_unused() -> None:
    with _LOCK:
        if _LIVE or _ORIGINAL_LOAD_CATALOG is not None:
            return
        for (owner, name), own in _ORIGINALS.items():
            if own is None:
                delattr(owner, name)
            else:
                setattr(owner, name, own)
        _ORIGINALS.clear()


# ------------------------------------------------------------------------------------------- public API


def instrument(catalog: Catalog, reporter: MetricsReporter | None = None) -> Catalog:
    """Make ``catalog`` (and tables already loaded from it) report scans and commits; returns it.

    ``reporter`` defaults to the reporters named by the catalog's ``metrics-reporter-impl`` property
    (``logging`` when unset, as in Java). Instrumenting again only replaces the reporter when one is given,
    so nothing is ever reported twice.
    """
    with _LOCK:
        state = _state(catalog)
        if state is not None and reporter is None:
            return catalog
        composite = CompositeMetricsReporter([reporter] if reporter is not None else load_reporters(catalog.properties).reporters)
        composite.bind_catalog(catalog)
        if state is not None:
            state.reporter = composite
            return catalog
        original = type(catalog)
        catalog.__class__ = _instrumented_class(original)
        setattr(catalog, _STATE_ATTR, _CatalogState(composite, original, _engine_metadata()))
        _LIVE.add(catalog)
        _ensure_patched()
        return catalog


def uninstrument(catalog: Catalog) -> Catalog:
    """Undo ``instrument``; the catalog's reporters are closed. Safe on a catalog never instrumented."""
    with _LOCK:
        state = _state(catalog)
        if state is None:
            return catalog
        catalog.__class__ = state.original_class
        delattr(catalog, _STATE_ATTR)
        _INSTALLED.discard(catalog)
        _LIVE.discard(catalog)
        _unpatch_if_unused()
    state.reporter.close()
    return catalog


def install() -> None:
    """Instrument every catalog ``pyiceberg.catalog.load_catalog`` returns from now on (idempotent).

    Only calls through the module attribute are seen: ``from pyiceberg.catalog import load_catalog`` done
    before ``install()`` keeps a reference to the unpatched function.
    """
    global _ORIGINAL_LOAD_CATALOG
    import pyiceberg.catalog as catalog_module

    with _LOCK:
        if _ORIGINAL_LOAD_CATALOG is not None:
            return
        original = catalog_module.load_catalog
        _ORIGINAL_LOAD_CATALOG = original

        def load_catalog(name: str | None = None, **properties: str | None) -> Catalog:
            catalog = original(name, **properties)
            try:
                instrument(catalog)
                _INSTALLED.add(catalog)
            except Exception:  # noqa: BLE001 - never break catalog loading
                LOG.exception("Could not instrument catalog %s", name)
            return catalog

        load_catalog.__wrapped__ = original  # type: ignore[attr-defined]
        catalog_module.load_catalog = load_catalog  # type: ignore[assignment]
        _ensure_patched()


def uninstall() -> None:
    """Restore ``pyiceberg.catalog.load_catalog`` and uninstrument the catalogs ``install`` instrumented."""
    global _ORIGINAL_LOAD_CATALOG
    import pyiceberg.catalog as catalog_module

    with _LOCK:
        if _ORIGINAL_LOAD_CATALOG is not None:
            catalog_module.load_catalog = _ORIGINAL_LOAD_CATALOG
            _ORIGINAL_LOAD_CATALOG = None
        for catalog in list(_INSTALLED):
            uninstrument(catalog)
        _unpatch_if_unused()


def is_instrumented(catalog: Catalog) -> bool:
    return _state(catalog) is not None
