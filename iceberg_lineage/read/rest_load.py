"""A REST catalog's ``loadTable`` with its ``ETag``, so that a rescan can ask "changed since?" instead of loading.

Iceberg's REST spec lets ``loadTable`` answer with an ``ETag`` and answer a request carrying it in ``If-None-Match``
with 304 Not Modified. The ETag is optional (SeaweedFS sends none; Iceberg's own server does since 1.11) and differs
per ``snapshots=`` value. PyIceberg 0.12 neither sends ``If-None-Match`` nor shows the answer's headers, so this is
its ``RestCatalog.load_table`` made on the catalog's own session (its auth, headers, retries on an expired token),
with the one header added, and the answer's ETag kept. ETags are used as the server sent them, never made up.

The request asks for an unencoded answer: under Jetty's compression (Iceberg's own server) a gzip answer carries its
own ETag (``<etag>--gzip``) that the server then never matches against ``If-None-Match``, so a compressed load could
never be answered 304.

Only PyIceberg's own ``RestCatalog`` class is asked this way (a subclass may load differently). Anything else, or
anything unexpected in PyIceberg's internals, takes ``load_table`` as ever.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.table import Table

NOT_MODIFIED = 304


@dataclass(frozen=True)
class RestLoad:
    """A load's outcome: the table (``None``: not modified since ``etag``), and the ETag the server sent with it."""

    table: Table | None
    etag: str | None


#: What :func:`load_with_etag` uses of a PyIceberg ``RestCatalog`` (0.12), beside its module's names.
_INTERNALS = ("_session", "_check_endpoint", "url", "_split_identifier_for_path", "_response_to_table",
              "identifier_to_tuple", "properties")


def asks_etag(catalog: Any) -> bool:
    """Whether ``catalog`` is PyIceberg's own REST catalog with every internal :func:`load_with_etag` uses; if not
    (another class, another PyIceberg), its tables are loaded with ``load_table``."""
    cls = type(catalog)
    if cls.__module__ != "pyiceberg.catalog.rest" or cls.__name__ != "RestCatalog" \
            or not all(hasattr(catalog, name) for name in _INTERNALS):
        return False
    try:
        from pyiceberg.catalog.rest import (  # noqa: F401 - present, or no conditional load
            _RETRY_ARGS, SNAPSHOT_LOADING_MODE, Capability, Endpoints, TableResponse,
        )
        from pyiceberg.catalog.rest.response import _handle_non_200_response  # noqa: F401
    except ImportError:
        return False
    return True


def load_with_etag(catalog: Catalog, identifier: tuple[str, ...], etag: str | None) -> RestLoad:
    """``catalog.load_table(identifier)``, conditional on ``etag`` when one is given. Raises as ``load_table`` does
    (``NoSuchTableError`` on 404, the server's error otherwise)."""
    return _retrying()(catalog, identifier, etag)


@functools.cache
def _retrying() -> Callable[[Any, tuple[str, ...], str | None], RestLoad]:
    """:func:`_load` under PyIceberg's own retry policy (a refreshed token on 419/401), wrapped once, not per table."""
    from pyiceberg.catalog.rest import _RETRY_ARGS
    from tenacity import retry

    return retry(**_RETRY_ARGS)(_load)


def _load(catalog: Any, identifier: tuple[str, ...], etag: str | None) -> RestLoad:
    from pyiceberg.catalog.rest import SNAPSHOT_LOADING_MODE, Capability, Endpoints, TableResponse
    from pyiceberg.catalog.rest.response import _handle_non_200_response
    from pyiceberg.exceptions import NoSuchTableError
    from requests import HTTPError

    catalog._check_endpoint(Capability.V1_LOAD_TABLE)
    mode = catalog.properties.get(SNAPSHOT_LOADING_MODE)
    if mode and mode not in {"all", "refs"}:
        raise ValueError(f"Invalid snapshot-loading-mode: {mode}")
    headers = {"Accept-Encoding": "identity"}
    if etag is not None:
        headers["If-None-Match"] = etag
    response = catalog._session.get(
        catalog.url(Endpoints.load_table, prefixed=True, **catalog._split_identifier_for_path(identifier)),
        params={"snapshots": mode} if mode else {}, headers=headers,
    )
    if response.status_code == NOT_MODIFIED and etag is not None:
        return RestLoad(None, None)  # the recorded ETag stays as it is
    try:
        response.raise_for_status()
    except HTTPError as exc:
        _handle_non_200_response(exc, {404: NoSuchTableError})
    answer = TableResponse.model_validate_json(response.text)
    table = catalog._response_to_table(catalog.identifier_to_tuple(identifier), answer)
    return RestLoad(table, response.headers.get("ETag") or None)
