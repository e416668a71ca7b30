"""The catalog scanner, the entry point for tables written by any engine: :mod:`~.discovery` lists the tables,
:mod:`~.task` builds one table's events on any executor, :mod:`~.driver` delivers them in commit order and advances
the watermarks (with :mod:`~.lifecycle` for RENAMEs and DROPs), :mod:`~.sinks` says where events go, and
:mod:`~.summary` reports the scan. :func:`scan_catalogs` (:mod:`~.run`) is the whole scan with its I/O wired:

    from iceberg_lineage.read.catalogs import configured_catalogs
    from iceberg_lineage.scan import ScanOptions, scan_catalogs
    summary, events_to = scan_catalogs(ScanOptions(catalogs=configured_catalogs(["lake"])))
"""
from iceberg_lineage.scan.discovery import TableFilter
from iceberg_lineage.scan.driver import ScanOptions
from iceberg_lineage.scan.run import scan_catalogs
from iceberg_lineage.scan.summary import ScanSummary, TableOutcome

__all__ = ["ScanOptions", "ScanSummary", "TableFilter", "TableOutcome", "scan_catalogs"]
