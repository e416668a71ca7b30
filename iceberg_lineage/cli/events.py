"""The ``events`` command: OpenLineage events of a table's snapshots, as JSON Lines on stdout or sent with
``--emit`` through :class:`~iceberg_lineage.delivery.delivery.Delivery`, the one delivery path. Printed events are
those ``--emit`` would send (:func:`~iceberg_lineage.delivery.preview.as_sent`): shaped for the consumer profile and
prepared by the OpenLineage client."""
from __future__ import annotations

import datetime as dt
from typing import Any, Iterator

import click

from iceberg_lineage.cli.common import (
    EXIT_OK, column_options, delivery_exit_code, profile_option, run_guarded, selected_snapshot_ids,
    settings_and_table, table_options,
)


@click.command("events")
@table_options
@click.option("--dataset-events", is_flag=True, help="Current-state DatasetEvents (table facets, no run) instead of runs.")
@click.option("--emit", is_flag=True,
              help="Send through the OpenLineage client instead of printing JSON Lines; what is not delivered is "
                   "spooled for `replay` (exit 3; 1 if an event was lost or refused).")
@column_options
@profile_option
def events_command(metadata, catalog, table, snapshot, all_snapshots, relocate, debug, dataset_events, emit,
                   column_stats, include_columns, exclude_columns, profile) -> None:
    """OpenLineage events of a table: one run per snapshot, START and COMPLETE (or DatasetEvents), in commit order."""

    def body() -> int:
        settings, loaded = settings_and_table(metadata, catalog, table, relocate, snapshot, all_snapshots,
                                              column_stats, include_columns, exclude_columns, profile)
        events = build_events(loaded, settings, snapshot, all_snapshots, dataset_events)
        if emit:
            return send(list(events), settings)
        from iceberg_lineage.delivery.preview import as_sent
        from iceberg_lineage.lineage.serde import to_json

        for event in as_sent(events, settings):  # what is printed is what --emit sends
            click.echo(to_json(event))
        return EXIT_OK

    run_guarded(debug, body)


def build_events(loaded: Any, settings: Any, snapshot: int | None, all_snapshots: bool,
                 dataset_events: bool) -> Iterator:
    """The events the options ask for, each run with its START (``events.start_events``); a table without
    snapshots has no runs, only its table-level state. The figures are read first (an error prints nothing); the
    events are built as they are printed: 400,000 snapshots' events, 23 KB each, are never held together."""
    from iceberg_lineage.lineage.events import dataset_event
    from iceberg_lineage.stats import table_history

    ids = selected_snapshot_ids(loaded, snapshot, all_snapshots)
    history = table_history(loaded, columns=settings.column_stats, snapshot_ids=ids)
    if dataset_events and not history.snapshots:
        return iter([dataset_event(loaded, None, settings)])
    return _each_snapshot(loaded, history, settings, dataset_events)


def _each_snapshot(loaded: Any, history: Any, settings: Any, dataset_events: bool) -> Iterator:
    from openlineage.client.event_v2 import RunEvent

    from iceberg_lineage.lineage.events import history_events, with_start
    from iceberg_lineage.lineage.profiles import current_state_event

    capture = dt.datetime.now(dt.timezone.utc)  # one capture time for every run, as history_events gives them
    for stats in history:
        built = (current_state_event(loaded, stats, settings) if dataset_events
                 else history_events(loaded, [stats], settings, capture_time=capture)[0])
        yield from with_start(built, settings) if isinstance(built, RunEvent) else [built]


def send(events: list, settings: Any) -> int:
    """Send in order through ``Delivery``: what the transport refuses or cannot reach is spooled for ``replay``.
    Exit code 0 when the transport confirmed every event (``async_http`` once its flush did), 3 when the rest waits
    in the spool, 1 when an event was lost or refused for good; the counts go to stderr."""
    from iceberg_lineage.delivery.client import describe_transport, make_client
    from iceberg_lineage.delivery.delivery import Delivery

    client = make_client()
    delivery = Delivery(client, settings)
    try:
        results = delivery.emit_many(events)
        stats = delivery.settled()
    finally:
        delivery.close()
        client.close()
    where = describe_transport(client)
    sent = stats.delivered + stats.spooled + stats.failed  # as the profile shaped them
    if not (stats.spooled or stats.failed):
        click.echo(f"iceberg-lineage: sent {sent} event(s) to {where}", err=True)
        return EXIT_OK
    failed = next((f" ({r.error})" for r in results if r.status == "failed"), "")
    rejected = f" ({stats.rejected} refused by the server for good)" if stats.rejected else ""
    click.echo(
        f"iceberg-lineage: events: {stats.delivered} of {sent} event(s) delivered to {where}; "
        f"{stats.spooled} spooled{rejected} to {delivery.spool_path} (send them with `iceberg-lineage replay`), "
        f"{stats.failed} failed{failed}",
        err=True,
    )
    return delivery_exit_code(stats)
