"""What the proxy knows of a table's metadata: the last metadata relayed per table (an :class:`LruCache` of
:class:`LoadResult`), and one load with the proxy's own credentials (:class:`TableLoader`) where nothing was relayed.
Both ends use them: the lineage process builds events from the cache; a serving process loads a table before
relaying its drop.

Own loads run on the loader's own threads with a socket timeout of their own (``proxy.own_load_timeout_s``), and a
caller waits for one at most that long: a hung catalog never takes the threads that relay requests (aiohttp resolves
host names on the default pool) nor holds lineage behind one table; the stuck thread ends with its socket timeout.
"""
from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Mapping, Sequence, TypeVar

from iceberg_lineage.delivery.failure_log import FailureLog
from iceberg_lineage.read.rest import rest_table
from iceberg_lineage.read.source import LoadedTable

if TYPE_CHECKING:
    from pyiceberg.catalog.rest import RestCatalog
    from requests import PreparedRequest, Response

LOG = logging.getLogger(__name__)
log_once = FailureLog(LOG)

Key = tuple  # (prefix, *namespace, table)
V = TypeVar("V")
#: Threads of own loads per process: a few tables at a time; more wait for one of them.
OWN_LOAD_THREADS = 4


def cache_key(prefix: str | None, identifier: Sequence[str]) -> Key:
    return (prefix, *identifier)


@dataclass(frozen=True)
class LoadResult:
    """A table's ``LoadTableResult`` as the proxy keeps it: the metadata and its location, never the answer's
    ``config`` (vended credentials are not kept)."""

    metadata_location: str | None
    metadata: Mapping[str, Any]

    def body(self) -> bytes:
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


class TableLoader:
    """Loads tables through the upstream with the proxy's own catalog properties (``--io-property``), never an
    engine's credentials: PyIceberg's ``RestCatalog`` (its OAuth2 flow included), created on first use, on
    :data:`OWN_LOAD_THREADS` threads of its own, each request bounded by ``timeout_s``."""

    def __init__(self, upstream: str, io_properties: Mapping[str, str], timeout_s: float) -> None:
        self.upstream, self.io_properties, self.timeout_s = upstream, dict(io_properties), timeout_s
        self._catalog: RestCatalog | None = None
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def submit(self, identifier: Sequence[str]) -> Future[LoadResult | None]:
        """Start a load on the loader's threads (a serving process awaits it with ``asyncio.wrap_future``)."""
        with self._lock:
            if self._pool is None:  # made on first use: a forked serving process makes its own
                self._pool = ThreadPoolExecutor(OWN_LOAD_THREADS, thread_name_prefix="iceberg-lineage-own-load")
        return self._pool.submit(self._load, tuple(identifier))

    def load(self, identifier: Sequence[str]) -> LoadResult | None:
        """One load, waited for at most ``timeout_s``; None when it failed or did not answer in time."""
        try:
            return self.submit(identifier).result(self.timeout_s)
        except FutureTimeout:
            log_once("loading a table with the proxy's own credentials",
                     TimeoutError(f"no answer for {'.'.join(identifier)} in {self.timeout_s:g} s"))
            return None

    def _load(self, identifier: tuple[str, ...]) -> LoadResult | None:
        try:
            table = self._own().load_table(identifier)
        except Exception as exc:  # noqa: BLE001 - lineage never changes a response
            log_once("loading a table with the proxy's own credentials", exc)
            return None
        return LoadResult(table.metadata_location,
                          json.loads(table.metadata.model_dump_json(by_alias=True, exclude_none=True)))

    def _own(self) -> RestCatalog:
        with self._lock:
            if self._catalog is None:
                self._catalog = _timed_catalog(self.timeout_s)(
                    "iceberg-lineage-proxy", **{**self.io_properties, "uri": self.upstream})
            return self._catalog


def _timed_catalog(timeout_s: float) -> type:
    """PyIceberg's ``RestCatalog`` whose HTTP session gives every request a connect and read timeout (PyIceberg
    sets none): through ``requests``' own extension point, a mounted adapter."""
    from pyiceberg.catalog.rest import RestCatalog
    from requests import Session
    from requests.adapters import HTTPAdapter

    class TimedAdapter(HTTPAdapter):
        def send(self, request: PreparedRequest, **kwargs: object) -> Response:  # type: ignore[override]
            kwargs["timeout"] = kwargs.get("timeout") or timeout_s
            return super().send(request, **kwargs)

    class TimedRestCatalog(RestCatalog):
        def _create_session(self) -> Session:
            session = super()._create_session()
            for scheme in ("http://", "https://"):
                session.mount(scheme, TimedAdapter())
            return session

    return TimedRestCatalog


class RelayedTables:
    """The lineage process's tables: the metadata last relayed per table (at most ``cache_size`` tables), else one
    load with the proxy's own credentials; as PyIceberg tables named as engines name them (``public_uri``)."""

    def __init__(self, loader: TableLoader, cache_size: int, *, public_uri: str,
                 io_properties: Mapping[str, str]) -> None:
        self.loader, self.public_uri, self.io_properties = loader, public_uri, dict(io_properties)
        self.cache: LruCache[LoadResult] = LruCache(cache_size)

    def get(self, prefix: str | None, identifier: Sequence[str]) -> LoadResult | None:
        return self.cache.get(cache_key(prefix, identifier))

    def put(self, prefix: str | None, identifier: Sequence[str], loaded: LoadResult) -> None:
        self.cache.put(cache_key(prefix, identifier), loaded)

    def pop(self, prefix: str | None, identifier: Sequence[str]) -> LoadResult | None:
        return self.cache.pop(cache_key(prefix, identifier))

    def load(self, prefix: str | None, identifier: Sequence[str]) -> LoadResult | None:
        """One load through the upstream with the proxy's own catalog properties (bounded), kept when it came."""
        loaded = self.loader.load(identifier)
        if loaded is not None:
            self.put(prefix, identifier, loaded)
        return loaded

    def table(self, prefix: str | None, identifier: Sequence[str], loaded: LoadResult) -> LoadedTable:
        """``loaded`` as a table of the REST catalog ``prefix``."""
        return rest_table(loaded.metadata, loaded.metadata_location, tuple(identifier),
                          catalog_name=prefix or "rest", uri=self.public_uri, io_properties=self.io_properties)

    def table_of(self, prefix: str | None, identifier: Sequence[str]) -> LoadedTable | None:
        """The table as last relayed, else as one load with the proxy's own credentials; None when neither."""
        loaded = self.get(prefix, identifier) or self.load(prefix, identifier)
        return self.table(prefix, identifier, loaded) if loaded is not None else None
