"""``iceberg-lineage replay``: send spooled events again, in order, through the configured OpenLineage transport,
and handle the quarantine of events the server rejected ``spool.max_rejections`` times.

Exit codes: 0 everything was delivered (nothing waits, nothing is quarantined); 1 something still waits in the
spool or is quarantined (``--list`` answers the same way); 2 usage or configuration error, including a spool that
is not one (garbage, not a directory). ``--drop`` exits 0 once the event is deleted.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from iceberg_lineage.cli.common import EXIT_OK, EXIT_TABLE_FAILED, debug_option, default_format, run_guarded
from iceberg_lineage.errors import ConfigError
from iceberg_lineage.state.adopt import adopt_legacy_state

if TYPE_CHECKING:
    from iceberg_lineage.config import Settings


@click.command("replay")
@click.option("--spool", "spool_path", metavar="PATH",
              help="Spool directory (default: the spool.path setting, <user state dir>/spool).")
@click.option("--list", "list_quarantine", is_flag=True,
              help="Show the quarantine (events rejected spool.max_rejections times) and send nothing.")
@click.option("--retry-quarantined", is_flag=True,
              help="Put quarantined events back in the queue at their original place, attempts reset, then replay.")
@click.option("--drop", "drop_seq", type=int, metavar="ID", help="Delete one quarantined event (its seq in --list).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default=None,
              help="Format of --list: text on a terminal, json otherwise.")
@debug_option
def replay_command(spool_path: str | None, list_quarantine: bool, retry_quarantined: bool, drop_seq: int | None,
                   fmt: str | None, debug: bool) -> None:
    """Redeliver spooled events in order; remove only those the transport accepted."""

    def body() -> int:
        from iceberg_lineage.config import load_settings
        from iceberg_lineage.delivery.spool import Spool, SpoolError

        if list_quarantine + retry_quarantined + (drop_seq is not None) > 1:
            raise ConfigError("use only one of --list, --retry-quarantined and --drop")
        if fmt is not None and not list_quarantine:
            raise ConfigError("--format goes with --list")
        if spool_path is not None and not Path(spool_path).exists():
            raise ConfigError("no spool directory here", file=spool_path)
        settings = load_settings({"spool.path": spool_path})
        adopted = adopt_legacy_state(settings)  # an old ./.iceberg-lineage/spool is replayed from its new place
        if adopted is not None:
            click.echo(f"iceberg-lineage: {adopted}", err=True)
        path = Path(settings.spool.path)
        if path.exists() and not path.is_dir():
            raise ConfigError("not a directory", file=str(path))
        try:
            if list_quarantine:
                return _list(path, fmt or default_format())
            if drop_seq is not None:
                if not Spool.exists(path):
                    raise ConfigError(f"no quarantined event {drop_seq}", file=str(path))
                return _drop(path, drop_seq)
            if not Spool.exists(path):
                click.echo(f"iceberg-lineage: replay: nothing spooled in {settings.spool.path}", err=True)
                return _replay_alerts(settings)
            return max(_replay(settings, retry_quarantined), _replay_alerts(settings))
        except SpoolError as exc:  # garbage, unreadable or unwritable: the spool is not usable as configured
            raise ConfigError(exc.reason, file=exc.file) from None

    run_guarded(debug, body)


def _replay(settings: Settings, retry_quarantined: bool) -> int:
    from iceberg_lineage.delivery.client import describe_transport, disabled, make_client
    from iceberg_lineage.delivery.replay import replay
    from iceberg_lineage.delivery.spool import Spool

    client = make_client()
    try:
        put_back = ""
        if retry_quarantined and not disabled():  # disabled: replay refuses, so leave the quarantine as it is
            with Spool(settings.spool.path) as spool, spool.replay_lock():
                put_back = f"{spool.retry_quarantined()} put back from the quarantine; "
        result = replay(settings.spool.path, client, max_rejections=settings.spool.max_rejections,
                        deadline_s=settings.delivery.request_deadline_s)
    finally:
        client.close()
    quarantined = ""
    if result.quarantined:
        quarantined = f", {result.quarantined} quarantined (see `iceberg-lineage replay --list`)"
    why = f" ({result.error})" if (result.remaining or result.quarantined) and result.error else ""
    click.echo(
        f"iceberg-lineage: replay: {put_back}{result.delivered} delivered, {result.remaining} remaining{quarantined}"
        f"{why} [{settings.spool.path} -> {describe_transport(client)}]",
        err=True,
    )
    return EXIT_OK if result.remaining == 0 and result.quarantined == 0 else EXIT_TABLE_FAILED


def _replay_alerts(settings: Settings) -> int:
    """The schema alerts waiting for ``alerts.webhook`` (their own spool, under ``spool.path``), sent in order."""
    from iceberg_lineage.delivery.spool import Spool
    from iceberg_lineage.delivery.webhook import webhook_for

    webhook = webhook_for(settings)
    if webhook is None or not Spool.exists(webhook.spool_path):
        return EXIT_OK
    with Spool(webhook.spool_path) as spool:
        waiting = spool.count()
    remaining = webhook.flush()
    click.echo(f"iceberg-lineage: replay: schema alerts: {waiting - remaining} delivered, {remaining} remaining "
               f"[{webhook.spool_path} -> the alerts.webhook]", err=True)
    return EXIT_OK if remaining == 0 else EXIT_TABLE_FAILED


def _drop(path: Path, seq: int) -> int:
    from iceberg_lineage.delivery.spool import Spool

    with Spool(path) as spool, spool.replay_lock():
        if not spool.drop(seq):
            raise ConfigError(f"no quarantined event {seq} (see `iceberg-lineage replay --list`)", file=str(path))
    click.echo(f"iceberg-lineage: replay: dropped quarantined event {seq} from {path}", err=True)
    return EXIT_OK


def _list(path: Path, fmt: str) -> int:
    """The quarantine, and how many events wait in the queue; nothing is sent, and no spool is created."""
    from iceberg_lineage.delivery.spool_listing import list_spool

    listing = list_spool(path)
    click.echo(json.dumps(listing.to_json(), indent=2) if fmt == "json" else "\n".join(listing.text_lines()))
    return EXIT_OK if listing.empty else EXIT_TABLE_FAILED
