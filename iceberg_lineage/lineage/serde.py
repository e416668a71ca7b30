"""Events to JSON and back: one serialiser (openlineage-python's), and the way back that scanner workers' JSON
takes to :meth:`Delivery.emit <iceberg_lineage.delivery.delivery.Delivery.emit>`."""
from __future__ import annotations

import datetime
import json
import uuid
from enum import Enum
from typing import Any, Mapping, Union

import attr

from openlineage.client.event_v2 import (
    DatasetEvent, InputDataset, Job, JobEvent, OutputDataset, Run, RunEvent, RunState, StaticDataset,
)
from openlineage.client.facet_v2 import tags_job, tags_run
from openlineage.client.serde import Serde


#: An event from building to the transport: openlineage-python's objects, serialised once, at the edge (:func:`to_json`).
Event = Union[RunEvent, DatasetEvent, JobEvent]


def to_json(event: Event | Mapping[str, object]) -> str:
    """Deterministic JSON (sorted keys, nulls dropped), byte for byte what openlineage-python's ``Serde.to_json``
    writes: the one edge where an event becomes text (transports, the spool, printing commands). A mapping is a
    spooled event's JSON.

    An event object is converted in one pass (:func:`_plain`) instead of ``attr.asdict`` and then
    ``Serde.remove_nulls_and_enums``, which walk it twice: the scanner serialises every event it builds. Anything
    the pass does not know goes the ``Serde`` way, so the text is the same whatever an event holds."""
    if isinstance(event, Mapping):
        return Serde.to_json(event)
    try:
        plain = _plain(event)
    except _Unknown:
        return Serde.to_json(event)
    return json.dumps(plain, sort_keys=True)


class _Unknown(Exception):
    """A value :func:`_plain` leaves to ``Serde`` (a set, a non-string key, numpy's int64, any other object)."""


#: attrs classes' attribute names by class, None for other classes (``attr.asdict`` reads ``attr.fields`` for
#: every object it meets).
_FIELDS: dict[type, tuple[str, ...] | None] = {}
_ATOMIC = frozenset({str, int, float, bool})


def _plain(value: Any) -> Any:  # noqa: ANN401 - arbitrary JSON
    """``Serde.remove_nulls_and_enums(attr.asdict(value))`` for the values events hold: attrs objects, dicts with
    string keys, lists and tuples, enums, dates and UUIDs, and JSON scalars. None where Serde drops a value."""
    kind = type(value)
    if kind in _ATOMIC or value is None:
        return value
    if kind not in _FIELDS:
        _FIELDS[kind] = tuple(a.name for a in attr.fields(kind)) if attr.has(kind) else None
    names = _FIELDS[kind]
    if names is not None:
        return _plain_dict((name, getattr(value, name)) for name in names)
    if isinstance(value, dict):
        if not all(type(k) is str for k in value):
            raise _Unknown
        return _plain_dict(value.items())
    if kind is list or kind is tuple:
        out = []
        for item in value:
            if item is None:
                continue
            item = _plain(item)
            if item is not None and not (type(item) is dict and not item):
                out.append(item)
        return out
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    raise _Unknown


def _plain_dict(items: Any) -> dict[str, Any]:  # noqa: ANN401
    out = {}
    for key, item in items:
        if item is not None and (item := _plain(item)) is not None:
            out[key] = item
    return out


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
