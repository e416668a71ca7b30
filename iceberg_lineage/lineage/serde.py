"""Events to JSON and back: one serialiser (openlineage-python's), and the way back that scanner workers' JSON
takes to :meth:`Delivery.emit <iceberg_lineage.delivery.delivery.Delivery.emit>`."""
from __future__ import annotations

import json
from typing import Any, Mapping, Union

from openlineage.client.event_v2 import (
    DatasetEvent, InputDataset, Job, JobEvent, OutputDataset, Run, RunEvent, RunState, StaticDataset,
)
from openlineage.client.facet_v2 import tags_job, tags_run
from openlineage.client.serde import Serde


#: An event from building to the transport: openlineage-python's objects, serialised once, at the edge (:func:`to_json`).
Event = Union[RunEvent, DatasetEvent, JobEvent]


def to_json(event: Event | Mapping[str, object]) -> str:
    """Deterministic JSON (sorted keys, nulls dropped) via openlineage-python's serialiser: the one edge where an
    event becomes text (transports, the spool, printing commands). A mapping is a spooled event's JSON."""
    return Serde.to_json(event)


def from_json(text: str) -> Event:
    """An openlineage-python event object from our own event JSON, for ``Delivery.emit`` (scanner workers return JSON).

    Facets stay plain dicts: openlineage-python serialises them as they are, so the delivered JSON is the JSON the
    worker built.
    """
    d = json.loads(text)
    common = {"eventTime": d["eventTime"], "producer": d.get("producer", "")}
    if "dataset" in d:
        ds = d["dataset"]
        dataset = StaticDataset(namespace=ds["namespace"], name=ds["name"], facets=ds.get("facets") or {})
        return DatasetEvent(dataset=dataset, **common)
    return RunEvent(
        eventType=RunState(d["eventType"]) if d.get("eventType") else None,
        run=Run(d["run"]["runId"], _tags_as_object(d["run"].get("facets") or {}, *_RUN_TAGS)),
        job=Job(d["job"]["namespace"], d["job"]["name"], _tags_as_object(d["job"].get("facets") or {}, *_JOB_TAGS)),
        inputs=[InputDataset(namespace=i["namespace"], name=i["name"], facets=i.get("facets") or {},
                             inputFacets=i.get("inputFacets") or {})
                for i in d.get("inputs") or []],
        outputs=[OutputDataset(namespace=o["namespace"], name=o["name"], facets=o.get("facets") or {},
                               outputFacets=o.get("outputFacets") or {})
                 for o in d.get("outputs") or []],
        **common,
    )


_RUN_TAGS = (tags_run.TagsRunFacet, tags_run.TagsRunFacetFields)
_JOB_TAGS = (tags_job.TagsJobFacet, tags_job.TagsJobFacetFields)


def _tags_as_object(facets: dict, facet: Any, tag: Any) -> dict:
    """The facets, with a ``tags`` facet as openlineage-python's object: its client's ``emit`` adds its own tags to
    that facet in place, and fails on a dict."""
    tags = facets.get("tags")
    if not isinstance(tags, dict):
        return facets
    return {**facets, "tags": facet(tags=[tag(t["key"], t["value"], t.get("source")) for t in tags.get("tags") or []],
                                    producer=tags.get("_producer", ""))}
