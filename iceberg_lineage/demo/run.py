"""``make run``: fill the embedded default catalog (``./warehouse``) with demo tables, then scan it.

The first run writes several tables with tens of commits (appends, an overwrite, a delete, a schema change) with
plain PyIceberg, plus one table written under the hook; the scan then emits every plain snapshot and counts the
hooked ones as already emitted. Every later run adds one commit per table, so its scan emits exactly those. It
prints one row per table, the scan's summary (where the events went) and two commands to try next. Its state, spool
and events stay in the folder it runs in (``./.iceberg-lineage``), apart from the user's own (docs/state.md).
"""
from __future__ import annotations

import os
import sys

from iceberg_lineage.config import load_settings
from iceberg_lineage.demo.report import demo_rows, next_steps, table_text
from iceberg_lineage.demo.tables import write_demo_table
from iceberg_lineage.hook.reporter import observe
from iceberg_lineage.read.catalogs import WAREHOUSE, embedded_catalog, embedded_sql_catalog
from iceberg_lineage.scan import ScanOptions, scan_catalogs
from iceberg_lineage.scan.summary import TableOutcome, summary_text

#: The demo's own state folder: its watermarks, spool and events never mix with the user's.
DEMO_STATE = ".iceberg-lineage"
#: (identifier, commits on first run); a nested namespace shows that discovery walks below the top level.
PLAIN_TABLES: tuple[tuple[str, int], ...] = (
    ("demo.orders", 14),
    ("demo.sales.customers", 10),
    ("demo.sales.returns", 8),
    ("analytics.daily_revenue", 12),
)
#: Written through ``iceberg_lineage.observe(catalog)``: its snapshots carry the hook's run id.
HOOKED_TABLE = "demo.hooked_orders"
HOOKED_COMMITS = 3


def _one_more_commit(table) -> None:
    """Append a few of the table's own rows again: a new snapshot with the table's current schema."""
    table.append(table.scan(limit=5).to_arrow())


def fill_demo(catalog, observed_catalog) -> None:
    """Create the demo tables, or add one commit to each when they exist (a re-run)."""
    for identifier, commits in PLAIN_TABLES:
        if catalog.table_exists(identifier):
            _one_more_commit(catalog.load_table(identifier))
        else:
            write_demo_table(catalog, identifier, commits=commits)
    if observed_catalog.table_exists(HOOKED_TABLE):
        _one_more_commit(observed_catalog.load_table(HOOKED_TABLE))
        return
    seed = catalog.load_table(PLAIN_TABLES[0][0]).scan(limit=20).to_arrow()
    hooked = observed_catalog.create_table(HOOKED_TABLE, schema=seed.schema)
    for _ in range(HOOKED_COMMITS):
        hooked.append(seed)


def main() -> int:
    os.environ.setdefault("PYICEBERG_DOWNCAST_NS_TIMESTAMP_TO_US_ON_WRITE", "true")
    os.environ.setdefault("ICEBERG_LINEAGE__STATE__PATH", f"{DEMO_STATE}/state.db")  # the hook's and the scan's
    os.environ.setdefault("ICEBERG_LINEAGE__SPOOL__PATH", f"{DEMO_STATE}/spool")
    observed = observe(embedded_sql_catalog())
    fill_demo(embedded_sql_catalog(), observed)
    print(f"demo tables written to {WAREHOUSE.resolve()}", file=sys.stderr)
    settings = load_settings()
    outcomes: dict[str, TableOutcome] = {}
    summary, events_to = scan_catalogs(ScanOptions(catalogs=(embedded_catalog(),)), settings, wait=True,
                                       observer=lambda outcome: outcomes.setdefault(outcome.name, outcome))
    identifiers = [identifier for identifier, _ in PLAIN_TABLES] + [HOOKED_TABLE]
    rows = demo_rows(embedded_sql_catalog(), identifiers, outcomes)
    print(f"{table_text(rows)}\n\n{summary_text(summary, events_to)}\n\n{next_steps(PLAIN_TABLES[0][0])}",
          file=sys.stderr)
    return summary.exit_code

