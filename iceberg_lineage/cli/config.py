"""``iceberg-lineage config``: the effective configuration, each setting with its value and where the value came from
(default, the file and its path, an environment variable, a flag), secrets masked; the PyIceberg catalogs found,
the OpenLineage transport events go to, and the state and spool paths.

Exit codes: 0 printed; 2 the configuration is broken (one line naming the file or variable and the key).
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from iceberg_lineage.cli.common import default_format, profile_option, run_guarded

if TYPE_CHECKING:
    from iceberg_lineage.config import Settings

MASK = "***"


@click.command("config")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default=None,
              help="text (aligned columns) is the default on a terminal, json otherwise.")
@profile_option
@click.option("--debug", is_flag=True, help="Show tracebacks.")
def config_command(fmt: str | None, profile: str | None, debug: bool) -> None:
    """Show the effective configuration and where each value came from."""

    def body() -> int:
        report = effective({"consumer.profile": profile})
        click.echo(json.dumps(report, indent=2) if (fmt or default_format()) == "json" else _text(report))
        return 0

    run_guarded(debug, body)


def effective(flags: dict[str, Any]) -> dict[str, Any]:
    """Every setting (value masked when secret and set, source), the catalogs, the transport and the paths."""
    from iceberg_lineage.config import KEYS, resolve

    settings, origins = resolve(flags)
    rows = []
    for key, decl in KEYS.items():
        value = settings
        for part in key.split("."):
            value = getattr(value, part)
        shown = MASK if decl.secret and value else _plain(value)
        rows.append({"key": key, "value": shown, "source": str(origins.get(key, "default"))})
    return {"settings": rows, "catalogs": _catalogs(), "transport": _transport(settings),
            "state": settings.state.path, "spool": settings.spool.path}


def _plain(value: Any) -> Any:
    """A value as JSON shows it (tuples as lists, mappings as objects)."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _catalogs() -> list[str]:
    from iceberg_lineage.read.catalogs import pyiceberg_config

    return sorted(pyiceberg_config().get_known_catalogs())


def _transport(settings: Settings) -> str:
    """Where events would go, without building a default file transport (which would create its folder)."""
    from iceberg_lineage.delivery.client import describe_transport, disabled, make_client, openlineage_configured

    if not (disabled() or openlineage_configured()):
        return f"file {settings.state.events_path} (no OpenLineage transport configured)"
    return describe_transport(make_client())


def _text(report: dict[str, Any]) -> str:
    rows = [(r["key"], json.dumps(r["value"]), r["source"]) for r in report["settings"]]
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    lines = [f"{k:<{widths[0]}}  {v:<{widths[1]}}  {s}" for k, v, s in rows]
    lines += ["", f"catalogs   {', '.join(report['catalogs']) or '(none configured)'}",
              f"transport  {report['transport']}", f"state      {report['state']}", f"spool      {report['spool']}"]
    return "\n".join(lines)
