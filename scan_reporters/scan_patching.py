"""Scan patching: ``DataScan.plan_files`` reports the scans of instrumented catalogs.

``plan_files`` is patched once, process-wide, but acts only when ``scan.catalog`` is an instrumented catalog; all of
``plan_files``/``to_arrow``/``to_pandas``/``to_arrow_batch_reader``/``count`` plan exactly once through it, so one
execution gives one report. Server-side (REST) planning is left alone and reports nothing, as in Java.
``Table.scan`` and ``DataScan.update`` carry the originating ``Table`` to the scan for ``ScanOutcome.table``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scan_reporters.commit_tracking import _state, table_name
from scan_reporters.events import ScanOutcome

if TYPE_CHECKING:
    from pyiceberg.table import DataScan, Table

LOG = logging.getLogger("scan_reporters")
_TABLE_ATTR = "_scan_reporters_table"


def _table_of(scan: DataScan) -> Any:
    table = scan.__dict__.get(_TABLE_ATTR)
    if table is not None:
        return table
    from pyiceberg.table import Table

    return Table(
        identifier=scan.table_identifier or (),
        metadata=scan.table_metadata,
        metadata_location="",
        io=scan.io,
        catalog=scan.catalog,  # type: ignore[arg-type]
    )


def _plan_files(original: Any) -> Any:
    def plan_files(self: DataScan) -> Any:
        state = _state(self.catalog)
        if state is None or self.table_identifier is None or self._should_use_server_side_planning():
            return original(self)
        from scan_reporters.scan_metrics import plan_with_report

        catalog = self.catalog
        assert catalog is not None
        try:
            planned = plan_with_report(self, table_name(catalog, tuple(self.table_identifier)), state.metadata)
        except Exception:  # noqa: BLE001 - fall back to PyIceberg untouched (it raises the same error, if any)
            LOG.exception("Scan metrics planning failed; planning without a report")
            return original(self)
        if planned.report is not None and planned.snapshot_id is not None:
            try:
                state.reporter.report(planned.report)
                metrics = planned.report.scan_metrics.values()
                state.reporter.after_scan(
                    ScanOutcome(
                        table=_table_of(self),
                        snapshot_id=planned.snapshot_id,
                        report=planned.report,
                        row_filter=self.row_filter,
                        result_data_files=metrics["result-data-files"],
                        result_file_size_in_bytes=metrics["total-file-size-in-bytes"],
                        result_records=planned.result_records,
                    )
                )
            except Exception:  # noqa: BLE001
                LOG.exception("Failed to report scan of %s", self.table_identifier)
        if planned.error is not None:
            raise planned.error
        return planned.tasks

    plan_files.__wrapped__ = original  # type: ignore[attr-defined]
    return plan_files


def _table_scan(original: Any) -> Any:
    def scan(self: Table, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        if _state(self.catalog) is not None:
            result.__dict__[_TABLE_ATTR] = self
        return result

    scan.__wrapped__ = original  # type: ignore[attr-defined]
    return scan


def _scan_update(original: Any) -> Any:
    def update(self: Any, **overrides: Any) -> Any:
        result = original(self, **overrides)
        if _TABLE_ATTR in self.__dict__:
            result.__dict__[_TABLE_ATTR] = self.__dict__[_TABLE_ATTR]
        return result

    update.__wrapped__ = original  # type: ignore[attr-defined]
    return update
