"""Events to JSON and back: one serialiser (openlineage-python's), and the way back that scanner workers' JSON
takes to :meth:`Delivery.emit <iceberg_lineage.delivery.delivery.Delivery.emit>`."""
from __future__ import annotations

import contextlib
import datetime
import json
import uuid
from contextvars import ContextVar
from enum import Enum
from typing import Any, Callable, Iterator, Mapping, NamedTuple, TypeVar, Union

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
    if isinstance(event, Plain):
        return plain_json(event)
    if isinstance(event, Mapping):
        return Serde.to_json(event)
    return _once(event, _object_json)


def _object_json(event: Event) -> str:
    try:
        return _SORTED.encode(_plain(event))
    except _Unknown:
        return Serde.to_json(event)


def _once(event: object, dump: Callable[[Any], str]) -> str:
    """``dump(event)``, or inside :func:`serialised_once` the text it gave this very event before."""
    memo = _MEMO.get()
    texts = memo.texts if memo is not None else None
    if texts is not None and (seen := texts.get(id(event))) is not None and seen[0] is event:
        return seen[1]
    text = dump(event)
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


class Plain(dict):  # type: ignore[type-arg]
    """A part built in plain form (:func:`make`): already converted, so :func:`_plain` takes it as it is (an event's
    facets are not walked again when the event is made of them). Never changed once made."""

    __slots__ = ()


#: What :func:`_plain` takes as it is: JSON scalars, and parts already in plain form (tested by exact type, inline
#: before any call: a plain event's facets are dicts of parts).
_AS_IS = frozenset({str, int, float, bool, type(None), Plain})


def _plain(value: Any) -> Any:  # noqa: ANN401 - arbitrary JSON
    """``Serde.remove_nulls_and_enums(attr.asdict(value))`` for the values events hold: attrs objects, dicts with
    string keys, lists and tuples, enums, dates and UUIDs, and JSON scalars. None where Serde drops a value."""
    kind = type(value)
    if kind in _AS_IS:
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
            if type(item) not in _AS_IS:
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
        if type(item) not in _AS_IS:
            item = _plain(item)
        if item is not None:
            out[key] = item
    return out


def _plain_list(value: list | tuple) -> list[Any]:
    out = []
    for item in value:
        if type(item) not in _AS_IS:
            item = _plain(item)
            if type(item) is dict and not item:
                continue
        if item is not None:
            out.append(item)
    return out


#: :func:`_plain`'s conversion by type.
_CONVERTERS: dict[type, Any] = {}


_T = TypeVar("_T")


def make(kind: type[_T], plain: bool, /, **fields: Any) -> _T | dict[str, Any]:  # noqa: ANN401
    """``kind(**fields)``, an openlineage-python (attrs) object, or with ``plain`` the JSON form that object
    serialises to (:func:`_plain`), built without the object: its validators and the walk that converts it were most
    of a scanned snapshot's cost. One builder thus gives both forms, and the scanner, which only ever sends JSON,
    builds dicts. ``fields`` are given as ``kind`` takes them; in plain form they may hold plain parts or objects.
    The plain form is a :class:`Plain` dict."""
    if not plain:
        return kind(**fields)
    spec = _SPECS.get(kind)
    if spec is None:
        spec = _SPECS[kind] = _spec(kind)
    names, defaults, factories = spec
    out = Plain(defaults)
    for name, factory in factories:  # a fresh one each time, as the object gets
        out[name] = factory()
    for alias, value in fields.items():
        if type(value) not in _AS_IS:
            value = _plain(value)
        if value is not None:
            out[names[alias]] = value
        else:
            out.pop(names[alias], None)
    return out


def _spec(kind: type) -> tuple[dict[str, str], dict[str, Any], tuple[tuple[str, Any], ...]]:
    """Per attrs class: the JSON name of each init argument (``producer`` is a facet's ``_producer``), the values an
    object has when they are not given (defaults, and the ``schemaURL`` its ``__attrs_post_init__`` sets) in plain
    form, and the factories of the others (an empty list or dict)."""
    names, defaults, factories = {}, {}, []
    for field in attr.fields(kind):
        names[field.alias] = field.name
        if isinstance(field.default, attr.Factory):  # type: ignore[arg-type]
            factories.append((field.name, field.default.factory))  # type: ignore[union-attr]
            continue
        if field.name in ("schemaURL", "_schemaURL"):
            value = kind._get_schema()  # type: ignore[attr-defined]
        else:
            value = None if field.default is attr.NOTHING else field.default
        if (value := _plain(value)) is not None:
            defaults[field.name] = value
    return names, defaults, tuple(factories)


#: :func:`make`'s names and defaults by class.
_SPECS: dict[type, tuple[dict[str, str], dict[str, Any], tuple[tuple[str, Any], ...]]] = {}


def plain_json(event: Mapping[str, Any]) -> str:
    """The text of an event built in plain form (:func:`make`): already what :func:`to_json` would convert an object
    to, so only dumped; inside :func:`serialised_once`, once (an event measured against the byte budget is sent as
    it was measured)."""
    return _once(event, _sorted_json)


def _sorted_json(event: Mapping[str, Any]) -> str:
    return _SORTED.encode(event)


#: ``json.dumps(value, sort_keys=True)`` without building an encoder per event (the same text: the same settings).
_SORTED = json.JSONEncoder(sort_keys=True)


def from_json(text: str) -> Event:
    """An openlineage-python event object from our own event JSON, for ``Delivery.emit`` (scanner workers return JSON).

    Facets stay plain dicts: openlineage-python serialises them as they are, so the delivered JSON is the JSON the
    worker built.
    """
    return from_plain(json.loads(text))


def as_objects(event: Event | Mapping[str, Any]) -> Event:
    """An event as openlineage-python's objects: one built in plain form (a dict) converted (:func:`from_plain`),
    one built as objects as it is."""
    return from_plain(event) if isinstance(event, dict) else event  # type: ignore[return-value]


def from_plain(d: Mapping[str, Any]) -> Event:
    """:func:`from_json` of an event's JSON form already parsed (or built plain, :func:`make`)."""
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


def _tags_as_object(facets: Mapping[str, Any], facet: Any, tag: Any) -> dict:  # noqa: ANN401
    """The facets in a dict of their own (openlineage-python's client adds facets to it in place, and a
    :class:`Plain` is never changed), with a ``tags`` facet as openlineage-python's object: the client adds its own
    tags to that facet in place, and fails on a dict."""
    tags = facets.get("tags")
    if not isinstance(tags, dict):
        return dict(facets)
    return {**facets, "tags": facet(tags=[tag(t["key"], t["value"], t.get("source")) for t in tags.get("tags") or []],
                                    producer=tags.get("_producer", ""))}
