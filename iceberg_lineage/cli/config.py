"""``iceberg-lineage config``: the effective configuration, each setting with its value and where the value came from
(default, the file and its path, an environment variable, a flag), secrets masked; the PyIceberg catalogs found, each
with the file it came from, the OpenLineage transport events go to, and the state and spool paths. ``--check`` also
loads each catalog and reaches the transport's endpoint, sending nothing.

Exit codes: 0 printed (and, with ``--check``, everything reached); 1 a catalog or the endpoint cannot be reached
(one line each on stderr); 2 the configuration is broken (one line naming the file or variable and the key).
"""
from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import click

from iceberg_lineage.cli.common import EXIT_OK, EXIT_TABLE_FAILED, default_format, profile_option, run_guarded

if TYPE_CHECKING:
    from iceberg_lineage.config import Settings

MASK = "***"


@click.command("config")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default=None,
              help="text (aligned columns) is the default on a terminal, json otherwise.")
@click.option("--check", is_flag=True,
              help="Also load each catalog (list its namespaces) and reach the transport's endpoint, sending "
                   "nothing: exit 1 if one cannot be reached.")
@profile_option
@click.option("--debug", is_flag=True, help="Show tracebacks.")
def config_command(fmt: str | None, check: bool, profile: str | None, debug: bool) -> None:
    """Show the effective configuration and where each value came from."""

    def body() -> int:
        from iceberg_lineage.config import load_settings

        report = effective({"consumer.profile": profile})
        problems = unreachable(load_settings({"consumer.profile": profile})) if check else []
        if check:
            report["check"] = {"unreachable": problems}
        click.echo(json.dumps(report, indent=2) if (fmt or default_format()) == "json" else _text(report))
        for problem in problems:
            click.echo(f"iceberg-lineage: unreachable: {problem}", err=True)
        return EXIT_TABLE_FAILED if problems else EXIT_OK

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


def unreachable(settings: Settings) -> list[str]:
    """One line per catalog or endpoint that cannot be reached; no catalog at all is a configuration error."""
    from iceberg_lineage.delivery.client import disabled, make_client, openlineage_configured
    from iceberg_lineage.delivery.reach import probes, writable_folder
    from iceberg_lineage.read.catalogs import catalog_unreachable, configured_catalogs

    problems = [p for p in map(catalog_unreachable, configured_catalogs()) if p is not None]
    if disabled():
        return problems
    if not openlineage_configured():
        return problems + [p for p in [writable_folder(settings.state.events_path.parent)] if p is not None]
    client = make_client()
    checks = probes(client.transport)
    client.close()
    del client  # its transports (a Kafka producer) go before the probes run
    return problems + [p for p in (probe() for probe in checks) if p is not None]


def _plain(value: Any) -> Any:
    """A value as JSON shows it (tuples as lists, mappings as objects)."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _catalogs() -> list[dict[str, str]]:
    """The configured catalogs and the file each came from (``environment``: ``PYICEBERG_CATALOG__*`` alone). With
    no ``.pyiceberg.yaml`` where PyIceberg looks and no ``PYICEBERG_*`` variable (PyIceberg reads them in any case),
    there is none, and PyIceberg's configuration (pydantic with it, about 0.3 s) is not imported to say so."""
    from iceberg_lineage.read.pyiceberg_config import ENV_PREFIX, load_pyiceberg_config, searched_files

    if not any(name.upper().startswith(ENV_PREFIX) for name in os.environ) and \
            not any(os.path.lexists(path) for path in searched_files()):
        return []
    config = load_pyiceberg_config()
    return [{"name": name, "source": config.source(name)} for name in config.catalogs]


def _transport(settings: Settings) -> str:
    """Where events would go, without building a default file transport (which would create its folder)."""
    from iceberg_lineage.delivery.client import describe_transport, disabled, make_client, openlineage_configured

    if not (disabled() or openlineage_configured()):
        return f"file {settings.state.events_path} (no OpenLineage transport configured)"
    client = make_client()
    try:
        return describe_transport(client)
    finally:
        client.close()


def _text(report: dict[str, Any]) -> str:
    rows = [(r["key"], json.dumps(r["value"]), r["source"]) for r in report["settings"]]
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    lines = [f"{k:<{widths[0]}}  {v:<{widths[1]}}  {s}" for k, v, s in rows]
    catalogs = [f"{c['name']} ({c['source']})" for c in report["catalogs"]]
    lines += ["", f"catalogs   {', '.join(catalogs) or '(none configured)'}",
              f"transport  {report['transport']}", f"state      {report['state']}", f"spool      {report['spool']}"]
    if "check" in report:
        missed = len(report["check"]["unreachable"])
        lines.append(f"check      {missed} unreachable" if missed else "check      every catalog and the endpoint reached")
    return "\n".join(lines)
