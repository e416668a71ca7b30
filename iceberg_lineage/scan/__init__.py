"""The catalog scanner, the entry point for tables written by any engine: :mod:`~.discovery` lists the tables,
:mod:`~.task` builds one table's events on any executor, :mod:`~.driver` delivers them in commit order and advances
the watermarks (with :mod:`~.lifecycle` for RENAMEs and DROPs), :mod:`~.sinks` says where events go, and
:mod:`~.summary` reports the scan. :func:`scan_catalogs` (:mod:`~.run`) is the whole scan with its I/O wired:

    from iceberg_lineage.read.catalogs import configured_catalogs
    from iceberg_lineage.scan import ScanOptions, scan_catalogs
    summary, events_to = scan_catalogs(ScanOptions(catalogs=configured_catalogs(["lake"])))

Names load on first use, so importing one module of the package (the driver, for the API's scan) does not import
the command's state and spool wiring.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from iceberg_lineage.lazy import lazy_exports

if TYPE_CHECKING:
    from iceberg_lineage.scan.discovery import TableFilter
    from iceberg_lineage.scan.driver import ScanOptions
    from iceberg_lineage.scan.run import scan_catalogs
    from iceberg_lineage.scan.summary import ScanSummary, TableOutcome

_LAZY = {"TableFilter": "iceberg_lineage.scan.discovery", "ScanOptions": "iceberg_lineage.scan.driver",
         "scan_catalogs": "iceberg_lineage.scan.run", "ScanSummary": "iceberg_lineage.scan.summary",
         "TableOutcome": "iceberg_lineage.scan.summary"}
__all__ = sorted(_LAZY)
__getattr__ = lazy_exports(__name__, _LAZY, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
