"""``check``: evaluate a table's rules at one snapshot, reading no deeper than the rules need, through the walker
``stats`` uses; over one table, a catalog, or some of its namespaces; and send each table's checks run.

A rule reads its ``depth`` first; when one of its inputs is unknown there and it has a deeper ``fallback`` (the
summary lacks delete totals; the manifest list cannot tell equality-delete files from position-delete files), the
snapshot is read again at that depth, from the same manifest cache, and only those rules are evaluated again.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Iterator, Sequence

from iceberg_lineage.checks.gaps import counts_gaps
from iceberg_lineage.config import ColumnSelection, Settings
from iceberg_lineage.errors import IcebergLineageError
from iceberg_lineage.lineage.rules import rules_for
from iceberg_lineage.quality.assertions import Assertion
from iceberg_lineage.quality.evaluate import CheckInputs, evaluate_rule
from iceberg_lineage.quality.rules import ChecksConfig, RuleSet
from iceberg_lineage.read.catalogs import one_line, walk_namespaces
from iceberg_lineage.read.source import LoadedTable, open_table
from iceberg_lineage.stats import ManifestCache, snapshot_stats
from iceberg_lineage.stats.model import DEPTHS, Depth, SnapshotStats

if TYPE_CHECKING:
    from openlineage.client import OpenLineageClient
    from pyiceberg.catalog import Catalog

    from iceberg_lineage.delivery.results import DeliveryStats
    from iceberg_lineage.read.source import TableRef


@dataclass(frozen=True)
class TableCheck:
    """The assertions of one table at one snapshot, or why the table could not be read (``error``)."""

    table: str
    snapshot_id: int | None = None
    assertions: tuple[Assertion, ...] = ()
    #: How deep the walker read.
    depth: Depth | None = None
    error: str | None = None
    loaded: LoadedTable | None = None
    stats: SnapshotStats | None = None

    @property
    def blocks(self) -> bool:
        """Fails the gate: the table could not be read, or an error-severity assertion failed or was unknown."""
        return self.error is not None or any(a.blocks for a in self.assertions)


def _columns(rules: RuleSet, settings: Settings) -> ColumnSelection:
    """Counts of the columns ``null_fraction`` names (the column policy's excludes still apply), else none."""
    rule = rules.get("null_fraction")
    if rule is None:
        return ColumnSelection(mode="none")
    return ColumnSelection(mode="counts", include=rule.settings["columns"], exclude=settings.column_stats.exclude,
                           max_columns=settings.column_stats.max_columns)


def _read(table: LoadedTable, snapshot_id: int, depth: Depth, rules: RuleSet, settings: Settings,
          cache: ManifestCache) -> SnapshotStats:
    small = rules.get("small_files")
    return snapshot_stats(table, snapshot_id, depth=depth, columns=_columns(rules, settings), cache=cache,
                          small_file_threshold=small.settings["size"] if small else None,
                          partition_records=rules.get("partition_skew") is not None)


def _inputs(table: LoadedTable, stats: SnapshotStats | None, now_ms: int) -> CheckInputs:
    md = table.metadata
    snapshot = md.snapshot_by_id(stats.snapshot_id) if stats is not None else None
    parent = md.snapshot_by_id(snapshot.parent_id) if snapshot is not None and snapshot.parent_id is not None else None
    main = md.refs.get("main")
    head = md.snapshot_by_id(main.snapshot_id if main else md.current_snapshot_id or -1)
    return CheckInputs(
        stats=stats,
        parent=snapshot_stats(table, parent.snapshot_id, depth="summary") if parent is not None else None,
        schema=md.schema_for(snapshot),
        parent_schema=md.schema_for(parent) if parent is not None else None,
        format_version=md.format_version,
        snapshot_count=len(md.snapshots),
        main_timestamp_ms=head.timestamp_ms if head is not None else None,
        now_ms=now_ms,
        partition_records=stats.partition_records if stats is not None else None,
    )


def check_snapshot(table: LoadedTable, rules: RuleSet, settings: Settings, snapshot_id: int | None = None, *,
                   now_ms: int | None = None, cache: ManifestCache | None = None) -> TableCheck:
    """Evaluate ``rules`` at ``snapshot_id`` (default: the current snapshot). Raises for an unreadable table."""
    md = table.metadata
    now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
    sid = snapshot_id if snapshot_id is not None else md.current_snapshot_id
    if sid is not None and md.snapshot_by_id(sid) is None:
        raise IcebergLineageError(f"no snapshot {sid}", table=table.display_name, file=md.metadata_location)
    cache = cache or ManifestCache()
    depth = rules.depth()
    stats = _read(table, sid, depth, rules, settings, cache) if sid is not None else None
    inputs = _inputs(table, stats, now_ms)
    found = [evaluate_rule(rule, inputs) for rule in rules.rules]
    deeper = [i for i, rule in enumerate(rules.rules) if stats is not None and rule.fallback is not None
              and DEPTHS.index(rule.fallback) > DEPTHS.index(depth) and any(a.unknown for a in found[i])]
    if deeper:
        depth = max((rules.rules[i].fallback for i in deeper), key=DEPTHS.index)  # type: ignore[arg-type]
        stats = _read(table, sid, depth, rules, settings, cache)  # type: ignore[arg-type]
        inputs = replace(inputs, stats=stats, partition_records=stats.partition_records)
        for i in deeper:
            found[i] = evaluate_rule(rules.rules[i], inputs)
    unknown = _unknown_counts(found, rules, inputs)
    if unknown and sid is not None:
        inputs = replace(inputs, counts_gaps=counts_gaps(table, sid, unknown))
        found = [evaluate_rule(rule, inputs) if rule.kind == "null_fraction" else f
                 for rule, f in zip(rules.rules, found)]
    return TableCheck(table.display_name, sid, tuple(a for f in found for a in f), stats.depth if stats else None,
                      loaded=table, stats=stats)


def _unknown_counts(found: list[list[Assertion]], rules: RuleSet, inputs: CheckInputs) -> dict[str, int]:
    """The columns whose counts ``null_fraction`` found unknown, with their field ids: their cause is looked up."""
    ids = {name: f.id for name, f in inputs.schema.columns()}
    return {a.column: ids[a.column] for rule, assertions in zip(rules.rules, found) if rule.kind == "null_fraction"
            for a in assertions if a.unknown and a.column in ids}


def check_table(ref: TableRef, settings: Settings, *, snapshot_id: int | None = None, config: ChecksConfig | None = None,
                now_ms: int | None = None, **open_kwargs: object) -> TableCheck:
    """Open a table reference (see :func:`~iceberg_lineage.read.source.open_table`) and check it with its rules
    (from ``config``, else the ``checks`` setting, else the default set)."""
    table = open_table(ref, **open_kwargs)
    return check_snapshot(table, rules_for(table, settings, config), settings, snapshot_id, now_ms=now_ms)


def check_catalog(catalog: Catalog, settings: Settings, *, namespaces: Sequence[str] = (),
                  config: ChecksConfig | None = None, now_ms: int | None = None) -> Iterator[TableCheck]:
    """Check every table of a PyIceberg catalog (or of ``namespaces``) at its current snapshot; a table that cannot
    be read is a :class:`TableCheck` with its ``error``, and the walk goes on."""
    roots = [tuple(ns.split(".")) for ns in namespaces] or [()]
    for listing in walk_namespaces(catalog, roots):
        if listing.error is not None:
            yield TableCheck(".".join(listing.namespace), error=f"namespace not listed: {listing.error}")
        for identifier in sorted(listing.tables):
            yield _checked(identifier, catalog, settings, config, now_ms)


def _checked(identifier: tuple[str, ...], catalog: Catalog, settings: Settings, config: ChecksConfig | None,
             now_ms: int | None) -> TableCheck:
    try:
        return check_table(identifier, settings, catalog=catalog, config=config, now_ms=now_ms)
    except IcebergLineageError as exc:
        return TableCheck(".".join(identifier), error=exc.one_line())
    except Exception as exc:  # noqa: BLE001 - one table must not stop the walk
        return TableCheck(".".join(identifier), error=one_line(exc))


def checks_events(results: Sequence[TableCheck], settings: Settings) -> list:
    """The checks run of every table that was read, in order: START (unless ``events.start_events`` is off), then
    COMPLETE."""
    from iceberg_lineage.lineage.checks import checks_run_event  # openlineage-python: only to send
    from iceberg_lineage.lineage.events import all_with_start

    return all_with_start((checks_run_event(r.loaded, r.stats, r.assertions, settings)
                        for r in results if r.loaded is not None), settings)


def emit_checks(results: Sequence[TableCheck], settings: Settings, client: OpenLineageClient | None = None
                ) -> DeliveryStats:
    """Send the checks runs through the one delivery path; the delivery's counts, once confirmed
    (:meth:`~iceberg_lineage.delivery.delivery.Delivery.settled`)."""
    from iceberg_lineage.delivery.client import make_client
    from iceberg_lineage.delivery.delivery import Delivery

    client = client or make_client()
    delivery = Delivery(client, settings)
    try:
        delivery.emit_many(checks_events(results, settings))
        return delivery.settled()
    finally:
        delivery.close()
