"""Instrument PyIceberg catalogs so scans produce ScanReports and commits produce CommitReports.

How it hooks in (see the reference notes on PyIceberg 0.12 for why):

* ``instrument(catalog)`` swaps ``catalog.__class__`` for a per-class dynamic subclass of
  ``(_InstrumentedCatalog, type(catalog))``. ``commit_table`` is the chokepoint of every write, evolution and
  maintenance API, and tables already loaded from the catalog hold that very object, so they are covered.
  A delegating proxy would miss commits; the mixin derives from ``Catalog`` so the ``__class__`` swap is legal.
  ``create_table``, ``register_table``, ``drop_table``, ``purge_table`` and ``rename_table`` bypass
  ``commit_table`` and are wrapped for ``TableEvent`` notifications.
* Commits (:mod:`scan_reporters.commit_tracking`): one report per logical commit across PyIceberg's retries, from
  the snapshot summaries of the committed metadata. Reporters' ``before_commit`` runs inside ``commit_table`` on
  every attempt. Schema/spec/property-only commits add no snapshot and therefore, as in Java, no CommitReport, but
  they do reach ``after_commit``.
* Scans (:mod:`scan_reporters.scan_patching`): ``DataScan.plan_files``, patched once, process-wide, acts only for
  instrumented catalogs.
* ``install()`` instruments every catalog constructed from then on, however it is made (``load_catalog``,
  ``SqlCatalog(...)``, ``GlueCatalog(...)``, a class of one's own) and whatever was imported before: every catalog
  passes through PyIceberg's ``Catalog`` constructor. The ``__init__`` of ``Catalog`` and of each of its subclasses,
  present and future (through ``Catalog.__init_subclass__``), is wrapped; a catalog is instrumented once, when its
  outermost constructor returns, so that its subclass has finished setting it up.
"""

from __future__ import annotations

import functools
import logging
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from pyiceberg.catalog import Catalog

from scan_reporters.commit_tracking import (
    _STATE_ATTR, _CatalogState, _commit_transaction, _InstrumentedCatalog, _state, table_name,
)
from scan_reporters.reporters.base import CompositeMetricsReporter, MetricsReporter, load_reporters
from scan_reporters.scan_patching import _plan_files, _scan_update, _table_scan

__all__ = ["install", "instrument", "is_instrumented", "table_name", "uninstall", "uninstrument"]

LOG = logging.getLogger("scan_reporters")
_LOCK = threading.RLock()


def _engine_metadata() -> dict[str, str]:
    """Java puts ``EnvironmentContext`` into every report's metadata; this is PyIceberg's equivalent."""
    import pyiceberg

    return {"engine-name": "pyiceberg", "engine-version": str(pyiceberg.__version__)}


_SUBCLASSES: dict[type, type] = {}


def _instrumented_class(cls: type) -> type:
    with _LOCK:
        if cls not in _SUBCLASSES:
            _SUBCLASSES[cls] = type(f"Instrumented{cls.__name__}", (_InstrumentedCatalog, cls), {"__module__": __name__})
        return _SUBCLASSES[cls]


def _patch_targets() -> list[tuple[Any, str, Any]]:
    from pyiceberg.table import DataScan, Table, Transaction

    return [
        (DataScan, "plan_files", _plan_files),
        (DataScan, "update", _scan_update),
        (Table, "scan", _table_scan),
        (Transaction, "commit_transaction", _commit_transaction),
    ]


_ORIGINALS: dict[tuple[Any, str], Any] = {}  # (owner, name) -> own attribute before patching, or None
_LIVE: weakref.WeakSet[Catalog] = weakref.WeakSet()  # every instrumented catalog
_INSTALLED: weakref.WeakSet[Catalog] = weakref.WeakSet()  # those instrumented by install()
_INSTALL: _Install | None = None  # what install() changed, while installed


def _ensure_patched() -> None:
    """Install the class-level wrappers once; they are inert for catalogs that are not instrumented."""
    with _LOCK:
        for owner, name, wrap in _patch_targets():
            if (owner, name) not in _ORIGINALS:
                _ORIGINALS[(owner, name)] = owner.__dict__.get(name)
                setattr(owner, name, wrap(getattr(owner, name)))


def _unpatch_if_unused() -> None:
    with _LOCK:
        if _LIVE or _INSTALL is not None:
            return
        for (owner, name), own in _ORIGINALS.items():
            if own is None:
                delattr(owner, name)
            else:
                setattr(owner, name, own)
        _ORIGINALS.clear()


# ------------------------------------------------------------------------------------------- construction


@dataclass
class _Install:
    """What ``install()`` changed: the instrumenter, and each class's own ``__init__`` before it was wrapped (and
    ``Catalog.__init_subclass__``, which PyIceberg does not define: tests/scan_reporters pin that)."""

    instrumenter: Callable[[Catalog], Any] | None
    constructors: dict[type, Any]


_BUILDING = threading.local()  # ids of the catalogs whose constructor runs on this thread


def _constructor(original: Any) -> Any:
    """``original`` (a Catalog class's own ``__init__``), instrumenting the catalog when the outermost constructor
    returns: ``SqlCatalog.__init__`` calls ``MetastoreCatalog.__init__``, which calls ``Catalog.__init__``."""

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        building = _BUILDING.__dict__.setdefault("ids", set())
        outermost = id(self) not in building
        building.add(id(self))
        try:
            original(self, *args, **kwargs)
        finally:
            if outermost:
                building.discard(id(self))
        if outermost:
            _constructed(self)

    return __init__


def _constructed(catalog: Catalog) -> None:
    install = _INSTALL
    if install is None:
        return
    try:
        (install.instrumenter or instrument)(catalog)
        if is_instrumented(catalog):
            with _LOCK:
                _INSTALLED.add(catalog)
    except Exception:  # noqa: BLE001 - never break catalog construction
        LOG.exception("Could not instrument catalog %s", getattr(catalog, "name", None))


def _wrap_constructor(install: _Install, cls: type) -> None:
    own = cls.__dict__.get("__init__")
    if own is not None and cls not in install.constructors:
        install.constructors[cls] = own
        setattr(cls, "__init__", _constructor(own))


def _catalog_classes() -> Iterator[type]:
    pending: list[type] = [Catalog]
    while pending:
        cls = pending.pop()
        yield cls
        pending.extend(cls.__subclasses__())


@classmethod  # type: ignore[misc]
def _init_subclass(cls: type, **kwargs: Any) -> None:
    """``Catalog.__init_subclass__`` while installed: a class defined later gets its constructor wrapped too."""
    super(Catalog, cls).__init_subclass__(**kwargs)  # type: ignore[misc]
    with _LOCK:
        if _INSTALL is not None:
            _wrap_constructor(_INSTALL, cls)


# ------------------------------------------------------------------------------------------- public API


def instrument(catalog: Catalog, reporter: MetricsReporter | None = None) -> Catalog:
    """Make ``catalog`` (and tables already loaded from it) report scans and commits; returns it.

    ``reporter`` defaults to the reporters named by the catalog's ``metrics-reporter-impl`` property
    (``logging`` when unset, as in Java). Instrumenting again only replaces the reporter when one is given,
    so nothing is ever reported twice.
    """
    with _LOCK:
        state = _state(catalog)
        if state is not None and reporter is None:
            return catalog
        composite = CompositeMetricsReporter([reporter] if reporter is not None else load_reporters(catalog.properties).reporters)
        composite.bind_catalog(catalog)
        if state is not None:
            state.reporter = composite
            return catalog
        original = type(catalog)
        catalog.__class__ = _instrumented_class(original)
        setattr(catalog, _STATE_ATTR, _CatalogState(composite, original, _engine_metadata()))
        _LIVE.add(catalog)
        _ensure_patched()
        return catalog


def uninstrument(catalog: Catalog) -> Catalog:
    """Undo ``instrument``; the catalog's reporters are closed. Safe on a catalog never instrumented."""
    with _LOCK:
        state = _state(catalog)
        if state is None:
            return catalog
        catalog.__class__ = state.original_class
        delattr(catalog, _STATE_ATTR)
        _INSTALLED.discard(catalog)
        _LIVE.discard(catalog)
        _unpatch_if_unused()
    state.reporter.close()
    return catalog


def install(instrumenter: Callable[[Catalog], Any] | None = None) -> None:
    """Instrument every catalog constructed from now on, however it is made (see the module docstring).

    Each is instrumented with the reporters named in its ``metrics-reporter-impl`` property, or by
    ``instrumenter(catalog)`` when one is given. Installing again only replaces the instrumenter when one is given.
    Catalogs constructed before ``install()`` are left as they are.
    """
    global _INSTALL
    with _LOCK:
        if _INSTALL is not None:
            _INSTALL.instrumenter = instrumenter or _INSTALL.instrumenter
            return
        _INSTALL = _Install(instrumenter, {})
        for cls in _catalog_classes():
            _wrap_constructor(_INSTALL, cls)
        setattr(Catalog, "__init_subclass__", _init_subclass)
        _ensure_patched()


def uninstall() -> None:
    """Restore the catalogs' constructors and uninstrument the catalogs ``install`` instrumented."""
    global _INSTALL
    with _LOCK:
        install, _INSTALL = _INSTALL, None
        if install is not None:
            for cls, own in install.constructors.items():
                setattr(cls, "__init__", own)
            delattr(Catalog, "__init_subclass__")
        for catalog in list(_INSTALLED):
            uninstrument(catalog)
        _unpatch_if_unused()


def is_instrumented(catalog: Catalog) -> bool:
    return _state(catalog) is not None
