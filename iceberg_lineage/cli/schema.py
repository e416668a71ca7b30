"""The ``schema`` command: the JSON schema of one of this project's custom facets, as its ``_schemaURL`` names it.

Exit codes: 0 printed; 2 no facet of that name.
"""
from __future__ import annotations

import json
from typing import Any, Callable

import click

from iceberg_lineage.cli.common import EXIT_OK, run_guarded
from iceberg_lineage.errors import ConfigError


def facet_schemas() -> dict[str, Callable[[], dict[str, Any]]]:
    """The facets whose JSON schema this package ships, by their key in an event (openlineage-python loads only
    when the command runs)."""
    from iceberg_lineage.lineage.facets import SCAN_KEY, STATISTICS_KEY, scan_summary_schema, statistics_schema

    return {STATISTICS_KEY: statistics_schema, SCAN_KEY: scan_summary_schema}


@click.command("schema")
@click.argument("name", metavar="NAME")
def schema_command(name: str) -> None:
    """Print the JSON schema of the facet NAME (icebergTableStatistics, icebergLineageScan)."""

    def body() -> int:
        schemas = facet_schemas()
        if name not in schemas:
            raise ConfigError(f"no facet schema named {name!r}; known: {', '.join(schemas)}")
        click.echo(json.dumps(schemas[name](), indent=2))
        return EXIT_OK

    run_guarded(False, body)
