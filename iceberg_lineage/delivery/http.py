"""The HTTP transport's hardening, handed to openlineage-python's ``HttpTransport`` through its configuration (the
``adapter`` its config accepts), never by changing the transport.

Retries stay openlineage-python's (urllib3, from the configured ``retry``); the adapter adds 429 to the statuses
retried, bounds how long a ``Retry-After`` may make it wait, and never retries a POST after a read timeout
(``read=0``: the server may have it; the event is spooled and a replay may repeat it, while a silent server is asked
once, not six times). Everything else of the configured retry is kept, connect retries included; a configuration
that brings its own adapter is left alone.
"""
from __future__ import annotations

import inspect
from typing import Any

import attr
from openlineage.client.transport.http import HttpConfig
from openlineage.client.transport.http_common import DEFAULT_RETRY_CONFIG
from requests.adapters import HTTPAdapter
from urllib3.util import Retry

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


def hardened_http_config(config: HttpConfig) -> HttpConfig:
    """A copy of an HTTP transport's configuration that mounts :func:`hardened_adapter`."""
    if config.adapter is not None:
        return config
    return attr.evolve(config, adapter=hardened_adapter(config.retry))


def hardened_http_dict(config: dict[str, Any]) -> dict[str, Any]:
    """An ``http`` transport configuration (``openlineage.yml``) with :func:`hardened_adapter` added."""
    if config.get("adapter") is not None:
        return config
    return {**config, "adapter": hardened_adapter({**DEFAULT_RETRY_CONFIG, **(config.get("retry") or {})})}
