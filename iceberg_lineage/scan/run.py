"""A whole scan with its I/O wired, the public entry (``iceberg_lineage.scan.scan_catalogs``, what ``iceberg-lineage
scan`` and ``make run`` call): the run lock, the state store (an old ``./.iceberg-lineage`` adopted first), the
configured OpenLineage client and delivery (or stdout for a dry run) checked against the tables' recorded
destination, progress and notices on stderr."""
from __future__ import annotations

import dataclasses
import sys
from typing import TYPE_CHECKING, Callable

from iceberg_lineage.config import Settings, load_settings
from iceberg_lineage.scan.destination import check_destination, destination_of
from iceberg_lineage.scan.driver import ScanOptions, scan
from iceberg_lineage.scan.progress import Progress
from iceberg_lineage.scan.sinks import delivery_sink, printing_sink
from iceberg_lineage.scan.summary import ScanSummary, TableOutcome
from iceberg_lineage.state.adopt import STATE_NAME, adopt_legacy_state, legacy_state
from iceberg_lineage.state.store import StateStore, acquire_lock

if TYPE_CHECKING:
    from iceberg_lineage.delivery.delivery import Delivery


def _notice(message: str) -> None:
    print(f"iceberg-lineage: {message}", file=sys.stderr, flush=True)


def _confirmed(summary: ScanSummary, delivery: Delivery) -> ScanSummary:
    """With a queueing transport (``async_http``), what its flush confirmed: every snapshot it took, or the events it
    lost (exit code 1)."""
    if delivery.synchronous:
        return summary
    lost = delivery.settled().failed - delivery.stats.failed
    if lost:
        return dataclasses.replace(summary, events_unconfirmed=lost)
    return dataclasses.replace(summary, snapshots_delivered=summary.snapshots_emitted - summary.snapshots_spooled)


def scan_catalogs(options: ScanOptions, settings: Settings | None = None, *, wait: bool = False,
                  progress: bool = False, observer: Callable[[TableOutcome], None] | None = None,
                  dry_run_write: Callable[[str], object] | None = None) -> tuple[ScanSummary, str]:
    """Scan ``options.catalogs`` and send what is new; returns the summary and where the events went.

    ``settings`` default to the configuration's (:func:`~iceberg_lineage.config.load_settings`). Another scan holding
    the state's lock raises :class:`~iceberg_lineage.state.store.StateLockedError`, or with ``wait`` is waited for.
    The scan sends its own run too (job ``<job namespace>.scan``, :func:`~iceberg_lineage.scan.driver.scan`).
    ``observer`` sees every table's outcome too (``make run`` tabulates them). A dry run writes its JSON Lines with
    ``dry_run_write`` (default: stdout's)."""
    settings = settings if settings is not None else load_settings()
    with Progress(progress, sys.stderr) as shown:

        def on_outcome(outcome: TableOutcome) -> None:
            shown(outcome)
            if observer is not None:
                observer(outcome)

        if options.dry_run:  # an old ./.iceberg-lineage not adopted yet is what a real scan would start from
            legacy = legacy_state(settings)
            with StateStore(settings.state.path if legacy is None else legacy / STATE_NAME, readonly=True) as store:
                summary = scan(options, settings, store, printing_sink(dry_run_write or sys.stdout.write, settings),
                               on_outcome=on_outcome, on_listed=shown.listed, own_run=True)
            return summary, "stdout (dry run: nothing sent, state untouched)"
        from iceberg_lineage.delivery.client import describe_transport, disabled, make_client
        from iceberg_lineage.delivery.delivery import Delivery

        adopted = adopt_legacy_state(settings)
        if adopted is not None:
            _notice(adopted)
        lock = acquire_lock(settings.state.path, wait=wait, on_wait=_notice)
        try:
            client = make_client(default_path=settings.state.events_path)
            delivery = Delivery(client, settings)
            if disabled():
                _notice("OpenLineage is disabled (OPENLINEAGE_DISABLED): nothing is sent and the state does not "
                        "advance")
            elif not delivery.synchronous:
                _notice("warning: the async_http transport confirms nothing; a snapshot is recorded as emitted once "
                        "queued, so a crash can lose queued events")
            try:
                with StateStore(settings.state.path) as store:
                    destination = destination_of(client.transport)
                    if check_destination(store, [spec.name for spec in options.catalogs], options.filters, destination,
                                         accept=options.new_destination):
                        _notice(f"new destination {destination}: the tables' history is sent there")
                    summary = scan(options, settings, store, delivery_sink(delivery), on_outcome=on_outcome,
                                   on_listed=shown.listed, own_run=True)
                summary = _confirmed(summary, delivery)
            finally:
                delivery.close()
                client.close()
            events_to = describe_transport(client)
            if delivery.stats.spooled:
                events_to += f" ({delivery.stats.spooled} spooled to {delivery.spool_path}: run iceberg-lineage replay)"
            return summary, events_to
        finally:
            lock.release()
