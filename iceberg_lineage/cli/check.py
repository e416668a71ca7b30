"""The ``check`` command: a table's rules at a snapshot, one line per assertion, and an exit code that makes it a
pipeline gate (0: every error-severity assertion passed; 1: one failed or was unknown, or a table could not be read;
2: usage or configuration error). ``--emit`` sends each table's checks run through the one delivery path; with it,
3 says the gate passed and the runs' events wait in the spool for ``replay`` (a failed gate stays 1)."""
from __future__ import annotations

import json
from typing import Any

import click

from iceberg_lineage.cli.common import (
    EXIT_OK, EXIT_TABLE_FAILED, debug_option, default_format, delivery_exit_code, metadata_option, most_serious,
    parse_relocate, profile_option, relocate_option, run_guarded, table_option,
)
from iceberg_lineage.errors import ConfigError
from iceberg_lineage.printable import markup_safe, printable


@click.command("check")
@metadata_option
@click.option("--catalog", metavar="NAME", help="PyIceberg catalog name; without --table, every table in it.")
@table_option
@click.option("--namespace", "namespaces", multiple=True, metavar="NS",
              help="With --catalog and no --table: only the tables under NS (repeatable).")
@click.option("--snapshot", type=int, metavar="ID", help="Snapshot to check (default: the current one).")
@click.option("--rules", "rules_file", metavar="FILE",
              help="YAML with a `checks:` list, instead of the configuration's.")
@click.option("--emit", is_flag=True, help="Send each table's checks run (job <ns>.<table>.checks) to OpenLineage "
                                          "(exit 3 if they wait in the spool).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default=None,
              help="text (a table) is the default on a terminal, json (one object per assertion) otherwise.")
@relocate_option
@profile_option
@debug_option
def check_command(metadata, catalog, table, namespaces, snapshot, rules_file, emit, fmt, relocate, profile,
                  debug) -> None:
    """Check tables against their rules, from metadata only: a gate for pipelines."""

    def body() -> int:
        from iceberg_lineage.config import load_settings

        settings = load_settings(flags={"consumer.profile": profile})
        config = _config(settings, rules_file)
        results = list(_results(metadata, catalog, table, namespaces, snapshot, relocate, settings, config))
        _print(results, fmt or default_format())
        gate = EXIT_TABLE_FAILED if any(r.blocks for r in results) else EXIT_OK
        return most_serious(gate, _emit(results, settings)) if emit else gate

    run_guarded(debug, body)


def _config(settings: Any, rules_file: str | None) -> Any:
    """The ``checks:`` entries of ``--rules`` (a mapping with ``checks``, or the list itself), else the settings'."""
    from iceberg_lineage.quality.rules import checks_config, read_checks_file

    return checks_config(settings.checks) if rules_file is None else read_checks_file(rules_file)


def _results(metadata, catalog, table, namespaces, snapshot, relocate, settings, config):
    from iceberg_lineage.checks import TableCheck, check_catalog, check_table
    from iceberg_lineage.errors import IcebergLineageError

    reloc = parse_relocate(relocate)
    if metadata and (catalog or table or namespaces):
        raise ConfigError("use either --metadata or --catalog, not both")
    if metadata or table:
        if table and not catalog:
            raise ConfigError("--table needs --catalog")
        if namespaces:
            raise ConfigError("--namespace walks a catalog: use it without --table")
        ref, where = (metadata, {}) if metadata else (table, {"catalog": catalog})
        try:
            yield check_table(ref, settings, snapshot_id=snapshot, config=config, relocate=reloc, **where)
        except ConfigError:  # no such catalog, or a broken configuration: not a table that failed its checks
            raise
        except IcebergLineageError as exc:
            yield TableCheck(metadata or table, error=exc.one_line())
        return
    if not catalog:
        raise ConfigError("give --metadata PATH, --catalog NAME --table NS.TABLE, or --catalog NAME [--namespace NS]")
    if snapshot is not None:
        raise ConfigError("--snapshot needs one table (--metadata, or --catalog with --table)")
    from iceberg_lineage.read.catalogs import configured_catalogs

    yield from check_catalog(configured_catalogs([catalog])[0].load(), settings, namespaces=namespaces, config=config)


_COLUMNS = ("rule", "column", "severity", "result", "expected", "actual")
_STYLES = {"fail": "red", "warn": "yellow", "unknown": "red", "pass": "green", "n/a": "dim"}


def _row(r: Any, a: Any) -> dict[str, Any]:
    return {"table": r.table, "snapshot_id": r.snapshot_id, **a.as_json(), "status": a.status}


def _print(results: list, fmt: str) -> None:
    """JSON: one object per assertion. Text: a table per table checked, FAIL in red (error severity), WARN in yellow
    (a failed warn-severity rule: the gate stays open), UNKNOWN in red or yellow by severity."""
    for r in results:
        if r.error is not None:
            click.echo(f"iceberg-lineage: error: {printable(r.error)}", err=True)
    if fmt == "json":
        for r in results:
            for a in r.assertions:
                click.echo(json.dumps(_row(r, a), sort_keys=False, default=str))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for r in results:
        if r.error is not None:
            continue
        at = f"snapshot {r.snapshot_id}" if r.snapshot_id is not None else "no snapshot"
        grid = Table(title=f"{markup_safe(r.table)} · {at}", title_justify="left", show_header=True)
        for heading in _COLUMNS:
            grid.add_column(heading)
        for a in r.assertions:
            style = "yellow" if a.status == "unknown" and not a.blocks else _STYLES[a.status]
            cells = (a.name, a.column or "", a.severity, a.status.upper(), a.expected, a.actual)
            grid.add_row(*(markup_safe(c) for c in cells), style=style)
        console.print(grid)


def _emit(results: list, settings: Any) -> int:
    """Send the checks runs; the delivery's exit code (3: they wait in the spool; 1: one was lost or refused)."""
    from iceberg_lineage.checks import emit_checks

    stats = emit_checks(results, settings)
    click.echo(f"iceberg-lineage: checks runs' events (START, COMPLETE): {stats.delivered} delivered, "
               f"{stats.spooled} spooled, {stats.failed} failed", err=True)
    return delivery_exit_code(stats)
