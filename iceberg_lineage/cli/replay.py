"""``iceberg-lineage replay``: send spooled events again, in order, through the configured OpenLineage transport.

Exit codes: 0 the spool is empty; 1 some events remain in it; 2 usage or configuration error.
"""
from __future__ import annotations

from pathlib import Path

import click

from iceberg_lineage.cli.common import EXIT_OK, EXIT_TABLE_FAILED, run_guarded
from iceberg_lineage.errors import ConfigError


@click.command("replay")
@click.option("--spool", "spool_path", metavar="PATH",
              help="Spool directory (default: the spool.path setting, ./.iceberg-lineage/spool).")
@click.option("--debug", is_flag=True, help="Show tracebacks.")
def replay_command(spool_path: str | None, debug: bool) -> None:
    """Redeliver spooled events in order; remove only those the transport accepted."""

    def body() -> int:
        from iceberg_lineage.delivery.client import describe_transport, make_client
        from iceberg_lineage.config import load_settings
        from iceberg_lineage.delivery.delivery import replay
        from iceberg_lineage.delivery.spool import Spool

        if spool_path is not None and not Path(spool_path).is_dir():
            raise ConfigError("no spool directory here", file=spool_path)
        settings = load_settings({"spool.path": spool_path})
        if not Spool.exists(settings.spool_path):
            click.echo(f"iceberg-lineage: replay: nothing spooled in {settings.spool_path}", err=True)
            return EXIT_OK
        client = make_client()
        try:
            result = replay(settings.spool_path, client)
        finally:
            client.close()
        why = f" ({result.error})" if result.remaining and result.error else ""
        click.echo(
            f"iceberg-lineage: replay: {result.delivered} delivered, {result.remaining} remaining{why} "
            f"[{settings.spool_path} -> {describe_transport(client)}]",
            err=True,
        )
        return EXIT_OK if result.remaining == 0 else EXIT_TABLE_FAILED

    run_guarded(debug, body)
