"""The keys ``jobs`` reads, decoded by msgspec straight into typed structs: event type and time, run (its id and
``errorMessage``), job, and the inputs' and outputs' names, version and ``outputStatistics``. Every other key (most
of an event's bytes: schemas, column lineage, the producer's facets) is skipped by the C decoder, never built into
Python objects; that is what makes ``jobs`` about as fast as reading the file.

The structs accept only the well-formed shape. Anything else (a key of another type, a ``null`` where an absent key
means something else, NaN or a byte order mark, invalid UTF-8 anywhere in the line) is not decoded here:
:func:`decode_keys` answers ``None`` and the caller reads the line with the standard library, whose reading decides
what counts. So both paths give the same report, line for line.
"""
from __future__ import annotations

from typing import Any, Iterator, Mapping, Union

import msgspec
from msgspec import UNSET, Struct, UnsetType
# A JSON object missing in the line and one present as ``null`` mean different things to the standard library's
# reading (``{}`` against "not an object"): such keys are ``X | UnsetType``, and a null in them is not decoded here.


class _Statistics(Struct, gc=False):
    rowCount: Union[int, None] = None  # noqa: N815 - the JSON keys
    size: Union[int, None] = None


class _OutputFacets(Struct, gc=False):
    outputStatistics: Union[_Statistics, None] = None  # noqa: N815


class _Version(Struct, gc=False):
    datasetVersion: Union[str, int, None] = None  # noqa: N815


class _DatasetFacets(Struct, gc=False):
    version: Union[_Version, UnsetType] = UNSET


class _Dataset(Struct, gc=False):
    namespace: Union[str, None] = None
    name: Union[str, None] = None


class _Output(Struct, gc=False):
    namespace: Union[str, None] = None
    name: Union[str, None] = None
    facets: Union[_DatasetFacets, UnsetType] = UNSET
    outputFacets: Union[_OutputFacets, None] = None  # noqa: N815


class _ErrorMessage(Struct, gc=False):
    message: Union[str, None] = None


class _RunFacets(Struct, gc=False):
    errorMessage: Union[_ErrorMessage, None] = None  # noqa: N815


class _Run(Struct, gc=False):
    runId: Union[str, None] = None  # noqa: N815
    facets: Union[_RunFacets, None] = None


class _Job(Struct, gc=False):
    namespace: Union[str, None] = None
    name: Union[str, None] = None


class EventKeys(Struct, gc=False):
    """The keys of one event that ``jobs`` counts; absent and ``null`` are both ``None``."""

    eventType: Union[str, None] = None  # noqa: N815
    eventTime: Union[str, None] = None  # noqa: N815
    run: Union[_Run, None] = None
    job: Union[_Job, None] = None
    inputs: Union[list[_Dataset], None] = None
    outputs: Union[list[_Output], None] = None


_DECODER = msgspec.json.Decoder(EventKeys)
_EMPTY: Mapping[str, Any] = {}


def is_utf8(data: bytes) -> bool:
    """Whether bytes are UTF-8: the standard library refuses invalid UTF-8 anywhere in a line, msgspec only in the
    strings it keeps. Checked once for a block of lines."""
    if data.isascii():
        return True
    try:
        data.decode()
    except UnicodeError:
        return False
    return True


#: The keys of UTF-8 text (:func:`is_utf8`); raises ``msgspec.DecodeError`` or ``RecursionError`` where
#: :func:`decode_keys` answers ``None``.
decode_utf8 = _DECODER.decode


def decode_keys(line: str | bytes) -> EventKeys | None:
    """The keys of a JSON line, or ``None`` when the line is not in the shape this reads (the caller then reads it
    with the standard library)."""
    if isinstance(line, bytes) and not is_utf8(line):
        return None
    try:
        return _DECODER.decode(line)
    except (msgspec.DecodeError, RecursionError):
        return None


def _obj(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else _EMPTY


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _int(value: Any) -> int | None:
    return value if type(value) is int else None  # not a bool


def _output(out: dict, namespace: str, name: str) -> _Output:
    """An output parsed by the standard library, its statistics kept when they are readable: a facet that is no
    JSON object has nothing to take from it."""
    try:
        stats = out.get("outputFacets", _EMPTY).get("outputStatistics", _EMPTY)
        rows, size = _int(stats.get("rowCount")), _int(stats.get("size"))
        if rows is None and size is None:
            return _Output(namespace, name)
        version = out.get("facets", _EMPTY).get("version", _EMPTY).get("datasetVersion")
    except AttributeError:
        return _Output(namespace, name)
    version = version if isinstance(version, (str, int)) else None
    return _Output(namespace, name, _DatasetFacets(_Version(version)), _OutputFacets(_Statistics(rows, size)))


def _named(datasets: Any) -> Iterator[tuple[dict, str, str]]:
    """The datasets of a list that are objects with a string namespace and name."""
    for d in _list(datasets):
        if isinstance(d, dict):
            namespace, name = d.get("namespace"), d.get("name")
            if type(namespace) is str and type(name) is str:
                yield d, namespace, name


def keys_of_dict(event: Mapping[str, Any]) -> EventKeys:
    """The keys of an event parsed by the standard library, each checked for its type the way ``jobs`` always did:
    the run's and job's keys are passed as they are (the aggregator refuses what is not a string), datasets without
    a string namespace and name and statistics that are not integers are left out."""
    run, job = event.get("run"), _obj(event.get("job"))
    message = _obj(_obj(_obj(run).get("facets")).get("errorMessage")).get("message")
    return EventKeys(
        eventType=event.get("eventType"), eventTime=event.get("eventTime"),
        run=_Run(run.get("runId") if type(run) is dict else None,
                 _RunFacets(_ErrorMessage(message if isinstance(message, str) else None))),
        job=_Job(job.get("namespace"), job.get("name")),
        inputs=[_Dataset(namespace, name) for _, namespace, name in _named(event.get("inputs"))],
        outputs=[_output(d, namespace, name) for d, namespace, name in _named(event.get("outputs"))],
    )


__all__ = ["EventKeys", "decode_keys", "decode_utf8", "is_utf8", "keys_of_dict"]
