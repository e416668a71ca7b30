"""The ``iceberg-lineage`` command line: it parses arguments and prints; everything it does is a library call.

Exit codes: 0 everything asked for was done; 1 some or all tables could not be read (reason on stderr);
2 usage or configuration error.
"""
from __future__ import annotations

import json

import click

from iceberg_lineage.cli.common import (
    EXIT_OK, column_options, default_format, run_guarded, selected_snapshot_ids, settings_and_table, table_options,
)
from iceberg_lineage.cli.events import events_command
from iceberg_lineage.cli.replay import replay_command
from iceberg_lineage.cli.run import run_command
from iceberg_lineage.cli.scan import scan_command

@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="iceberg-lineage")
def main() -> None:
    """Apache Iceberg table metadata to OpenLineage lineage, with honest statistics."""


@main.command("stats")
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
        from iceberg_lineage.stats import table_history

        settings, loaded = settings_and_table(metadata, catalog, table, relocate, snapshot, all_snapshots,
                                              column_stats, include_columns, exclude_columns)
        ids = selected_snapshot_ids(loaded, snapshot, all_snapshots)
        history = table_history(loaded, depth=depth, columns=settings.columns, snapshot_ids=ids)
        if (fmt or default_format()) == "json":
            click.echo(json.dumps(history.to_json(), sort_keys=False, default=str))
        else:
            from iceberg_lineage.cli.render import print_history

            print_history(history)
        return EXIT_OK

    run_guarded(debug, body)


for _name, _command in (("events", events_command), ("scan", scan_command), ("run", run_command),
                        ("replay", replay_command)):
    main.add_command(_command, _name)
