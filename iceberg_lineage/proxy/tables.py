"""What the bridge knows of a table's metadata: the last metadata relayed per table (an :class:`LruCache`), and
one load with the bridge's own credentials (:class:`OwnCatalog`) where nothing was relayed. Both ends use them: the
lineage process builds events from the cache; a serving process loads a table before relaying its drop."""
from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Generic, Mapping, Sequence, TypeVar

from iceberg_lineage.delivery.failure_log import FailureLog

LOG = logging.getLogger(__name__)
log_once = FailureLog(LOG)

Key = tuple  # (prefix, *namespace, table)
V = TypeVar("V")


def cache_key(prefix: str | None, identifier: Sequence[str]) -> Key:
    return (prefix, *identifier)


@dataclass(frozen=True)
class Known:
    """A table's metadata as last relayed (never the answer's ``config``: vended credentials are not kept)."""

    metadata_location: str | None
    metadata: Mapping[str, Any]

    def load_result(self) -> bytes:
        """As a ``LoadTableResult`` body, without ``config``."""
        return json.dumps({"metadata-location": self.metadata_location, "metadata": self.metadata}).encode()


class LruCache(Generic[V]):
    """Per table, the latest value (the lineage process: its metadata as last relayed; a serving process: that it
    sent it), at most ``size`` tables, the least recently used first out; thread-safe."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict[Key, V] = OrderedDict()

    def get(self, key: Key) -> V | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
            return entry

    def put(self, key: Key, entry: V) -> None:
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def pop(self, key: Key) -> V | None:
        with self._lock:
            return self._entries.pop(key, None)

    def __contains__(self, key: Key) -> bool:
        with self._lock:
            return key in self._entries


class OwnCatalog:
    """Loads through the upstream with the bridge's own catalog properties (``--io-property``), never an engine's
    credentials; PyIceberg's ``RestCatalog`` (its OAuth2 flow included), created on first use."""

    def __init__(self, upstream: str, io_properties: Mapping[str, str]) -> None:
        self.upstream, self.io_properties = upstream, dict(io_properties)
        self._catalog: Any = None
        self._lock = threading.Lock()

    def load(self, identifier: Sequence[str]) -> Known | None:
        try:
            table = self._own().load_table(tuple(identifier))
        except Exception as exc:  # noqa: BLE001 - lineage never changes a response
            log_once("loading a table with the proxy's own credentials", exc)
            return None
        return Known(table.metadata_location,
                     json.loads(table.metadata.model_dump_json(by_alias=True, exclude_none=True)))

    def _own(self) -> Any:
        with self._lock:
            if self._catalog is None:
                from pyiceberg.catalog.rest import RestCatalog

                self._catalog = RestCatalog("iceberg-lineage-proxy", **{**self.io_properties, "uri": self.upstream})
            return self._catalog
