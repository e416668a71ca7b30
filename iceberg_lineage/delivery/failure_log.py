"""Lineage failures are logged once per kind: the hook, the emitter and the bridge must never flood a user's log,
nor break the user's operation."""
from __future__ import annotations

import logging
import threading


class FailureLog:
    """Lineage failures are logged once per kind, with their cause, then only at debug level."""

    def __init__(self, logger: logging.Logger) -> None:
        self._logger = logger
        self._seen: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def __call__(self, what: str, exc: BaseException) -> None:
        key = (what, type(exc).__name__)
        with self._lock:
            first = key not in self._seen
            self._seen.add(key)
        if not first:
            self._logger.debug("%s failed again: %s", what, exc, exc_info=exc)
            return
        self._logger.warning("iceberg-lineage: %s failed (%s: %s); the user's operation is unaffected", what,
                             type(exc).__name__, exc, exc_info=exc)
