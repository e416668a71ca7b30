"""The custom run facet of a scan's own run, ``icebergLineageScan``: the scan's summary, the very figures
``iceberg-lineage scan`` prints (its JSON summary), so that a lineage server (and ``iceberg-lineage jobs``) can
report on the scanner.

Its JSON schema ships in the package (``iceberg_lineage/schemas/IcebergLineageScanRunFacet.json``, printed by
``iceberg-lineage schema icebergLineageScan``); like the statistics facet's, the ``_schemaURL`` serves that file,
raw JSON at this release's tag.
"""
from __future__ import annotations

import json
from importlib import resources
from typing import Any, Mapping

import attr
from openlineage.client.generated.base import RunFacet

from iceberg_lineage._version import __version__
from iceberg_lineage.lineage.facets.common import PRODUCED

SCAN_KEY = "icebergLineageScan"
SCAN_SCHEMA_FILE = "IcebergLineageScanRunFacet.json"
SCAN_SCHEMA_ID = ("https://raw.githubusercontent.com/iceberg-lineage/iceberg-lineage/"
                  f"v{__version__}/iceberg_lineage/schemas/{SCAN_SCHEMA_FILE}")
#: Failures listed by name (``errors`` counts them all): a scan of a broken catalog must not make a huge event.
MAX_LISTED_FAILURES = 20


@attr.define
class IcebergLineageScanRunFacet(RunFacet):
    """What one scan did: tables, snapshots sent (delivered, spooled), events rejected, drops, renames, gaps,
    errors, its exit code."""

    mode: str
    dryRun: bool  # noqa: N815
    tables: dict[str, int]
    snapshots: dict[str, int | None]
    rejectedEvents: int  # noqa: N815
    drops: int
    renames: int
    gaps: int
    errors: int
    exitCode: int  # noqa: N815
    failures: list[dict[str, Any]] = attr.field(factory=list)
    elapsedS: float | None = attr.field(default=None)  # noqa: N815

    @staticmethod
    def _get_schema() -> str:
        return f"{SCAN_SCHEMA_ID}#/$defs/IcebergLineageScanRunFacet"


def scan_summary_facet(summary: Mapping[str, Any]) -> IcebergLineageScanRunFacet:
    """The facet from a scan summary's JSON form (``ScanSummary.to_json()``: the keys the CLI prints), camelCased."""
    tables, snapshots = summary["tables"], summary["snapshots"]
    failures = summary["failures"]
    return IcebergLineageScanRunFacet(
        mode=summary["mode"],
        dryRun=summary["dry_run"],
        tables={k: tables[k] for k in ("scanned", "unchanged", "updated", "failed")},
        snapshots={"emitted": snapshots["emitted"], "delivered": snapshots["delivered"],
                   "spooled": snapshots["spooled"], "alreadyEmittedByHooks": snapshots["already_emitted_by_hooks"],
                   "resentForHooks": snapshots["resent_for_hooks"]},
        rejectedEvents=summary["rejected_events"],
        drops=summary["drops"],
        renames=summary["renames"],
        gaps=len(summary["gaps"]),
        errors=len(failures),
        exitCode=summary["exit_code"],
        failures=[{k: f[k] for k in ("catalog", "table", "kind", "reason")} for f in failures[:MAX_LISTED_FAILURES]],
        elapsedS=summary.get("elapsed_s"),
        **PRODUCED,
    )


def scan_summary_schema() -> dict[str, Any]:
    """The facet's JSON schema, read from the installed package."""
    return json.loads(resources.files("iceberg_lineage").joinpath("schemas", SCAN_SCHEMA_FILE).read_text("utf-8"))
