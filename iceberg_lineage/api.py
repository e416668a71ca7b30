"""The public Python API (``iceberg_lineage.scan_catalog``, ``table_stats``, ``table_events``, ``check_tables``):
what the ``scan``, ``stats``, ``events`` and ``check`` commands do, as functions that return the models those
commands print, built by the same code. docs/api.md documents them.

A table is any reference :func:`~iceberg_lineage.read.source.open_table` takes: a PyIceberg ``Table``, a metadata
file or table folder (path or URI), or an identifier (``"ns.table"``) with ``catalog`` (a configured catalog's name
or a PyIceberg ``Catalog``). ``settings`` default to the configuration's
(:func:`iceberg_lineage.config.load_settings`, which also takes overrides: ``load_settings({"state.path": p})``).
"""
from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence, Union

from iceberg_lineage.config import Settings, load_settings
from iceberg_lineage.errors import ConfigError, IcebergLineageError
from iceberg_lineage.read.catalogs import CatalogSpec, configured_catalogs
from iceberg_lineage.read.source import catalog_type_of, open_table
from iceberg_lineage.stats.model import Depth, TableHistory

if TYPE_CHECKING:
    from openlineage.client.event_v2 import DatasetEvent, RunEvent
    from pyiceberg.catalog import Catalog

    from iceberg_lineage.checks import TableCheck
    from iceberg_lineage.read.source import TableRef
    from iceberg_lineage.scan import ScanSummary
    from iceberg_lineage.scan.modes import Mode

#: A catalog: the name of a configured one (``.pyiceberg.yaml``, ``PYICEBERG_CATALOG__*``, or ``default``, the
#: embedded one ``make run`` fills), or a PyIceberg catalog object.
CatalogRef = Union[str, "Catalog"]


@dataclass(frozen=True)
class ScanResult:
    """A scan's outcome: its summary (what ``scan`` prints), where the events went, and for a dry run the events
    themselves (JSON text, in the order they would be sent)."""

    summary: ScanSummary
    events_to: str
    events: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """What ``iceberg-lineage scan --format json`` prints."""
        return {**self.summary.to_json(), "events": self.events_to}

    @property
    def exit_code(self) -> int:
        """The exit code ``scan`` would end with."""
        return self.summary.exit_code


def _spec(catalog: CatalogRef) -> CatalogSpec:
    if isinstance(catalog, str):
        return configured_catalogs([catalog])[0]
    return CatalogSpec.of(catalog.name, {"type": catalog_type_of(catalog), **catalog.properties})


def scan_catalog(
    catalog: CatalogRef | Sequence[CatalogRef] | None = None,
    *,
    namespaces: Sequence[str] = (),
    tables: Sequence[str] = (),
    exclude: Sequence[str] = (),
    mode: Mode = "history",
    depth: Depth = "entries",
    since: str | dt.datetime | None = None,
    dry_run: bool = False,
    wait: bool = False,
    settings: Settings | None = None,
) -> ScanResult:
    """``iceberg-lineage scan``: emit every snapshot of every table not yet emitted, and advance the watermarks.

    ``catalog``: one catalog, several, or ``None`` for every configured one. ``namespaces``, ``tables`` and
    ``exclude`` filter as ``--namespace``, ``--table`` and ``--exclude`` do (globs on ``ns.table``); ``since``
    is ``"7d"``, an ISO 8601 time or a datetime. ``dry_run`` sends and records nothing and keeps the events in
    :attr:`ScanResult.events`. Another scan holding the state's lock raises
    :class:`~iceberg_lineage.state.store.StateLockedError` unless ``wait``.
    """
    from iceberg_lineage.scan import ScanOptions, TableFilter, scan_catalogs
    from iceberg_lineage.times import epoch_ms, parse_since

    if catalog is None:
        specs = configured_catalogs(())
    elif isinstance(catalog, str) or not isinstance(catalog, Sequence):
        specs = (_spec(catalog),)
    else:
        specs = tuple(_spec(c) for c in catalog)
    options = ScanOptions(catalogs=specs, filters=TableFilter(tuple(namespaces), tuple(tables), tuple(exclude)),
                          mode=mode, depth=depth, since_ms=epoch_ms(parse_since(since)), dry_run=dry_run)
    kept: list[str] = []
    summary, events_to = scan_catalogs(options, settings, wait=wait,
                                       dry_run_write=lambda line: kept.append(line.rstrip("\n")))
    if dry_run:
        events_to = "ScanResult.events (dry run: nothing sent, state untouched)"
    return ScanResult(summary, events_to, tuple(kept))


def _snapshot_ids(loaded: Any, snapshot_id: int | None, all_snapshots: bool) -> list[int] | None:
    from iceberg_lineage.cli.common import selected_snapshot_ids

    if snapshot_id is not None and all_snapshots:
        raise ConfigError("use either snapshot_id or all_snapshots")
    return selected_snapshot_ids(loaded, snapshot_id, all_snapshots)


def table_stats(
    table: TableRef,
    *,
    catalog: CatalogRef | None = None,
    snapshot_id: int | None = None,
    all_snapshots: bool = False,
    depth: Depth = "entries",
    relocate: Mapping[str, str] | None = None,
    settings: Settings | None = None,
) -> TableHistory:
    """``iceberg-lineage stats``: the statistics of a table at its current snapshot (or ``snapshot_id``), or of
    every snapshot with ``all_snapshots``. ``history.snapshots[-1]`` is a
    :class:`~iceberg_lineage.stats.SnapshotStats`; ``history.to_json()`` is what ``stats --format json`` prints.
    Unknown figures are ``None``, never 0."""
    from iceberg_lineage.stats import table_history

    settings = settings if settings is not None else load_settings()
    loaded = open_table(table, catalog=catalog, relocate=relocate)
    return table_history(loaded, depth=depth, columns=settings.column_stats,
                         snapshot_ids=_snapshot_ids(loaded, snapshot_id, all_snapshots))


def table_events(
    table: TableRef,
    *,
    catalog: CatalogRef | None = None,
    snapshot_id: int | None = None,
    all_snapshots: bool = False,
    dataset_events: bool = False,
    relocate: Mapping[str, str] | None = None,
    settings: Settings | None = None,
) -> list[RunEvent | DatasetEvent]:
    """``iceberg-lineage events``: the OpenLineage events of a table's snapshots, in commit order (each run's START
    and COMPLETE), or its current-state DatasetEvents with ``dataset_events``. Nothing is sent: hand them to an
    ``OpenLineageClient``, or ``iceberg_lineage.lineage.serde.to_json`` gives the JSON ``events`` prints."""
    from iceberg_lineage.cli.events import build_events

    settings = settings if settings is not None else load_settings()
    loaded = open_table(table, catalog=catalog, relocate=relocate)
    _snapshot_ids(loaded, snapshot_id, all_snapshots)  # the same checks as build_events', before any reading
    return build_events(loaded, settings, snapshot_id, all_snapshots, dataset_events)


def check_tables(
    table: TableRef | None = None,
    *,
    catalog: CatalogRef | None = None,
    namespaces: Sequence[str] = (),
    snapshot_id: int | None = None,
    rules: str | os.PathLike[str] | None = None,
    relocate: Mapping[str, str] | None = None,
    settings: Settings | None = None,
) -> list[TableCheck]:
    """``iceberg-lineage check``: one :class:`~iceberg_lineage.checks.TableCheck` per table, checked against its
    rules (from the YAML file ``rules``, else the ``checks`` setting, else the default set). Give a ``table``, or a
    ``catalog`` alone to check each of its tables (of ``namespaces``) at its current snapshot. A table that cannot
    be read is a result with its ``error``; ``any(r.blocks for r in results)`` is the gate ``check`` exits 1 on."""
    from iceberg_lineage.checks import TableCheck, check_catalog, check_table
    from iceberg_lineage.quality.rules import checks_config, read_checks_file

    settings = settings if settings is not None else load_settings()
    config = checks_config(settings.checks) if rules is None else read_checks_file(os.fspath(rules))
    if table is not None:
        if namespaces:
            raise ConfigError("namespaces walk a catalog: give them without a table")
        try:
            return [check_table(table, settings, snapshot_id=snapshot_id, config=config, relocate=relocate,
                                **({"catalog": catalog} if catalog is not None else {}))]
        except IcebergLineageError as exc:
            return [TableCheck(os.fspath(table) if isinstance(table, (str, os.PathLike)) else repr(table),
                               error=exc.one_line())]
    if catalog is None:
        raise ConfigError("check_tables needs a table, or a catalog to walk")
    if snapshot_id is not None:
        raise ConfigError("snapshot_id needs one table")
    walked = _spec(catalog).load() if isinstance(catalog, str) else catalog
    return list(check_catalog(walked, settings, namespaces=namespaces, config=config))
