"""Java ``RESTMetricsReporter``: POSTs a ``ReportMetricsRequest`` to the table's REST ``/metrics`` endpoint.

For a PyIceberg ``RestCatalog`` (bound through ``bind_catalog``) it reuses the catalog's URI, prefix and
authenticated session. Otherwise it needs an explicit ``url``. Like Java, requests are sent from one
background thread so a slow server never slows a scan or a commit; failures (including any status other
than 204) are only logged. ``flush()`` waits for pending requests; ``close()`` also stops the thread.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from scan_reporters.reports import MetricsReport, to_rest_request

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog

LOG = logging.getLogger("scan_reporters")
_METRICS_PATH = "namespaces/{namespace}/tables/{table}/metrics"


class RestMetricsReporter:
    """Options (``initialize`` or keyword):

    * ``url``: catalog base URI (``http://host:port``, ``/v1/...`` is appended); overrides a bound RestCatalog;
    * ``prefix``: path prefix after ``/v1/``;
    * ``token``: sends ``Authorization: Bearer <token>`` (explicit-URL mode);
    * ``timeout``: seconds per request (default 10);
    * ``namespace-separator``: URL-encoded separator of multi-level namespaces (default ``%1F``).
    """

    def __init__(
        self,
        url: str | None = None,
        prefix: str | None = None,
        token: str | None = None,
        timeout: float = 10.0,
        namespace_separator: str = "%1F",
    ) -> None:
        self.url = url
        self.prefix = prefix
        self.token = token
        self.timeout = timeout
        self.namespace_separator = namespace_separator
        self._catalog: Catalog | None = None
        self._session: Any = None
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._pending: set[Future[None]] = set()

    def initialize(self, properties: dict[str, str]) -> None:
        self.url = properties.get("url", self.url)
        self.prefix = properties.get("prefix", self.prefix)
        self.token = properties.get("token", self.token)
        self.timeout = float(properties.get("timeout", self.timeout))
        self.namespace_separator = properties.get("namespace-separator", self.namespace_separator)

    def bind_catalog(self, catalog: Catalog) -> None:
        self._catalog = catalog

    def _rest_catalog(self) -> Any:
        from pyiceberg.catalog.rest import RestCatalog

        return self._catalog if self.url is None and isinstance(self._catalog, RestCatalog) else None

    def _identifier(self, table_name: str) -> tuple[str, ...]:
        """Report table names are ``<catalog>.<namespace...>.<table>``; names containing dots are ambiguous."""
        if self._catalog is not None and table_name.startswith(f"{self._catalog.name}."):
            table_name = table_name[len(self._catalog.name) + 1 :]
        return tuple(table_name.split("."))

    def endpoint(self, table_name: str) -> str:
        identifier = self._identifier(table_name)
        rest = self._rest_catalog()
        if rest is not None:
            return str(rest.url(_METRICS_PATH, prefixed=True, **rest._split_identifier_for_path(identifier)))
        if not self.url:
            raise ValueError("rest metrics reporter needs option metrics-reporter.rest.url or a RestCatalog")
        base = self.url.rstrip("/") + "/v1/"
        if self.prefix:
            base += self.prefix.strip("/") + "/"
        namespace = self.namespace_separator.join(quote(part, safe="") for part in identifier[:-1])
        return base + _METRICS_PATH.format(namespace=namespace, table=quote(identifier[-1], safe=""))

    def _post(self, url: str, body: dict[str, Any]) -> None:
        try:
            rest = self._rest_catalog()
            if rest is not None:
                response = rest._session.post(url, json=body, timeout=self.timeout)
            else:
                if self._session is None:
                    import requests

                    self._session = requests.Session()
                headers = {"Content-Type": "application/json"}
                if self.token:
                    headers["Authorization"] = f"Bearer {self.token}"
                response = self._session.post(url, json=body, headers=headers, timeout=self.timeout)
            if response.status_code != 204:
                LOG.error("Metrics report to %s got HTTP %s: %s", url, response.status_code, response.text[:500])
        except Exception:  # noqa: BLE001 - reporting must never raise into user code
            LOG.exception("Failed to send metrics report to %s", url)

    def report(self, report: MetricsReport) -> None:
        url = self.endpoint(report.table_name)
        body = to_rest_request(report)
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rest-metrics-reporter")
            future = self._executor.submit(self._post, url, body)
            self._pending.add(future)
        future.add_done_callback(self._pending.discard)

    def flush(self, timeout: float | None = None) -> None:
        with self._lock:
            pending = list(self._pending)
        wait(pending, timeout=timeout)

    def close(self) -> None:
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)
