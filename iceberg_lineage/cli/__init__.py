"""The ``iceberg-lineage`` command line: it parses arguments and prints; everything it does is a library call.
Each command lives in its own module; this one only assembles the group.

Exit codes: 0 everything asked for was done; 1 some or all tables could not be read, a rule failed, or an event
was lost or refused (reason on stderr); 2 usage or configuration error; 3 done, with events waiting in the spool.
The most serious wins: 2 > 1 > 3 > 0 (one table: ``docs/exit-codes.md``).
"""
from __future__ import annotations

import click

from iceberg_lineage.cli.check import check_command
from iceberg_lineage.cli.config import config_command
from iceberg_lineage.cli.events import events_command
from iceberg_lineage.cli.proxy import proxy_command
from iceberg_lineage.cli.jobs import jobs_command
from iceberg_lineage.cli.replay import replay_command
from iceberg_lineage.cli.run import run_command
from iceberg_lineage.cli.scan import scan_command
from iceberg_lineage.cli.schema import schema_command
from iceberg_lineage.cli.stats import stats_command
from iceberg_lineage.redact import protect_environment


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="iceberg-lineage")
def main() -> None:
    """Apache Iceberg table metadata to OpenLineage lineage, with honest statistics."""
    protect_environment()  # every command's log records and error lines scrubbed and escaped, from the start


for _command in (stats_command, events_command, scan_command, run_command, replay_command, schema_command, jobs_command):
    main.add_command(_command)
main.add_command(check_command)
main.add_command(proxy_command)
main.add_command(config_command)
