"""Events to JSON and back: one serialiser (openlineage-python's), and the way back that scanner workers' JSON
takes to :meth:`Delivery.emit <iceberg_lineage.delivery.delivery.Delivery.emit>`."""
from __future__ import annotations

import json
from typing import Mapping, Union

from openlineage.client.event_v2 import (
    DatasetEvent, InputDataset, Job, JobEvent, OutputDataset, Run, RunEvent, RunState, StaticDataset,
)
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
        run=Run(d["run"]["runId"], d["run"].get("facets") or {}),
        job=Job(d["job"]["namespace"], d["job"]["name"], d["job"].get("facets") or {}),
        inputs=[InputDataset(namespace=i["namespace"], name=i["name"], facets=i.get("facets") or {},
                             inputFacets=i.get("inputFacets") or {})
                for i in d.get("inputs") or []],
        outputs=[OutputDataset(namespace=o["namespace"], name=o["name"], facets=o.get("facets") or {},
                               outputFacets=o.get("outputFacets") or {})
                 for o in d.get("outputs") or []],
        **common,
    )
