"""The transport chain of :class:`~iceberg_lineage.delivery.delivery.Delivery`, built through openlineage-python's
factory from the client's own transport: spool -> breaker -> the configured transport, rebuilt from its own
configuration with ours applied (HTTP hardened, Kafka confirmed, files written in one serialising pass, tapped). The
client's objects are left as they are; :func:`delivery_client` is a new client over the chain, with the original's configuration (filters, facets),
which sends events as they come: :class:`~iceberg_lineage.delivery.delivery.Delivery` hands it events the client's
configuration already prepared (:func:`~iceberg_lineage.delivery.preview.outgoing`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attr
from openlineage.client import OpenLineageClient
from openlineage.client.transport.composite import CompositeTransport
from openlineage.client.transport.file import FileTransport
from openlineage.client.transport.http import HttpTransport
from openlineage.client.transport.kafka import KafkaTransport
from openlineage.client.transport.transport import Transport

from iceberg_lineage.config import DEFAULT_REQUEST_DEADLINE_S
from iceberg_lineage.delivery.http import hardened_http_config, hardened_http_dict
from iceberg_lineage.delivery.jsonlines import lines_file
from iceberg_lineage.delivery.kafka import confirmed_kafka
from iceberg_lineage.delivery.spooler import SpoolTransport
from iceberg_lineage.delivery.transports import (
    BreakerTransport, TapTransport, Wrapped, build, create, tapped, type_of,
)

if TYPE_CHECKING:
    from iceberg_lineage.config import Settings


def _fan_out(transport: Transport) -> bool:
    """A composite that must reach all its targets (as opposed to a failover chain that stops at one success)."""
    return isinstance(transport, CompositeTransport) and transport.config.continue_on_success


def _children(config: dict[str, Any]) -> list[dict[str, Any]]:
    children = config.get("transports") or []
    if isinstance(children, dict):
        children = [{**child, "name": name} for name, child in children.items() if child]
    return [dict(child) for child in children]


def configured_dict(config: dict[str, Any], *, tap: bool = False,
                    deadline_s: float = DEFAULT_REQUEST_DEADLINE_S) -> dict[str, Any]:
    """A transport configuration with ours applied: HTTP hardened (each request ends within ``deadline_s``), Kafka
    confirmed, a file written with our serialiser (:mod:`~iceberg_lineage.delivery.jsonlines`), a fan-out
    composite's targets tapped (each target's failure counts, although the composite goes on), a tapped transport
    instance rebuilt by :func:`configured`."""
    kind = config.get("type")
    if kind == "http":
        config = hardened_http_dict(config, deadline_s)
    elif kind == "kafka":
        config = confirmed_kafka(config)
    elif kind == "file":
        config = lines_file(config)
    elif kind == "composite":
        fan_out = str(config.get("continue_on_success", True)).lower() == "true"
        config = {**config, "transports": [configured_dict(child, tap=fan_out, deadline_s=deadline_s)
                                           for child in _children(config)]}
    elif kind == type_of(TapTransport) and isinstance(config.get("transport"), Transport):
        return {**config, "transport": configured(config["transport"], tap=False, deadline_s=deadline_s)}
    return tapped(config) if tap else config


def configured(transport: Transport, *, tap: bool = True,
               deadline_s: float = DEFAULT_REQUEST_DEADLINE_S) -> Transport:
    """The client's transport rebuilt from its own configuration with ours applied (:func:`configured_dict`), and
    tapped (unless ``tap`` is False); a transport we have nothing to add to is used as it is."""
    if isinstance(transport, HttpTransport):
        rebuilt: Wrapped = HttpTransport(hardened_http_config(transport.config, deadline_s))
    elif isinstance(transport, KafkaTransport):
        rebuilt = create(confirmed_kafka(transport))
    elif type(transport) is FileTransport:  # a subclass may write otherwise
        rebuilt = create(lines_file(transport))
    elif isinstance(transport, CompositeTransport):
        children = [configured_dict(child, tap=_fan_out(transport), deadline_s=deadline_s) for child in _children(
            {"transports": transport.config.transports})]
        rebuilt = CompositeTransport(attr.evolve(transport.config, transports=children))
        if _fan_out(transport):  # its targets are tapped
            return rebuilt
    else:
        rebuilt = transport
    return create(tapped(rebuilt)) if tap else build(rebuilt)


class _PreparedClient(OpenLineageClient):
    """A client whose events were prepared by a client of its configuration (its additions made, its filters
    applied): it hands them to its transport as they are, rather than preparing them once more."""

    def emit(self, event: Any) -> None:
        self.transport.emit(event)


def delivery_client(client: OpenLineageClient, settings: Settings, destination: str | None) -> OpenLineageClient:
    """A client over spool -> breaker -> :func:`configured` ``client.transport``, for prepared events."""
    chain = create({
        "type": type_of(SpoolTransport), "path": settings.spool.path, "max_bytes": settings.spool.max_bytes,
        "max_rejections": settings.spool.max_rejections, "destination": destination,
        "transport": {"type": type_of(BreakerTransport), "cooldown_s": settings.delivery.breaker_cooldown_s,
                      "transport": configured(client.transport, deadline_s=settings.delivery.request_deadline_s)},
    })
    return _PreparedClient(transport=chain, config=client.user_defined_config)
