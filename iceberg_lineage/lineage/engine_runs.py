"""Events of engine application runs and of what engines report to the proxy's ``/metrics``: scan reports as inputs,
applications as runs, and commit reports completing the per-snapshot runs. Pure builders;
:mod:`iceberg_lineage.proxy.tracker` decides when each is sent.

- A scan report is an input dataset: the table at the snapshot read (``version``), ``inputStatistics`` and
  ``icebergScanReport`` from the report itself.
- An application (Spark's ``app-id`` / ``spark.app.id``, Flink's ``flink.job-id``) is one run of job
  ``<engine>.application``, runId :func:`application_run_id`: START when first seen, RUNNING per scan with its input,
  COMPLETE listing the tables read, ``OTHER`` for activity after that; it lists no outputs (its writes are its child
  runs, the per-snapshot runs, whose ``parent`` facet names it).
- Without an application id, a scan is its own run (job ``<ns>.<table>.scan``, START and COMPLETE, as with the
  hook).
- A per-snapshot COMPLETE waits (in the state store) for the engine's commit report: it then gets the application's
  reads as inputs and ``icebergCommitReport`` complete; a report that comes later is an ``OTHER`` event of the same
  run.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import attr
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import external_query_run, processing_engine_run

from iceberg_lineage._version import __version__
from iceberg_lineage.config import Settings
from iceberg_lineage.lineage import events as ev
from iceberg_lineage.lineage import facets as fb
from iceberg_lineage.lineage.facets import COMMIT_REPORT_KEY
from iceberg_lineage.lineage.captures import scan_run_event
from iceberg_lineage.lineage.runs import (
    APPLICATION_KEYS, RunRef, application_of, application_ref, application_run_id, dataset_key,
)
from iceberg_lineage.read.source import LoadedTable
from iceberg_lineage.stats import snapshot_stats

if TYPE_CHECKING:
    from scan_reporters.reports import CommitReport, ScanReport

__all__ = [
    "REPORT_METADATA_KEYS", "Application", "TableRead", "application_event", "application_run_id",
    "commit_report_event", "late_report_event", "scan_input", "scan_run", "with_reads",
]


#: The keys of a report's ``metadata`` kept (the rest never reaches a log or an event, like catalog properties):
#: what names the engine and its application.
REPORT_METADATA_KEYS = frozenset({"engine-name", "engine-version", "iceberg-version", "app-id",
                                  *(key for key, _ in APPLICATION_KEYS)})


@dataclass(frozen=True)
class Application:
    """An engine's application as reports and summaries name it."""

    engine: str
    app_id: str
    engine_version: str | None = None

    @staticmethod
    def of(values: Mapping[str, str] | None) -> Application | None:
        """From a snapshot summary or a report's metadata; None when they name no application."""
        found = application_of(values)
        if found is None:
            return None
        return Application(*found, engine_version=(values or {}).get("engine-version") or None)

    @property
    def run_id(self) -> str:
        return application_run_id(self.engine, self.app_id)

    def ref(self, job_namespace: str) -> RunRef:
        return application_ref(self.engine, self.app_id, job_namespace)


@dataclass(frozen=True)
class TableRead:
    """A table an application read, at the snapshot read."""

    namespace: str
    name: str
    snapshot_id: int | None

    def dataset(self) -> InputDataset:
        facets = {"version": fb.version_facet(self.snapshot_id)} if self.snapshot_id is not None else {}
        return InputDataset(namespace=self.namespace, name=self.name, facets=facets)


# -- scans -----------------------------------------------------------------------------------------------------------

def scan_input(table: LoadedTable, report: ScanReport, settings: Settings) -> InputDataset:
    """The table at the snapshot the report read (just the table when its metadata no longer has that snapshot),
    with what the engine planned; the report carries no record count, so ``inputStatistics`` has bytes and files."""
    known = table.metadata.snapshot_by_id(report.snapshot_id) is not None
    stats = snapshot_stats(table, report.snapshot_id, depth="summary") if known else None
    state = ev.dataset_event(table, stats, settings).dataset
    figures = report.scan_metrics.values()
    return InputDataset(
        namespace=state.namespace, name=state.name, facets=state.facets,
        inputFacets=fb.scan_report_input_facets(report, size=figures.get("total-file-size-in-bytes"),
                                                file_count=figures.get("result-data-files")),
    )


def scan_run(table: LoadedTable, report: ScanReport, settings: Settings) -> list[RunEvent]:
    """A scan report without an application id: a run of its own, job ``<ns>.<table>.scan``, START (unless
    ``events.start_events`` is off) and COMPLETE."""
    return ev.with_start(scan_run_event(table, scan_input(table, report, settings), settings), settings)


# -- the application's own run ---------------------------------------------------------------------------------------

def _run_facets(app: Application) -> dict[str, Any]:
    facets: dict[str, Any] = {
        "externalQuery": external_query_run.ExternalQueryRunFacet(externalQueryId=app.app_id, source=app.engine,
                                                                  producer=fb.PRODUCER),
    }
    if app.engine_version:
        facets["processing_engine"] = processing_engine_run.ProcessingEngineRunFacet(
            version=app.engine_version, name=app.engine, openlineageAdapterVersion=__version__, producer=fb.PRODUCER)
    return facets


def application_event(app: Application, state: RunState, settings: Settings, *, when: dt.datetime,
                      inputs: Iterable[InputDataset] = ()) -> RunEvent:
    """START, RUNNING (a scan, with its input), COMPLETE (the tables read) or OTHER (activity after COMPLETE) of the
    application's run; never any output."""
    ref = app.ref(settings.job.namespace)
    unique = {dataset_key(d): d for d in inputs}
    return RunEvent(
        eventType=state,
        eventTime=fb.iso_time(when),
        run=Run(runId=ref.run_id, facets=_run_facets(app)),
        job=Job(namespace=ref.job_namespace, name=ref.job_name,
                facets={"jobType": fb.job_type_facet("APPLICATION")}),
        inputs=list(unique.values()),
        outputs=[],
        producer=fb.PRODUCER,
    )


# -- the per-snapshot runs of commits -------------------------------------------------------------------------------

def with_reads(event: RunEvent, reads: Sequence[TableRead]) -> RunEvent:
    """The COMPLETE of a commit with the tables its application read before it as inputs, each at the snapshot
    read (a consumer that ignores parents still sees A -> B)."""
    return attr.evolve(event, inputs=[*(event.inputs or []), *(read.dataset() for read in reads)])


def commit_report_event(event: RunEvent, report: CommitReport | None) -> RunEvent:
    """The held COMPLETE, with ``icebergCommitReport`` as the engine reported it when its report came in time."""
    if report is None:
        return event
    facet = fb.commit_report_facet_of(report)
    outputs = [attr.evolve(o, outputFacets={**(o.outputFacets or {}), COMMIT_REPORT_KEY: facet})
               for o in event.outputs or []]
    return attr.evolve(event, outputs=outputs)


def late_report_event(event: RunEvent, report: CommitReport, when: dt.datetime) -> RunEvent:
    """A commit report that came after its snapshot's COMPLETE went out, or whose commit the proxy never saw: an
    OTHER event of the snapshot's run (the spec allows it after a terminal event) carrying the complete
    ``icebergCommitReport`` on each of the run's outputs."""
    facet = fb.commit_report_facet_of(report)
    return RunEvent(
        eventType=RunState.OTHER,
        eventTime=fb.iso_time(when),
        run=Run(runId=event.run.runId),
        job=Job(namespace=event.job.namespace, name=event.job.name),
        outputs=[OutputDataset(namespace=o.namespace, name=o.name, outputFacets={COMMIT_REPORT_KEY: facet})
                 for o in event.outputs or []],
        producer=fb.PRODUCER,
    )
