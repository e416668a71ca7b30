"""Reporter protocol, the composite that isolates reporters from each other, and the registry.

Configuration follows Java: catalog property ``metrics-reporter-impl`` holds comma-separated short names
(resolved through the ``scan_reporters.reporters`` entry point group) or dotted ``module.Class`` paths.
Each reporter is built with its no-argument constructor and then, if it has one, ``initialize(properties)``
is called with the catalog properties overlaid with its own options: ``metrics-reporter.<name>.<option>``
becomes ``<option>`` (``<name>`` is the short name or the dotted path as written).
Reporters may also be constructed directly with keyword arguments; both ways are documented per reporter.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from scan_reporters.reports import MetricsReport

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.table import Table

    from scan_reporters.events import CommitOutcome, ScanOutcome, TableEvent

LOG = logging.getLogger("scan_reporters")

METRICS_REPORTER_IMPL = "metrics-reporter-impl"
OPTION_PREFIX = "metrics-reporter."
ENTRY_POINT_GROUP = "scan_reporters.reporters"
DEFAULT_REPORTER = "logging"  # Java's default when metrics-reporter-impl is unset


@runtime_checkable
class MetricsReporter(Protocol):
    """Java ``MetricsReporter``: receives every ScanReport and CommitReport.

    Optional methods, looked up by name: ``initialize(properties)``, ``close()``, ``bind_catalog(catalog)``,
    ``before_commit(table, updates) -> updates`` (called on every commit attempt, inside ``commit_table``),
    ``after_commit(CommitOutcome)``, ``on_table_event(TableEvent)``, ``after_scan(ScanOutcome)``.
    """

    def report(self, report: MetricsReport) -> None: ...


class CompositeMetricsReporter:
    """Fans out to several reporters; each reporter's exception is logged and swallowed (Java ``MetricsReporters``)."""

    def __init__(self, reporters: Iterable[MetricsReporter] = ()) -> None:
        unique: list[MetricsReporter] = []
        for reporter in reporters:
            for leaf in reporter.reporters if isinstance(reporter, CompositeMetricsReporter) else (reporter,):
                if not any(leaf is seen for seen in unique):
                    unique.append(leaf)
        self.reporters: tuple[MetricsReporter, ...] = tuple(unique)

    def _call(self, method: str, *args: Any) -> None:
        for reporter in self.reporters:
            fn = getattr(reporter, method, None)
            if fn is None:
                continue
            try:
                fn(*args)
            except Exception:  # noqa: BLE001 - a reporter must never break user code
                LOG.exception("Metrics reporter %r failed in %s", reporter, method)

    def report(self, report: MetricsReport) -> None:
        self._call("report", report)

    def after_commit(self, outcome: CommitOutcome) -> None:
        self._call("after_commit", outcome)

    def on_table_event(self, event: TableEvent) -> None:
        self._call("on_table_event", event)

    def after_scan(self, outcome: ScanOutcome) -> None:
        self._call("after_scan", outcome)

    def bind_catalog(self, catalog: Catalog) -> None:
        self._call("bind_catalog", catalog)

    def close(self) -> None:
        self._call("close")

    def before_commit(self, table: Table, updates: tuple[Any, ...]) -> tuple[Any, ...]:
        """Chain every reporter's ``before_commit``; a failing or ill-typed hook leaves the updates as they were."""
        for reporter in self.reporters:
            fn = getattr(reporter, "before_commit", None)
            if fn is None:
                continue
            try:
                result = fn(table, updates)
            except Exception:  # noqa: BLE001
                LOG.exception("Metrics reporter %r failed in before_commit; using the original updates", reporter)
                continue
            if isinstance(result, (tuple, list)):
                updates = tuple(result)
            else:
                LOG.error("Metrics reporter %r returned %r from before_commit; ignored", reporter, type(result))
        return updates

    def __repr__(self) -> str:
        return f"CompositeMetricsReporter({list(self.reporters)!r})"


def _resolve(name: str) -> type:
    """``module:Class`` or ``module.Class`` import directly; anything else is an entry point name."""
    if ":" in name or "." in name:
        module, _, attr = name.rpartition(":") if ":" in name else name.rpartition(".")
        return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]
    from importlib.metadata import entry_points

    matches = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
    if not matches:
        raise LookupError(f"no entry point {name!r} in group {ENTRY_POINT_GROUP!r}")
    return matches[0].load()


def reporter_options(properties: Mapping[str, str], name: str) -> dict[str, str]:
    """Catalog properties overlaid with the reporter's own ``metrics-reporter.<name>.<option>`` options."""
    prefix = f"{OPTION_PREFIX}{name}."
    own = {k[len(prefix) :]: v for k, v in properties.items() if k.startswith(prefix)}
    return {**{k: v for k, v in properties.items() if v is not None}, **own}


def load_reporter(name: str, properties: Mapping[str, str] | None = None) -> MetricsReporter | None:
    """Build one reporter from a short name or dotted path; ``None`` (with a logged error) if that fails."""
    try:
        reporter = _resolve(name)()
        initialize = getattr(reporter, "initialize", None)
        if initialize is not None:
            initialize(reporter_options(properties or {}, name))
        return reporter  # type: ignore[no-any-return]
    except Exception:  # noqa: BLE001 - a missing optional reporter must not break catalog loading
        LOG.exception("Could not load metrics reporter %r", name)
        return None


def load_reporters(properties: Mapping[str, str] | None = None) -> CompositeMetricsReporter:
    """Reporters named by ``metrics-reporter-impl`` (default ``logging``, as Java), as one composite."""
    props = dict(properties or {})
    names = [n.strip() for n in (props.get(METRICS_REPORTER_IMPL) or DEFAULT_REPORTER).split(",") if n.strip()]
    loaded = (load_reporter(n, props) for n in names)
    return CompositeMetricsReporter(r for r in loaded if r is not None)
