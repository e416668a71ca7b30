"""Decoding a ``metadata.json``'s bytes, its long arrays streamed into compact models as they are read.

A table with 400,000 snapshots has a 200 MB file; decoded whole, its snapshots and snapshot log were 1.3 KB of
dicts each before they were parsed, and the parse doubled that. Here the top-level object is walked by hand and
each element of ``snapshots`` and ``snapshot-log`` is decoded alone and parsed at once
(:func:`~iceberg_lineage.read.metadata_json.compact_snapshot`), so only the compact form stays. An element that
does not parse stays as decoded, for :func:`~iceberg_lineage.read.metadata_json.parse_metadata` to report in
file order. Anything else than a plain top-level object (bad JSON included) is decoded again by ``json.loads``'
own decoder, so results and error messages are the standard library's. A file under :data:`WHOLE_BELOW` is
decoded whole by that decoder, then its arrays made compact the same way.
"""
from __future__ import annotations

import json
from json.decoder import WHITESPACE, scanstring
from types import MappingProxyType
from typing import Any, Callable, Mapping

from iceberg_lineage.jsontypes import JsonObject
from iceberg_lineage.read.metadata_json import compact_log_entry, compact_snapshot

_DECODER = json.JSONDecoder()
_SCAN = _DECODER.scan_once
_SPACE = WHITESPACE.match
#: What an element of a streamed array becomes: ``(decoded element, strings shared by the array) -> compact form``.
Compactor = Callable[[Any, dict], Any]
#: The arrays decoded element by element, and what each element becomes.
STREAMED: Mapping[str, Compactor] = MappingProxyType(
    {"snapshots": compact_snapshot, "snapshot-log": compact_log_entry}
)


class _Irregular(Exception):
    """The walk met what it does not handle; ``json.loads``' decoder decides."""


#: Below this many characters a file is decoded whole, then its arrays made compact: twice as fast for the small
#: files most tables have (89 against 43 us for a three-snapshot table), and what they hold was small anyway.
WHOLE_BELOW = 1 << 20


def decode_metadata_text(text: str, streamed: Mapping[str, Compactor] = STREAMED) -> JsonObject:
    """The decoded JSON of a metadata file's text, as ``json.loads(text)`` decodes it but with the arrays of
    ``streamed`` compact; raises what ``json.loads`` raises."""
    if len(text) < WHOLE_BELOW:
        return _compacted(_DECODER.decode(text), streamed)
    try:
        return _walk(text, streamed)
    except (_Irregular, StopIteration, ValueError, RecursionError):
        pass  # decoded again below, once the walk's frames (and what it had built) are gone with the exception
    return _DECODER.decode(text)


def _compacted(decoded: Any, streamed: Mapping[str, Compactor]) -> Any:
    """A whole decoded file with the arrays of ``streamed`` made compact, as :func:`_walk` makes them."""
    if type(decoded) is dict:
        for key, compact in streamed.items():
            items = decoded.get(key)
            if type(items) is list:
                shared: dict[str, str] = {}
                decoded[key] = [compact(value, shared) for value in items]
    return decoded


def _walk(text: str, streamed: Mapping[str, Compactor]) -> JsonObject:
    idx = _SPACE(text, 0).end()
    if text[idx : idx + 1] != "{":
        raise _Irregular
    idx = _SPACE(text, idx + 1).end()
    out: dict[str, Any] = {}
    if text[idx : idx + 1] == "}":
        return _end(text, idx + 1, out)
    while True:
        if text[idx : idx + 1] != '"':
            raise _Irregular
        key, idx = scanstring(text, idx + 1, True)
        idx = _SPACE(text, idx).end()
        if text[idx : idx + 1] != ":":
            raise _Irregular
        idx = _SPACE(text, idx + 1).end()
        compact = streamed.get(key)
        if compact is not None and text[idx : idx + 1] == "[":
            out[key], idx = _array(text, idx, compact)
        else:
            out[key], idx = _SCAN(text, idx)
        idx = _SPACE(text, idx).end()
        sep = text[idx : idx + 1]
        idx = _SPACE(text, idx + 1).end()
        if sep == "}":
            return _end(text, idx, out)
        if sep != ",":
            raise _Irregular


def _array(text: str, idx: int, compact: Compactor) -> tuple[list[Any], int]:
    """One array, each element decoded and made compact before the next is read; ``shared`` holds the strings
    elements repeat (summary keys, ``append``, ``0``), one copy each."""
    items: list[Any] = []
    shared: dict[str, str] = {}
    idx = _SPACE(text, idx + 1).end()
    if text[idx : idx + 1] == "]":
        return items, idx + 1
    while True:
        value, idx = _SCAN(text, idx)
        items.append(compact(value, shared))
        idx = _SPACE(text, idx).end()
        sep = text[idx : idx + 1]
        idx = _SPACE(text, idx + 1).end()
        if sep == "]":
            return items, idx
        if sep != ",":
            raise _Irregular


def _end(text: str, idx: int, out: JsonObject) -> JsonObject:
    if _SPACE(text, idx).end() != len(text):
        raise _Irregular
    return out
