"""The ``schema`` command: the JSON schema of one of this project's custom facets, as its ``_schemaURL`` names it.

The schemas are the files the package ships (``iceberg_lineage/schemas``), each naming its facet's key as its one
top-level property; they are read as they are, without openlineage-python (about 0.3 s to import), which only the
facets' classes need.

Exit codes: 0 printed; 2 no facet of that name.
"""
from __future__ import annotations

import json
from importlib import resources
from typing import Any

import click

from iceberg_lineage.cli.common import EXIT_OK, run_guarded
from iceberg_lineage.errors import ConfigError


def facet_schemas() -> dict[str, dict[str, Any]]:
    """The JSON schema of each facet this package ships one for, by the facet's key in an event."""
    schemas = {}
    for entry in resources.files("iceberg_lineage").joinpath("schemas").iterdir():
        if entry.name.endswith(".json"):
            schema = json.loads(entry.read_text("utf-8"))
            (key,) = schema["properties"]
            schemas[key] = schema
    return dict(sorted(schemas.items()))


@click.command("schema")
@click.argument("name", metavar="NAME")
def schema_command(name: str) -> None:
    """Print the JSON schema of the facet NAME (icebergTableStatistics, icebergLineageScan)."""

    def body() -> int:
        schemas = facet_schemas()
        if name not in schemas:
            raise ConfigError(f"no facet schema named {name!r}; known: {', '.join(schemas)}")
        click.echo(json.dumps(schemas[name], indent=2))
        return EXIT_OK

    run_guarded(False, body)
