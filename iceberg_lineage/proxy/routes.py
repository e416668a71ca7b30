"""Which Iceberg REST request a method and path are (open-api/rest-catalog-open-api.yaml), as far as lineage cares:
the requests whose bodies or answers the proxy reads, and every other one, which it only passes through."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote

Kind = Literal["config", "create", "register", "load", "commit", "drop", "rename", "transaction", "metrics",
               "other"]

#: The endpoint Iceberg Java posts scan and commit reports to; listed in ``/v1/config`` so that Java reports.
METRICS_ENDPOINT = "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics"
#: Kinds whose request body is read (bounded) once the upstream accepted it.
REQUEST_PARSED: frozenset[str] = frozenset({"create", "register", "commit", "rename", "transaction"})
#: Kinds whose answer is read (bounded): they carry table metadata.
RESPONSE_PARSED: frozenset[str] = frozenset({"create", "register", "commit", "load"})
#: Default separator of namespace levels in a path segment (``namespace-separator`` in Iceberg 1.10+).
NAMESPACE_SEPARATOR = "\x1f"


@dataclass(frozen=True)
class Route:
    kind: Kind
    prefix: str | None = None
    namespace: tuple[str, ...] = ()
    table: str | None = None

    @property
    def identifier(self) -> tuple[str, ...] | None:
        return (*self.namespace, self.table) if self.table is not None else None


_OTHER = Route("other")


def classify(method: str, raw_path: str) -> Route:
    """The route of a request; ``raw_path`` is the path as sent (percent-encoded), without the query."""
    segments = [unquote(s) for s in raw_path.split("/")[1:]]
    if segments == ["v1", "config"]:
        return Route("config") if method == "GET" else _OTHER
    if len(segments) < 2 or segments[0] != "v1":
        return _OTHER
    rest = segments[1:]
    prefix = None
    if rest[0] not in ("namespaces", "tables", "transactions"):
        prefix, rest = rest[0], rest[1:]
    if method == "POST" and rest == ["tables", "rename"]:
        return Route("rename", prefix)
    if method == "POST" and rest == ["transactions", "commit"]:
        return Route("transaction", prefix)
    if len(rest) < 3 or rest[0] != "namespaces":
        return _OTHER
    namespace = tuple(rest[1].split(NAMESPACE_SEPARATOR))
    if len(rest) == 3 and method == "POST" and rest[2] in ("tables", "register"):
        return Route("create" if rest[2] == "tables" else "register", prefix, namespace)
    if len(rest) == 5 and rest[2] == "tables" and rest[4] == "metrics" and method == "POST":
        return Route("metrics", prefix, namespace, rest[3])
    if len(rest) == 4 and rest[2] == "tables":
        kind = {"GET": "load", "POST": "commit", "DELETE": "drop"}.get(method)
        if kind is not None:
            return Route(kind, prefix, namespace, rest[3])  # type: ignore[arg-type]
    return _OTHER
