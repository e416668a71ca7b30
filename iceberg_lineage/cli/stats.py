"""The ``stats`` command: statistics of a table at a snapshot, or of its whole history, as a table or JSON."""
from __future__ import annotations

import json

import click

from iceberg_lineage.cli.common import (
    EXIT_OK, column_options, default_format, run_guarded, selected_snapshot_ids, settings_and_table, table_options,
)
from iceberg_lineage.cli.render import print_history
from iceberg_lineage.stats import table_history


@click.command("stats")
@table_options
@click.option("--depth", type=click.Choice(["summary", "manifest_list", "entries"]), default="entries",
              show_default=True, help="How deep to read: the summary, the manifest list, or the manifest entries.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default=None,
              help="text (a table) is the default on a terminal, json otherwise.")
@column_options
def stats_command(metadata, catalog, table, snapshot, all_snapshots, relocate, debug, depth, fmt,
                  column_stats, include_columns, exclude_columns) -> None:
    """Statistics of a table at a snapshot, or of its whole history."""

    def body() -> int:
        settings, loaded = settings_and_table(metadata, catalog, table, relocate, snapshot, all_snapshots,
                                              column_stats, include_columns, exclude_columns)
        ids = selected_snapshot_ids(loaded, snapshot, all_snapshots)
        history = table_history(loaded, depth=depth, columns=settings.column_stats, snapshot_ids=ids)
        if (fmt or default_format()) == "json":
            click.echo(json.dumps(history.to_json(), sort_keys=False, default=str))
        else:
            print_history(history)
        return EXIT_OK

    run_guarded(debug, body)
