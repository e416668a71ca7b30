"""Where a scan's events go, recorded per table in the state, so that a scan never marks snapshots as sent that went
somewhere else than the history before them: a scan started from another folder, where ``./openlineage.yml`` is not
found, would otherwise send to the default file and record the snapshots as emitted.

A destination is the transport's type and its URL or path, never a secret: no userinfo, no query string, no header,
no Kafka credential; a file path is absolute (a relative one means another file in another folder). A composite
transport is described by its targets, sorted, so the same configuration always reads the same.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Iterable
from urllib.parse import urljoin

from iceberg_lineage.errors import ConfigError
from iceberg_lineage.redact import scrub, strip_userinfo
from iceberg_lineage.scan.discovery import TableFilter

if TYPE_CHECKING:
    from openlineage.client.transport.transport import Transport

    from iceberg_lineage.state.store import StateStore

#: The flag that accepts a new destination.
NEW_DESTINATION_FLAG = "--new-destination"
#: The destination of a disabled client (``OPENLINEAGE_DISABLED=true``): it sends, and so records, nothing.
DISABLED = "nowhere (OPENLINEAGE_DISABLED)"


class DestinationChanged(ConfigError):
    """The configured transport is not where the tables' events went so far (CLI exit code 2)."""


def destination_of(transport: Transport) -> str:
    """The transport as recorded in the state: ``http https://host/api/v1/lineage``, ``file /abs/events.jsonl``,
    ``kafka broker:9092/topic``, ``composite[...]``; no secret (see the module)."""
    from openlineage.client.transport.composite import CompositeTransport
    from openlineage.client.transport.file import FileTransport
    from openlineage.client.transport.noop import NoopTransport

    if isinstance(transport, CompositeTransport):
        return f"composite[{', '.join(sorted(destination_of(t) for t in transport.transports))}]"
    inner = getattr(transport, "transport", None)
    if inner is not None and transport.kind == "transform":
        return f"transform[{destination_of(inner)}]"
    if isinstance(transport, FileTransport):
        return f"file {Path(transport.config.log_file_path).expanduser().absolute()}"
    if isinstance(transport, NoopTransport):
        return DISABLED
    config = getattr(transport, "config", None)
    url = getattr(config, "url", None)
    if url:
        return f"{transport.kind} {_bare(urljoin(str(url), getattr(config, 'endpoint', '') or ''))}"
    topic = getattr(config, "topic", None)
    if topic:
        servers = (getattr(config, "config", None) or {}).get("bootstrap.servers", "")
        return scrub(f"{transport.kind} {_bare(str(servers))}/{topic}")
    return str(transport.kind)


def _bare(url: str) -> str:
    """A URL without userinfo, query string or fragment (a token may travel in any of them)."""
    return scrub(strip_userinfo(url).split("?", 1)[0].split("#", 1)[0])


def check_destination(store: StateStore, catalogs: Iterable[str], filters: TableFilter, destination: str, *,
                      accept: bool) -> int:
    """Record ``destination`` for the tables in scope (``catalogs`` and ``filters``), or raise
    :class:`DestinationChanged` naming both destinations when some of them went elsewhere, unless ``accept``: then
    those tables' watermarks are reset, so their history goes to the new destination. Returns how many were reset.
    Tables without a recorded destination (state files from before schema version 4) take this one."""
    names = set(catalogs)
    in_scope = [(table, went) for table, went in store.destinations()
                if table.catalog in names and filters.wants(table.catalog, table.identifier)]
    elsewhere = Counter(went for _, went in in_scope if went is not None and went != destination)
    if elsewhere and not accept:
        (previous, count), *others = elsewhere.most_common()
        more = f" (and {sum(n for _, n in others)} more to other destinations)" if others else ""
        raise DestinationChanged(
            f"destination changed: the events of {count} table(s) went to {previous}{more}, this scan would send to "
            f"{destination}; check the OpenLineage configuration (openlineage.yml is looked for in OPENLINEAGE_CONFIG, "
            f"the current directory, then ~/.openlineage), or pass {NEW_DESTINATION_FLAG} to send their history there")
    if destination == DISABLED:  # nothing is sent, nothing advances: nothing to record either
        if accept:
            raise ConfigError(f"{NEW_DESTINATION_FLAG} needs a destination, but OpenLineage is disabled "
                              "(OPENLINEAGE_DISABLED)")
        return 0
    reset = [table.identity for table, went in in_scope if went is not None and went != destination]
    store.send_to(destination, [table.identity for table, _ in in_scope], reset=reset)
    return len(reset)
