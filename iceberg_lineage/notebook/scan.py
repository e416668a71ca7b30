"""``preview_scan(catalog)``: what ``iceberg-lineage scan`` would emit for a catalog, without sending or recording.

It is the public API's dry run (:func:`iceberg_lineage.scan_catalog` with ``dry_run``: the state file is only read),
the events shaped for the consumer profile exactly as ``scan --dry-run`` prints them (as they would be sent),
shown as HTML, so a notebook can look at them before the scan is scheduled for real.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from iceberg_lineage.api import scan_catalog
import iceberg_lineage.notebook.html as h
from iceberg_lineage.notebook.session import EmittedEvent, EventLog
from iceberg_lineage.scan.summary import ScanSummary, summary_text

if TYPE_CHECKING:
    from iceberg_lineage.config import Settings
    from iceberg_lineage.scan.modes import Mode
    from iceberg_lineage.stats.model import Depth
    from pyiceberg.catalog import Catalog


@dataclass(frozen=True)
class ScanPreview:
    summary: ScanSummary
    events: EventLog

    def _repr_html_(self) -> str:
        s = self.summary
        figures = {
            "mode": s.mode,
            "tables scanned": s.tables_scanned,
            "tables updated / unchanged / failed": f"{s.updated} / {s.unchanged} / {s.failed}",
            "snapshots to emit": s.snapshots_emitted,
            "snapshots already emitted by hooks": s.snapshots_by_hooks,
            "drops / renames": f"{s.drops} / {s.renames}",
            "elapsed": f"{s.elapsed_s:.2f} s",
        }
        figures.update({f"failed: {f.catalog}.{f.table}": f.reason for f in s.failures})
        return h.mapping_html("iceberg-lineage scan (dry run)", figures) + self.events._repr_html_()

    def __repr__(self) -> str:
        return summary_text(self.summary, f"{len(self.events)} event(s) kept in .events")


def preview_scan(
    catalog: Catalog,
    *,
    mode: Mode = "history",
    depth: Depth = "entries",
    namespaces: Sequence[str] = (),
    tables: Sequence[str] = (),
    exclude: Sequence[str] = (),
    settings: Settings | None = None,
) -> ScanPreview:
    """:func:`iceberg_lineage.scan_catalog`'s dry run over ``catalog`` (a PyIceberg catalog; loaded afresh, so hooks
    see nothing), shown as a table: the events ``iceberg-lineage scan --dry-run`` prints, the scan's own run too.

    The options are those of ``iceberg-lineage scan`` (``--mode``, ``--depth``, ``--namespace``, ``--table``,
    ``--exclude``); the watermark store of ``settings`` (``state.path``) says what was already emitted.
    """
    result = scan_catalog(catalog, namespaces=namespaces, tables=tables, exclude=exclude, mode=mode, depth=depth,
                          dry_run=True, settings=settings)
    return ScanPreview(result.summary, EventLog([EmittedEvent(text) for text in result.events]))
