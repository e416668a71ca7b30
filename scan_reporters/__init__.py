"""Java-compatible scan and commit metrics reporting for PyIceberg (apache/iceberg-python#847).

Depends on ``pyiceberg`` and the standard library only (``requests``, a PyIceberg dependency, for the
REST reporter); it never imports ``iceberg_lineage``.

    import scan_reporters
    scan_reporters.instrument(catalog)          # one catalog, reporters from metrics-reporter-impl
    scan_reporters.install()                    # every catalog constructed from now on, however it is made

Importing the package imports ``pyiceberg.catalog`` (about a second, cold): the functions ``instrument`` and
``sanitize`` share their names with submodules, and only an eager import keeps the functions, not the
submodules, bound on the package.
"""

from scan_reporters.commit_metrics import (
    commit_metrics_from_summary,
    commit_report_from_snapshot,
    commit_report_from_values,
)
from scan_reporters.events import CommitOutcome, ScanOutcome, TableEvent
from scan_reporters.instrument import install, instrument, is_instrumented, uninstall, uninstrument
from scan_reporters.reporters.base import CompositeMetricsReporter, MetricsReporter, load_reporter, load_reporters
from scan_reporters.reports import (
    CommitMetricsResult,
    CommitReport,
    CounterResult,
    ScanMetricsResult,
    ScanReport,
    TimerResult,
    from_rest_request,
    to_rest_request,
)
from scan_reporters.sanitize import sanitize
from scan_reporters.scan_metrics import scan_report

__all__ = [
    "CommitMetricsResult",
    "CommitOutcome",
    "CommitReport",
    "CompositeMetricsReporter",
    "CounterResult",
    "MetricsReporter",
    "ScanMetricsResult",
    "ScanOutcome",
    "ScanReport",
    "TableEvent",
    "TimerResult",
    "commit_metrics_from_summary",
    "commit_report_from_snapshot",
    "commit_report_from_values",
    "from_rest_request",
    "install",
    "instrument",
    "is_instrumented",
    "load_reporter",
    "load_reporters",
    "sanitize",
    "scan_report",
    "to_rest_request",
    "uninstall",
    "uninstrument",
]
