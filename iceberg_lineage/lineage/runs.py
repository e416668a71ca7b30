"""Events of a run (START, RUNNING, COMPLETE, FAIL) and what they are made of: ids, clock, who the run is, why it
failed. Pure builders: the run contexts of :mod:`iceberg_lineage.hook` decide when each is sent."""
from __future__ import annotations

import datetime as dt
import traceback
from dataclasses import dataclass
from typing import Any, Sequence

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run as OLRun, RunEvent, RunState
from openlineage.client.facet_v2 import error_message_run, parent_run, processing_engine_run
from openlineage.client.uuid import generate_new_uuid

from iceberg_lineage._version import __version__
from iceberg_lineage.lineage import facets as fb


def new_run_id() -> str:
    """A time-ordered UUIDv7, as OpenLineage recommends for run ids."""
    return str(generate_new_uuid())


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


@dataclass(frozen=True)
class RunRef:
    """Who a run is: its id, its job, and the run it is nested in."""

    run_id: str
    job_namespace: str
    job_name: str
    parent: RunRef | None = None

    @property
    def root(self) -> RunRef:
        return self if self.parent is None else self.parent.root

    def job(self) -> Job:
        return Job(namespace=self.job_namespace, name=self.job_name, facets={"jobType": fb.job_type_facet("JOB")})

    def run_facets(self) -> dict[str, Any]:
        facets: dict[str, Any] = {"processing_engine": _engine_facet()}
        if self.parent is not None:
            root = self.root
            facets["parent"] = parent_run.ParentRunFacet(
                run=parent_run.Run(runId=self.parent.run_id),
                job=parent_run.Job(namespace=self.parent.job_namespace, name=self.parent.job_name),
                root=parent_run.Root(
                    run=parent_run.RootRun(runId=root.run_id),
                    job=parent_run.RootJob(namespace=root.job_namespace, name=root.job_name),
                ),
                producer=fb.PRODUCER,
            )
        return facets


def _engine_facet() -> processing_engine_run.ProcessingEngineRunFacet:
    import pyiceberg

    return processing_engine_run.ProcessingEngineRunFacet(
        version=str(pyiceberg.__version__), name="pyiceberg", openlineageAdapterVersion=__version__,
        producer=fb.PRODUCER,
    )


@dataclass(frozen=True)
class Failure:
    """Why a run failed, as the ``errorMessage`` facet says it."""

    message: str
    stack_trace: str | None = None

    @staticmethod
    def of(exc: BaseException) -> Failure:
        return Failure(f"{type(exc).__name__}: {exc}", "".join(traceback.format_exception(exc)))

    def facet(self) -> error_message_run.ErrorMessageRunFacet:
        return error_message_run.ErrorMessageRunFacet(
            message=self.message, programmingLanguage="python", stackTrace=self.stack_trace, producer=fb.PRODUCER
        )


def run_event(
    ref: RunRef,
    state: RunState,
    *,
    when: dt.datetime,
    inputs: Sequence[InputDataset] = (),
    outputs: Sequence[OutputDataset] = (),
    failure: Failure | None = None,
) -> RunEvent:
    """START, RUNNING, COMPLETE or FAIL of a run: its job, parent, and the datasets given."""
    facets = ref.run_facets()
    if failure is not None:
        facets["errorMessage"] = failure.facet()
    return RunEvent(
        eventType=state,
        eventTime=fb.iso_time(when),
        run=OLRun(runId=ref.run_id, facets=facets),
        job=ref.job(),
        inputs=list(inputs),
        outputs=list(outputs),
        producer=fb.PRODUCER,
    )


def dataset_key(dataset: InputDataset | OutputDataset) -> tuple[str, str]:
    """A run lists each table once: a dataset seen again replaces the earlier one with this key."""
    return dataset.namespace, dataset.name
