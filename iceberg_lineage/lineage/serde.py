"""Events to JSON and back: one serialiser (openlineage-python's), and the way back that scanner workers' JSON
takes to :meth:`Delivery.emit <iceberg_lineage.delivery.delivery.Delivery.emit>`."""
from __future__ import annotations

import contextlib
import datetime
import json
import uuid
from contextvars import ContextVar
from enum import Enum
from typing import Any, Iterator, Mapping, NamedTuple, Union

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
    memo = _MEMO.get()
    texts = memo.texts if memo is not None else None
    if texts is not None and (seen := texts.get(id(event))) is not None and seen[0] is event:
        return seen[1]
    try:
        text = json.dumps(_plain(event), sort_keys=True)
    except _Unknown:
        text = Serde.to_json(event)
    if texts is not None:
        texts[id(event)] = (event, text)
    return text


class _Memo(NamedTuple):
    """By identity, with the object (which keeps its id from being reused): the text of each event serialised so
    far, and the conversion of each attrs object (facets a table's events share, a START's run and job)."""

    texts: dict[int, tuple[object, str]]
    plain: dict[int, tuple[object, dict[str, Any]]]


#: Inside :func:`serialised_once`, what was converted so far.
_MEMO: ContextVar[_Memo | None] = ContextVar("iceberg_lineage_json_memo", default=None)


@contextlib.contextmanager
def serialised_once() -> Iterator[None]:
    """Inside, an event serialised twice is converted once: an event with column statistics is serialised to be
    measured against the byte budget (:mod:`~iceberg_lineage.lineage.budget`), then again to be sent; and an object
    several events share (a table's facets, a run's facets) once for all of them. Only for code that never changes
    an event once serialised (the scanner's table task; openlineage's client adds facets in place as it emits).
    Per thread and per task (a context variable)."""
    token = _MEMO.set(_Memo({}, {}))
    try:
        yield
    finally:
        _MEMO.reset(token)


class _Unknown(Exception):
    """A value :func:`_plain` leaves to ``Serde`` (a set, a non-string key, numpy's int64, any other object)."""


_ATOMIC = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any) -> Any:  # noqa: ANN401 - arbitrary JSON
    """``Serde.remove_nulls_and_enums(attr.asdict(value))`` for the values events hold: attrs objects, dicts with
    string keys, lists and tuples, enums, dates and UUIDs, and JSON scalars. None where Serde drops a value."""
    kind = type(value)
    if kind in _ATOMIC:
        return value
    convert = _CONVERTERS.get(kind)
    if convert is None:
        convert = _CONVERTERS[kind] = _converter(kind)
    return convert(value)


def _converter(kind: type) -> Any:  # noqa: ANN401
    """How :func:`_plain` converts a value of this type (looked up once per type)."""
    if attr.has(kind):
        return _attrs_converter(tuple(a.name for a in attr.fields(kind)))
    if issubclass(kind, dict):
        return _plain_dict
    if kind is list or kind is tuple:
        return _plain_list
    if issubclass(kind, Enum):
        return lambda value: value.value
    if issubclass(kind, datetime.date):
        return lambda value: value.isoformat()
    if issubclass(kind, uuid.UUID):
        return str
    return _unknown


def _unknown(value: Any) -> Any:  # noqa: ANN401
    raise _Unknown


def _attrs_converter(names: tuple[str, ...]) -> Any:  # noqa: ANN401
    def convert(value: Any) -> dict[str, Any]:  # noqa: ANN401
        memo = _MEMO.get()
        plain = memo.plain if memo is not None else None
        if plain is not None and (seen := plain.get(id(value))) is not None and seen[0] is value:
            return seen[1]
        out = {}
        for name in names:
            item = getattr(value, name)
            if type(item) not in _ATOMIC:
                item = _plain(item)
            if item is not None:
                out[name] = item
        if plain is not None:
            plain[id(value)] = (value, out)
        return out

    return convert


def _plain_dict(value: dict) -> dict[str, Any]:
    out = {}
    for key, item in value.items():
        if type(key) is not str:
            raise _Unknown
        if type(item) not in _ATOMIC:
            item = _plain(item)
        if item is not None:
            out[key] = item
    return out


def _plain_list(value: list | tuple) -> list[Any]:
    out = []
    for item in value:
        if type(item) not in _ATOMIC:
            item = _plain(item)
            if type(item) is dict and not item:
                continue
        if item is not None:
            out.append(item)
    return out


#: :func:`_plain`'s conversion by type.
_CONVERTERS: dict[type, Any] = {}


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
