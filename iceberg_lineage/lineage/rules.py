"""Which rules check a table: the table's dotted name matched against the ``checks`` configuration. Apart from the
checks run's builders (:mod:`iceberg_lineage.lineage.checks`) so that ``check`` without ``--emit`` does not import
openlineage-python."""
from __future__ import annotations

from iceberg_lineage.config import Settings
from iceberg_lineage.lineage.naming import table_parts
from iceberg_lineage.quality.rules import ChecksConfig, RuleSet, checks_config
from iceberg_lineage.read.source import LoadedTable


def dotted_name(table: LoadedTable) -> str:
    """The dotted name check globs match and alerts print (``mart.orders``; a bare metadata file: its directory)."""
    namespace, name = table_parts(table)
    return ".".join((*namespace, name))


def rules_for(table: LoadedTable, settings: Settings, config: ChecksConfig | None = None) -> RuleSet:
    """The table's rules: from ``config`` (else the ``checks`` setting), the default set when none names it."""
    return (config or checks_config(settings.checks)).rules_for(dotted_name(table))


__all__ = ["dotted_name", "rules_for"]
