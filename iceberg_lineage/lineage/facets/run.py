"""Facets of the run and the job: the engine's query, the engine, and the job type."""
from __future__ import annotations

import functools
from typing import Mapping

from openlineage.client.facet_v2 import external_query_run, job_type_job, processing_engine_run

from iceberg_lineage._version import __version__
from iceberg_lineage.lineage.facets.common import PRODUCED
from iceberg_lineage.lineage.serde import make

#: Summary keys naming the engine's job or query, in order of preference.
EXTERNAL_QUERY_KEYS = ("spark.app.id", "flink.job-id", "trino_query_id", "app-id")


def external_query_facet(summary: Mapping[str, str], *, plain: bool = False
                         ) -> external_query_run.ExternalQueryRunFacet | None:
    """The engine's job or query id; the source is the engine name, else the key's prefix (``spark``...)."""
    for key in EXTERNAL_QUERY_KEYS:
        value = summary.get(key)
        if value:
            source = summary.get("engine-name") or key.replace("_", ".").replace("-", ".").split(".")[0]
            return make(external_query_run.ExternalQueryRunFacet, plain, externalQueryId=value, source=source,
                        **PRODUCED)
    return None


def processing_engine_facet(summary: Mapping[str, str], *, plain: bool = False
                            ) -> processing_engine_run.ProcessingEngineRunFacet | None:
    """The engine that wrote the snapshot; the adapter that reports it for OpenLineage is this project."""
    name, version = summary.get("engine-name"), summary.get("engine-version")
    if not (name and version):
        return None
    return make(processing_engine_run.ProcessingEngineRunFacet, plain, version=version, name=name,
                openlineageAdapterVersion=__version__, **PRODUCED)


@functools.lru_cache(maxsize=64)
def job_type_facet(job_type: str, *, plain: bool = False) -> job_type_job.JobTypeJobFacet:
    """One per type, shared by every run's job (a facet is never changed once built)."""
    return make(job_type_job.JobTypeJobFacet, plain, processingType="BATCH", integration="ICEBERG", jobType=job_type,
                **PRODUCED)
