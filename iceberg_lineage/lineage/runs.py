"""Events of a run (START, RUNNING, COMPLETE, FAIL) and what they are made of: ids, clock, who the run is, why it
failed. Pure builders: the run contexts of :mod:`iceberg_lineage.hook` decide when each is sent."""
from __future__ import annotations

import datetime as dt
import traceback
import uuid
from dataclasses import dataclass
from typing import Any, Literal, Mapping, Sequence

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run as OLRun, RunEvent, RunState
from openlineage.client.facet_v2 import error_message_run, parent_run, processing_engine_run, tags_run
from openlineage.client.uuid import generate_new_uuid

from iceberg_lineage._version import __version__
from iceberg_lineage.lineage import facets as fb
from iceberg_lineage.lineage.serde import make


def new_run_id() -> str:
    """A time-ordered UUIDv7, as OpenLineage recommends for run ids."""
    return str(generate_new_uuid())


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


#: How the hook was attached to the process that made a run: ``process`` (``iceberg-lineage run``),
#: ``configuration`` (``metrics-reporter-impl: openlineage`` in the catalog's properties), ``run`` (a run context in
#: code), ``observe`` (``observe(catalog)``, outside a run context).
Attachment = Literal["process", "configuration", "run", "observe"]
#: The key of the run tag naming the :data:`Attachment` (openlineage-python's client adds its own tags beside it).
HOOK_TAG = "iceberg-lineage.hook"
#: The ``source`` of the tags this project sets.
TAG_SOURCE = "INTEGRATION"


def hook_run_facets(attached: Attachment, *, plain: bool = False) -> dict[str, Any]:
    """The run facets of every run the hook reports, whichever way it was attached: the engine (PyIceberg, at the
    version installed) and a ``tags`` facet saying how the hook came to report it. ``plain``: in plain form
    (:func:`~iceberg_lineage.lineage.serde.make`)."""
    tag = make(tags_run.TagsRunFacetFields, plain, key=HOOK_TAG, value=attached, source=TAG_SOURCE)
    return {"processing_engine": _engine_facet(plain),
            "tags": make(tags_run.TagsRunFacet, plain, tags=[tag], producer=fb.PRODUCER)}


@dataclass(frozen=True)
class RunRef:
    """Who a run is: its id, its job, the run it is nested in, and how the hook was attached (None: not a hook's
    run, e.g. the scanner's)."""

    run_id: str
    job_namespace: str
    job_name: str
    parent: RunRef | None = None
    attached: Attachment | None = None

    @property
    def root(self) -> RunRef:
        return self if self.parent is None else self.parent.root

    def job(self) -> Job:
        return Job(namespace=self.job_namespace, name=self.job_name, facets={"jobType": fb.job_type_facet("JOB")})

    def run_facets(self) -> dict[str, Any]:
        facets = hook_run_facets(self.attached) if self.attached else {"processing_engine": _engine_facet()}
        if self.parent is not None:
            facets["parent"] = parent_facet(self.parent)
        return facets


def parent_facet(parent: RunRef, *, plain: bool = False) -> parent_run.ParentRunFacet:
    """The ``parent`` facet of a run nested in ``parent`` (its root: the outermost run)."""
    root = parent.root
    return make(
        parent_run.ParentRunFacet, plain,
        run=make(parent_run.Run, plain, runId=parent.run_id),
        job=make(parent_run.Job, plain, namespace=parent.job_namespace, name=parent.job_name),
        root=make(
            parent_run.Root, plain,
            run=make(parent_run.RootRun, plain, runId=root.run_id),
            job=make(parent_run.RootJob, plain, namespace=root.job_namespace, name=root.job_name),
        ),
        producer=fb.PRODUCER,
    )


# -- engine applications (a Spark application, a Flink job) ---------------------------------------------------------

#: Fixed namespace of :func:`application_run_id` (never change it: runIds already sent would no longer match).
APPLICATION_NAMESPACE = uuid.UUID("6f1c3b9e-2d4a-5e8f-9b7c-1a2d3e4f5a6b")
#: Summary keys that name the application that committed, and the engine they belong to.
APPLICATION_KEYS = (("spark.app.id", "spark"), ("flink.job-id", "flink"))


def application_of(values: Mapping[str, str] | None) -> tuple[str, str] | None:
    """(engine, application id) from a snapshot summary (``spark.app.id``, ``flink.job-id``) or a metrics report's
    metadata (``app-id`` with ``engine-name``, as Iceberg Java fills it); None when it names no application."""
    values = values or {}
    for key, engine in APPLICATION_KEYS:
        if values.get(key):
            return engine, str(values[key])
    engine, app_id = values.get("engine-name"), values.get("app-id")
    return (str(engine).lower(), str(app_id)) if engine and app_id else None


def application_run_id(engine: str, app_id: str) -> str:
    """The run id of an engine's application: the same from the bridge (reports) and the scanner (summaries)."""
    return str(uuid.uuid5(APPLICATION_NAMESPACE, f"{engine}\x1f{app_id}"))


def application_ref(engine: str, app_id: str, job_namespace: str) -> RunRef:
    """The application's run: job ``<engine>.application``, one job per engine (no report names the application)."""
    return RunRef(application_run_id(engine, app_id), job_namespace, f"{engine}.application")


def _engine_facet(plain: bool = False) -> processing_engine_run.ProcessingEngineRunFacet:
    import pyiceberg

    return make(
        processing_engine_run.ProcessingEngineRunFacet, plain,
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
