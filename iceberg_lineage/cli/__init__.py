"""The ``iceberg-lineage`` command line: it parses arguments and prints; everything it does is a library call.
Each command lives in its own module; this one only assembles the group, and imports a command's module only when
that command runs (or ``--help`` lists them all): ``events`` need not import ``stats``' walker or ``check``'s rules.

Exit codes: 0 everything asked for was done; 1 some or all tables could not be read, a rule failed, or an event
was lost or refused (reason on stderr); 2 usage or configuration error; 3 done, with events waiting in the spool.
The most serious wins: 2 > 1 > 3 > 0 (one table: ``docs/exit-codes.md``).
"""
from __future__ import annotations

from importlib import import_module

import click

from iceberg_lineage.redact import protect_environment

#: Each command's name and the module that defines it as ``<name>_command``.
COMMANDS = ("check", "config", "events", "jobs", "proxy", "replay", "run", "scan", "schema", "stats")


class _LazyGroup(click.Group):
    """Click's lazy-loading group (click's documentation, "Lazily Loading Subcommands"): the command list is known
    up front, each command's module is imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            self.add_command(getattr(import_module(f"{__name__}.{cmd_name}"), f"{cmd_name}_command"))
        return super().get_command(ctx, cmd_name)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="iceberg-lineage")
def main() -> None:
    """Apache Iceberg table metadata to OpenLineage lineage, with honest statistics."""
    protect_environment()  # every command's log records and error lines scrubbed and escaped, from the start
