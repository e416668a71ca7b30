"""The HTTP transport's hardening, handed to openlineage-python's ``HttpTransport`` through its configuration (the
``adapter`` its config accepts), never by changing the transport.

Retries stay openlineage-python's (urllib3, from the configured ``retry``); the adapter adds 429 to the statuses
retried, bounds how long a ``Retry-After`` may make it wait, and never retries a POST after a read timeout
(``read=0``: the server may have it; the event is spooled and a replay may repeat it, while a silent server is asked
once, not six times). Everything else of the configured retry is kept, connect retries included; a configuration
that brings its own adapter is left alone.

The ``requests`` session handed in the same configuration (:class:`LineageSession`) never follows a redirect that
turns the POST into a GET (301, 302, 303: the event would be lost while counted as sent; 307 and 308 keep the body
and are followed), and reads at most :data:`MAX_ANSWER_BYTES` of any answer (an endless or huge body, decompressed
or not, is cut there: the transports only need the status).
"""
from __future__ import annotations

import inspect
from typing import Any
from urllib.parse import urljoin, urlsplit

import attr
import requests
from openlineage.client.transport.http import HttpConfig
from openlineage.client.transport.http_common import DEFAULT_RETRY_CONFIG
from requests.adapters import HTTPAdapter
from urllib3.util import Retry

from iceberg_lineage.delivery.failures import RedirectRefused

#: The most of an answer's body that is read (the rest is dropped with the connection).
MAX_ANSWER_BYTES = 64 * 1024
#: Redirects that make ``requests`` resend a POST as a GET, without its body.
METHOD_CHANGING = frozenset({301, 302, 303})
#: The longest a server's Retry-After may hold one retry (urllib3's own bound is six hours).
RETRY_AFTER_MAX = 10
_RETRY_AFTER_BOUNDABLE = "retry_after_max" in inspect.signature(Retry.__init__).parameters


def hardened_retry(retry: dict[str, Any]) -> dict[str, Any]:
    """The configured retry with 429 retried, ``Retry-After`` bounded and no retry after a read timeout."""
    hardened = {**retry, "read": 0, "status_forcelist": sorted({*(retry.get("status_forcelist") or ()), 429})}
    if _RETRY_AFTER_BOUNDABLE:
        hardened.setdefault("retry_after_max", RETRY_AFTER_MAX)
    else:
        hardened.setdefault("respect_retry_after_header", False)
    return hardened


def hardened_adapter(retry: dict[str, Any]) -> HTTPAdapter:
    return HTTPAdapter(max_retries=Retry(**hardened_retry(retry)))


class LineageSession(requests.Session):
    """A ``requests`` session that refuses method-changing redirects and bounds what it reads of an answer."""

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:  # noqa: ANN401
        response = super().send(request, **{**kwargs, "stream": True})
        if not response._content_consumed:  # noqa: SLF001 - requests' own flag: the body was not read yet
            body = response.raw.read(MAX_ANSWER_BYTES + 1, decode_content=True) or b""
            response._content = body[:MAX_ANSWER_BYTES]  # noqa: SLF001 - what ``content`` returns from now on
            response._content_consumed = True  # noqa: SLF001
            response.close()
        return response

    def rebuild_method(self, prepared_request: requests.PreparedRequest, response: requests.Response) -> None:
        if response.status_code in METHOD_CHANGING and prepared_request.method != "HEAD":
            target = urlsplit(urljoin(response.url, response.headers.get("location", "")))
            where = f"{target.scheme}://{target.hostname}" + (f":{target.port}" if target.port else "")
            raise RedirectRefused(f"HTTP {response.status_code} redirect to {where} not followed")
        super().rebuild_method(prepared_request, response)


def hardened_http_config(config: HttpConfig) -> HttpConfig:
    """A copy of an HTTP transport's configuration with :func:`hardened_adapter` and a :class:`LineageSession`
    (an adapter or a session the configuration brings is kept)."""
    return attr.evolve(config, adapter=config.adapter or hardened_adapter(config.retry),
                       session=config.session or LineageSession())


def hardened_http_dict(config: dict[str, Any]) -> dict[str, Any]:
    """An ``http`` transport configuration (``openlineage.yml``) with :func:`hardened_adapter` and a
    :class:`LineageSession` added."""
    retry = {**DEFAULT_RETRY_CONFIG, **(config.get("retry") or {})}
    return {**config, "adapter": config.get("adapter") or hardened_adapter(retry),
            "session": config.get("session") or LineageSession()}
