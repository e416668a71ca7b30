"""The ``events`` command: OpenLineage events of a table's snapshots, as JSON Lines on stdout or sent with
``--emit`` through the OpenLineage client (see :mod:`iceberg_lineage.delivery.client`)."""
from __future__ import annotations

from typing import Any

import click

from iceberg_lineage.cli.common import (
    EXIT_OK, column_options, run_guarded, selected_snapshot_ids, settings_and_table, table_options,
)
from iceberg_lineage.errors import DeliveryError


@click.command("events")
@table_options
@click.option("--dataset-events", is_flag=True, help="Current-state DatasetEvents (table facets, no run) instead of runs.")
@click.option("--emit", is_flag=True, help="Send through the OpenLineage client instead of printing JSON Lines.")
@column_options
def events_command(metadata, catalog, table, snapshot, all_snapshots, relocate, debug, dataset_events, emit,
                   column_stats, include_columns, exclude_columns) -> None:
    """OpenLineage events of a table: one COMPLETE run per snapshot (or DatasetEvents), in commit order."""

    def body() -> int:
        settings, loaded = settings_and_table(metadata, catalog, table, relocate, snapshot, all_snapshots,
                                              column_stats, include_columns, exclude_columns)
        events = build_events(loaded, settings, snapshot, all_snapshots, dataset_events)
        if emit:
            click.echo(f"iceberg-lineage: sent {len(events)} event(s) to {send(events)}", err=True)
        else:
            from iceberg_lineage.lineage.events import to_json

            for event in events:
                click.echo(to_json(event))
        return EXIT_OK

    run_guarded(debug, body)


def build_events(loaded: Any, settings: Any, snapshot: int | None, all_snapshots: bool, dataset_events: bool) -> list:
    """The events the options ask for; a table without snapshots has no runs, only its table-level state."""
    from iceberg_lineage.lineage.events import dataset_event, history_events
    from iceberg_lineage.stats import table_history

    ids = selected_snapshot_ids(loaded, snapshot, all_snapshots)
    history = table_history(loaded, columns=settings.columns, snapshot_ids=ids)
    if not dataset_events:
        return history_events(loaded, history, settings)
    if not history.snapshots:
        return [dataset_event(loaded, None, settings)]
    return [dataset_event(loaded, stats, settings) for stats in history]


def send(events: list) -> str:
    """Emit through the one client factory; returns where the events went."""
    from iceberg_lineage.delivery.client import describe_transport, make_client

    client = make_client()
    try:
        for event in events:
            client.emit(event)
        client.close()
    except Exception as exc:  # noqa: BLE001 - any transport failure is a delivery failure
        raise DeliveryError(f"cannot send events: {type(exc).__name__}: {exc}") from None
    return describe_transport(client)
