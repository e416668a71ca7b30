"""Appends each report's REST wire JSON (with ``report-type``) as one line to a file."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from scan_reporters.reports import MetricsReport, to_rest_request


class JsonlMetricsReporter:
    """Option (``initialize`` or keyword): ``path``, the file to append to (parent directories are created)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()

    def initialize(self, properties: dict[str, str]) -> None:
        if "path" not in properties:
            raise ValueError("jsonl metrics reporter needs option metrics-reporter.jsonl.path")
        self.path = Path(properties["path"])

    def report(self, report: MetricsReport) -> None:
        if self.path is None:
            raise ValueError("jsonl metrics reporter has no path")
        line = json.dumps(to_rest_request(report), separators=(",", ":")) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as out:
                out.write(line)
