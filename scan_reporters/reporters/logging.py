"""Java ``LoggingMetricsReporter``: one INFO line per report."""

from __future__ import annotations

import json
import logging

from scan_reporters.reports import MetricsReport, to_rest_request


class LoggingMetricsReporter:
    """Logs ``Received metrics report: <wire JSON>`` on one line.

    Option (``initialize`` or keyword): ``logger``, the logger name (default ``scan_reporters.metrics``).
    """

    def __init__(self, logger: str = "scan_reporters.metrics") -> None:
        self._log = logging.getLogger(logger)

    def initialize(self, properties: dict[str, str]) -> None:
        if "logger" in properties:
            self._log = logging.getLogger(properties["logger"])

    def report(self, report: MetricsReport) -> None:
        self._log.info("Received metrics report: %s", json.dumps(to_rest_request(report), separators=(",", ":")))
