"""Keeps every report and observer payload in memory; for tests and notebooks."""

from __future__ import annotations

import threading
from typing import Any

from scan_reporters.events import CommitOutcome, ScanOutcome, TableEvent
from scan_reporters.reports import CommitReport, MetricsReport, ScanReport


class InMemoryMetricsReporter:
    """Thread-safe lists of reports, commit outcomes, table events and scan outcomes. No options."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reports: list[MetricsReport] = []
        self.commit_outcomes: list[CommitOutcome] = []
        self.table_events: list[TableEvent] = []
        self.scan_outcomes: list[ScanOutcome] = []

    def _add(self, target: list[Any], item: Any) -> None:
        with self._lock:
            target.append(item)

    def report(self, report: MetricsReport) -> None:
        self._add(self.reports, report)

    def after_commit(self, outcome: CommitOutcome) -> None:
        self._add(self.commit_outcomes, outcome)

    def on_table_event(self, event: TableEvent) -> None:
        self._add(self.table_events, event)

    def after_scan(self, outcome: ScanOutcome) -> None:
        self._add(self.scan_outcomes, outcome)

    @property
    def scan_reports(self) -> list[ScanReport]:
        return [r for r in self.reports if isinstance(r, ScanReport)]

    @property
    def commit_reports(self) -> list[CommitReport]:
        return [r for r in self.reports if isinstance(r, CommitReport)]

    def clear(self) -> None:
        with self._lock:
            for target in (self.reports, self.commit_outcomes, self.table_events, self.scan_outcomes):
                target.clear()
