"""Entry point: table checks from metadata (``iceberg-lineage check``), a pipeline gate, and their checks runs."""
from iceberg_lineage.checks.run import (
    TableCheck, check_catalog, check_snapshot, check_table, checks_events, emit_checks,
)

__all__ = ["TableCheck", "check_catalog", "check_snapshot", "check_table", "checks_events", "emit_checks"]
