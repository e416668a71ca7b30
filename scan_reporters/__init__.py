"""Java-compatible scan and commit metrics reporting for PyIceberg (apache/iceberg-python#847).

Depends on ``pyiceberg`` and the standard library only (``requests``, a PyIceberg dependency, for the
REST reporter); it never imports ``iceberg_lineage``.

    import scan_reporters
    scan_reporters.instrument(catalog)          # one catalog, reporters from metrics-reporter-impl
    scan_reporters.install()                    # every catalog constructed from now on, however it is made

Importing the package imports nothing of PyIceberg: each name is imported from its submodule at first use
(``instrument`` brings ``pyiceberg.catalog``, about a second cold), so a program that only reads reports, or the
CLI building events of commits, does not pay for it. ``instrument`` and ``sanitize`` share their names with
submodules; the package keeps the functions bound under those names, as an eager import did.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

#: Each public name and the submodule it comes from.
_EXPORTS = {
    "commit_metrics_from_summary": "commit_metrics",
    "commit_report_from_snapshot": "commit_metrics",
    "commit_report_from_values": "commit_metrics",
    "CommitOutcome": "events",
    "ScanOutcome": "events",
    "TableEvent": "events",
    "install": "instrument",
    "instrument": "instrument",
    "is_instrumented": "instrument",
    "uninstall": "instrument",
    "uninstrument": "instrument",
    "CompositeMetricsReporter": "reporters.base",
    "MetricsReporter": "reporters.base",
    "load_reporter": "reporters.base",
    "load_reporters": "reporters.base",
    "CommitMetricsResult": "reports",
    "CommitReport": "reports",
    "CounterResult": "reports",
    "ScanMetricsResult": "reports",
    "ScanReport": "reports",
    "TimerResult": "reports",
    "from_rest_request": "reports",
    "to_rest_request": "reports",
    "sanitize": "sanitize",
    "scan_report": "scan_metrics",
}


def __getattr__(name: str) -> Any:
    """A public name, imported from its submodule at first use and kept."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    """The package module: the import system binds each submodule imported on its package, which would put the
    modules ``instrument`` and ``sanitize`` where the functions of the same names belong."""

    def __setattr__(self, name: str, value: Any) -> None:
        if _EXPORTS.get(name) == name and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

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
