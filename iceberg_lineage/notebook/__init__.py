"""Iceberg lineage in Jupyter: attach a catalog in one line, then look at events, statistics and plots.

    from iceberg_lineage.notebook import attach
    session = attach(catalog)        # commits and scans now emit OpenLineage events
    session.events                   # what was sent, as a table; session.events[-1]: one event as JSON
    session.jobs()                   # runs and failure rates per job; jobs("events.jsonl") for a file
    %load_ext iceberg_lineage        # %lineage status | events | stats ns.table

Plots need the ``notebook`` extra (matplotlib).
"""
from iceberg_lineage.jobs import JobsReport, read_jobs as jobs
from iceberg_lineage.notebook.html import event_html, events_html, history_html, snapshot_html
from iceberg_lineage.notebook.magic import load_ipython_extension
from iceberg_lineage.stats.plots import columns_plot, file_sizes_plot, history_plot
from iceberg_lineage.notebook.scan import ScanPreview, preview_scan
from iceberg_lineage.notebook.session import (
    EmittedEvent, EventLog, JsonDocument, Session, SessionStatus, attach, current_session,
)

#: The name of :class:`SessionStatus` before it was renamed (other modules have a ``Status`` too).
Status = SessionStatus

__all__ = [
    "EmittedEvent",
    "EventLog",
    "JsonDocument",
    "JobsReport",
    "ScanPreview",
    "Session",
    "SessionStatus",
    "Status",
    "attach",
    "columns_plot",
    "current_session",
    "event_html",
    "events_html",
    "file_sizes_plot",
    "history_html",
    "history_plot",
    "jobs",
    "load_ipython_extension",
    "preview_scan",
    "snapshot_html",
]
