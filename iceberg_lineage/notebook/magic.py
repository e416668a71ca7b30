"""``%load_ext iceberg_lineage``: the ``%lineage`` line magic about the latest :func:`attach` session.

    %lineage status            client, transport, events emitted, delivered, spooled and failed
    %lineage events            the table of emitted events
    %lineage stats ns.table    statistics, history and plots of a table of the attached catalog
"""
from __future__ import annotations

from typing import Any

from iceberg_lineage.notebook.html import history_html, snapshot_html
from iceberg_lineage.notebook.session import current_session
from iceberg_lineage.stats import snapshot_stats, table_history

USAGE = "usage: %lineage status | events | stats NAMESPACE.TABLE"


def lineage(line: str) -> Any:
    """The ``%lineage`` magic: returns what Jupyter should show (``stats`` displays several objects itself)."""
    from IPython.core.error import UsageError

    command, _, argument = line.strip().partition(" ")
    if command not in ("status", "events", "stats") or (command == "stats") != bool(argument.strip()):
        raise UsageError(USAGE)
    session = current_session()
    if session is None:
        raise UsageError("no session: call iceberg_lineage.notebook.attach(catalog) first")
    if command == "status":
        return session.status()
    if command == "events":
        return session.events
    show_table(session.catalog.load_table(argument.strip()))
    return None


def show_table(table: Any) -> None:
    """Display a table's current snapshot, its history and the three plots."""
    from IPython.display import HTML, display

    from iceberg_lineage.stats.plots import columns_plot, file_sizes_plot, history_plot

    history = table_history(table)
    current = snapshot_stats(table)
    display(HTML(snapshot_html(current)), HTML(history_html(history)), history_plot(history),
            columns_plot(current), file_sizes_plot(current))


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%lineage``."""
    ipython.register_magic_function(lineage, magic_kind="line", magic_name="lineage")
