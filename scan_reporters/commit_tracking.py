"""Commit tracking: the mixin that ``instrument`` puts in front of a catalog's class, and the bracket around
PyIceberg's retry loop, so that one logical commit gives one ``after_commit`` and one CommitReport per new snapshot.

PyIceberg's retry loop (``Transaction.commit_transaction``) calls ``commit_table`` once per attempt. Attempts are keyed
by (thread, identifier, added snapshot ids), which are stable across retries; ``Transaction.commit_transaction`` is
bracketed so that a commit failing for good is reported with its error, once. CommitReports come from the snapshot
summaries of the committed metadata, never from manifests, so reporting adds no I/O to the commit path.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyiceberg.catalog import Catalog

from scan_reporters.commit_metrics import commit_report_from_snapshot
from scan_reporters.events import CommitOutcome, TableEvent, TableEventKind
from scan_reporters.reporters.base import CompositeMetricsReporter

if TYPE_CHECKING:
    from pyiceberg.table import Table
    from pyiceberg.table.metadata import TableMetadata

LOG = logging.getLogger("scan_reporters")
_STATE_ATTR = "_scan_reporters_state"


@dataclass
class _CatalogState:
    reporter: CompositeMetricsReporter
    original_class: type
    metadata: dict[str, str]


def _state(catalog: Any) -> _CatalogState | None:
    if isinstance(catalog, _InstrumentedCatalog):
        return getattr(catalog, _STATE_ATTR, None)
    return None


def table_name(catalog: Catalog, identifier: tuple[str, ...]) -> str:
    """Java ``fullTableName``: ``<catalog name>.<namespace...>.<table>``."""
    return ".".join((catalog.name, *identifier))


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
