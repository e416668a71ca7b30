"""``preview_scan(catalog)``: what ``iceberg-lineage scan`` would emit for a catalog, without sending or recording.

It is the scanner's dry run (the state file is only read), with the events kept instead of printed, as ``scan
--dry-run`` prints them (shaped for the consumer profile, as they would be sent), so a notebook can look at them
before the scan is scheduled for real.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from iceberg_lineage.config import Settings, load_settings
import iceberg_lineage.notebook.html as h
from iceberg_lineage.notebook.session import EmittedEvent, EventLog
from iceberg_lineage.read.catalogs import CatalogSpec
from iceberg_lineage.read.source import catalog_type_of
from iceberg_lineage.scan.discovery import TableFilter
from iceberg_lineage.scan.driver import ScanOptions, scan
from iceberg_lineage.scan.sinks import printing_sink
from iceberg_lineage.scan.summary import ScanSummary, summary_text
from iceberg_lineage.scan.task import Mode
from iceberg_lineage.state.store import StateStore
from iceberg_lineage.stats.model import Depth

if TYPE_CHECKING:
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
    """Dry-run the batch scanner over ``catalog`` (a PyIceberg catalog; loaded afresh, so hooks see nothing).

    The options are those of ``iceberg-lineage scan`` (``--mode``, ``--depth``, ``--namespace``, ``--table``,
    ``--exclude``); the watermark store of ``settings`` (``state.path``) says what was already emitted.
    """
    settings = settings or load_settings()
    spec = CatalogSpec.of(catalog.name, {"type": catalog_type_of(catalog), **catalog.properties})
    options = ScanOptions(catalogs=(spec,), filters=TableFilter(tuple(namespaces), tuple(tables), tuple(exclude)),
                          mode=mode, depth=depth, dry_run=True)
    sent: list[str] = []
    with StateStore(settings.state.path, readonly=True) as store:  # the events as the scan would send them
        summary = scan(options, settings, store, printing_sink(lambda line: sent.append(line.rstrip("\n")), settings))
    return ScanPreview(summary, EventLog([EmittedEvent(text) for text in sent]))
