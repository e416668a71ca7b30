"""What the bridge reports of the requests it relayed: every one the upstream accepted becomes an
:class:`Exchange`, a capture record queued on the lineage process's :class:`~iceberg_lineage.delivery.emitter.Emitter`,
whose events are built on the emitter's thread, off the request path, and sent through the one delivery path.

- A commit's new snapshots (its ``add-snapshot`` updates) get the scanner's per-snapshot run, START and COMPLETE
  (the same builder, runId and job name), at ``--depth``; a snapshot tagged by the hook is recorded as the hook's,
  unsent. The :class:`~iceberg_lineage.proxy.applications.ApplicationTracker` adds the engine application's reads and
  holds the COMPLETE (never the START) for the engine's commit report.
- create, register, a staged create once committed: CREATE; drop: DROP; rename: RENAME; schema, spec, sort-order
  and property updates: ALTER with the schema diff; all with the scanner's lifecycle runIds and job names.
- ``transactions/commit`` (204, no body): the snapshots from the request, applied to the metadata the bridge last
  relayed for the table, or to one load with the bridge's own credentials (never the engine's).
"""
from __future__ import annotations

import datetime as dt
import json
import logging
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.delivery import DeliveryResult
from iceberg_lineage.delivery.emitter import Emitter, FailureLog
from iceberg_lineage.delivery.webhook import announce
from iceberg_lineage.lineage import events as ev
from iceberg_lineage.lineage.checks import table_alert_runs
from iceberg_lineage.lineage.facets import ms_to_datetime
from iceberg_lineage.lineage.tags import RUN_ID_PROPERTY, tagged
from iceberg_lineage.proxy.applications import ApplicationTracker
from iceberg_lineage.proxy.capture import Capture
from iceberg_lineage.proxy.forward import decoded
from iceberg_lineage.proxy.routes import Route
from iceberg_lineage.proxy.tables import Key, Known, LruCache, OwnCatalog, cache_key
from iceberg_lineage.read.rest import added_snapshot_ids, alters, apply_updates, creates, rest_table
from iceberg_lineage.read.source import LoadedTable
from iceberg_lineage.state.bridge import BridgedSnapshot, BridgeState

LOG = logging.getLogger(__name__)
log_once = FailureLog(LOG)


@dataclass
class Exchange:
    """A serving process's :class:`~iceberg_lineage.proxy.capture.Capture` on the lineage process's emitter, and what
    was built of it."""

    reporter: "Reporter"
    capture: Capture
    #: per built event: the snapshot it reports (None for a lifecycle run), the table's identity, the runId
    built: list[tuple[int | None, str, str]] = field(default_factory=list)

    @property
    def route(self) -> Route:
        return self.capture.route

    def events(self) -> Sequence[Any]:
        return self.reporter.events_of(self)

    def settled(self, results: Sequence[DeliveryResult]) -> None:
        self.reporter.settled(self, results)


class Reporter:
    """Builds the events of exchanges and records what became of them; one per bridge, in its lineage process."""

    def __init__(self, emitter: Emitter, settings: Settings, *, upstream: str, public_uri: str, depth: str,
                 io_properties: Mapping[str, str], state: BridgeState | None, cache_size: int | None = None) -> None:
        self.emitter, self.settings, self.depth = emitter, settings, depth
        self.upstream, self.public_uri = upstream, public_uri
        self.io_properties = dict(io_properties)
        self.cache: LruCache[Known] = LruCache(cache_size or settings.proxy_cache_tables)
        self.own = OwnCatalog(upstream, io_properties)
        self.state = state
        #: engine applications and commit reports (issue 16); set by the lineage process
        self.tracker: ApplicationTracker | None = None

    # -- the request path: queue, never build ------------------------------------------------------------------------
    def submit(self, exchange: Exchange) -> None:
        try:
            self.emitter.submit(exchange)
        except Exception as exc:  # noqa: BLE001 - lineage never changes a response
            log_once("queueing a lineage capture", exc)

    def key(self, prefix: str | None, identifier: Sequence[str]) -> Key:
        return cache_key(prefix, identifier)

    # -- the emitter's thread ----------------------------------------------------------------------------------------
    def events_of(self, exchange: Exchange) -> list[Any]:
        try:
            return self._build(exchange)
        except Exception as exc:  # noqa: BLE001 - a body we cannot read costs its events, nothing else
            log_once(f"reading a {exchange.route.kind} exchange", exc)
            return []

    def _build(self, x: Exchange) -> list[Any]:
        route, kind = x.route, x.route.kind
        request = self._json(x.capture.request, x.capture.request_encoding)
        response = self._json(x.capture.response, x.capture.response_encoding)
        if kind == "load":
            self._remember(route.prefix, route.identifier, response)
            return []
        if kind in ("create", "register"):
            if not isinstance(request, Mapping) or "name" not in request:
                return []
            ident = (*route.namespace, str(request["name"]))
            known = self._remember(route.prefix, ident, response)
            if known is None or (kind == "create" and request.get("stage-create")):
                return []  # a staged create counts once its commit succeeds
            table = self._table(ident, known, route.prefix)
            md = table.metadata
            when = ms_to_datetime(md.last_updated_ms or 0)
            # a registered table reuses a metadata file that may have been created (or registered) before
            run_id = ev.lifecycle_run_id(md.identity, "REGISTER", md.metadata_location, when) if kind == "register" \
                else None
            return self._lifecycle(x, table, ev.lifecycle_event(table, "CREATE", self.settings, run_id=run_id,
                                                                event_time=when))
        if kind == "commit":
            base = self.cache.get(self.key(route.prefix, route.identifier))
            known = self._remember(route.prefix, route.identifier, response)
            return self._commit(x, route.prefix, route.identifier, request, base, known)
        if kind == "transaction":
            return self._transaction(x, request)
        if kind == "drop":
            return self._drop(x)
        if kind == "rename":
            return self._rename(x, request)
        return []

    def _commit(self, x: Exchange, prefix: str | None, ident: tuple[str, ...], request: Any, base: Known | None,
                known: Known | None) -> list[Any]:
        if known is None or not isinstance(request, Mapping):
            return []
        updates, requirements = request.get("updates") or [], request.get("requirements") or []
        table = self._table(ident, known, prefix)
        out: list[Any] = []
        if creates(requirements):
            when = ms_to_datetime(table.metadata.last_updated_ms or 0)
            out += self._lifecycle(x, table, ev.lifecycle_event(table, "CREATE", self.settings, event_time=when))
            return out + self._snapshots(x, table, added_snapshot_ids(updates))
        base_schema = (base.metadata.get("current-schema-id") if base is not None
                       else _required(requirements, "assert-current-schema-id", "current-schema-id"))
        if alters(updates):
            base_refs = (base.metadata.get("refs") or {}) if base is not None else _refs_before(table, updates)
            when = ms_to_datetime(table.metadata.last_updated_ms or 0)
            out += self._lifecycle(x, table, ev.alter_event(table, self.settings, base_refs=base_refs,
                                                            base_schema_id=base_schema, event_time=when))
        snapshot_ids = added_snapshot_ids(updates)
        out += self._snapshots(x, table, snapshot_ids)
        return out + self._schema_alerts(x, table, base_schema, snapshot_ids)

    def _schema_alerts(self, x: Exchange, table: LoadedTable, base_schema: Any, snapshot_ids: list[int]) -> list[Any]:
        """A commit's schema alerts (log line, webhook) and their checks runs, for the snapshots the bridge reports
        and for a metadata-only commit; the hook announces its own snapshots'. Each checks event is recorded in
        ``built`` (no snapshot), which ``settled`` pairs with the delivery results by position."""
        md = table.metadata
        before = md.schemas.get(base_schema) if isinstance(base_schema, int) else None
        if before is None:
            return []
        ours = [sid for sid in snapshot_ids if md.snapshot_by_id(sid) is not None and not tagged(_summary(md, sid))]
        if snapshot_ids and not ours:
            return []
        alerts, checks = table_alert_runs(table, before, ours, self.settings)
        announce(alerts, self.settings)
        x.built.extend((None, md.identity, e.run.runId) for e in checks)
        return checks

    def _snapshots(self, x: Exchange, table: LoadedTable, snapshot_ids: list[int]) -> list[Any]:
        md = table.metadata
        present = [sid for sid in snapshot_ids if md.snapshot_by_id(sid) is not None]
        hooked = [sid for sid in present if tagged(_summary(md, sid))]
        if hooked and self.state is not None:
            self.state.record(BridgedSnapshot(md.identity, sid, "hook", _summary(md, sid).get(RUN_ID_PROPERTY), "hook")
                              for sid in hooked)
        ours = [sid for sid in present if sid not in hooked]
        if not ours:
            return []
        capture = dt.datetime.now(dt.timezone.utc)
        runs = ev.snapshot_runs(table, ours, self.settings, depth=self.depth, capture_time=capture)
        out: list[Any] = []
        for sid in ours:
            for event in runs.get(sid, ()):
                # a COMPLETE the tracker holds for its commit report goes out later, through the tracker
                now = [event] if self.tracker is None else self.tracker.hold(
                    x.route.prefix, table.identifier, md.identity, sid, _summary(md, sid), event)
                for sent in now:  # a START does not make the snapshot delivered: its COMPLETE does
                    x.built.append((None if sent.eventType.value == "START" else sid, md.identity, sent.run.runId))
                    out.append(sent)
        return out

    def _transaction(self, x: Exchange, request: Any) -> list[Any]:
        out: list[Any] = []
        changes = request.get("table-changes") if isinstance(request, Mapping) else None
        for change in changes or ():
            ident = _identifier(change.get("identifier") if isinstance(change, Mapping) else None)
            if ident is None:
                continue
            updates = change.get("updates") or []
            base = self.cache.get(self.key(x.route.prefix, ident))
            if base is not None:
                known = Known(None, apply_updates(base.metadata, updates))
            else:
                known = self._load(x.route.prefix, ident)  # after the commit: it holds the new snapshots
            if known is not None:
                self.cache.put(self.key(x.route.prefix, ident), known)
            out += self._commit(x, x.route.prefix, ident, change, base, known)
        return out

    def _drop(self, x: Exchange) -> list[Any]:
        known = self.cache.pop(self.key(x.route.prefix, x.route.identifier))
        if known is None:
            LOG.warning("iceberg-lineage proxy: %s was dropped before its metadata was known; no DROP event",
                        ".".join(x.route.identifier or ()))
            return []
        table = self._table(x.route.identifier, known, x.route.prefix)
        return self._lifecycle(x, table, ev.lifecycle_event(table, "DROP", self.settings))

    def _rename(self, x: Exchange, request: Any) -> list[Any]:
        if not isinstance(request, Mapping):
            return []
        source, target = _identifier(request.get("source")), _identifier(request.get("destination"))
        if source is None or target is None:
            return []
        known = self.cache.pop(self.key(x.route.prefix, source)) or self._load(x.route.prefix, target)
        if known is None:
            return []
        self.cache.put(self.key(x.route.prefix, target), known)
        table = self._table(target, known, x.route.prefix)
        return self._lifecycle(x, table, ev.lifecycle_event(table, "RENAME", self.settings,
                                                            previous_identifier=source))

    def _lifecycle(self, x: Exchange, table: LoadedTable, event: Any) -> list[Any]:
        """A lifecycle run as sent: START (unless ``events.start_events`` is off) and COMPLETE, no snapshot each."""
        sent = ev.with_start(event, self.settings)
        x.built.extend((None, table.metadata.identity, e.run.runId) for e in sent)
        return sent

    def settled(self, x: Exchange, results: Sequence[DeliveryResult]) -> None:
        if self.state is None:
            return
        rows = [BridgedSnapshot(identity, sid, "proxy", run_id, result.status)
                for (sid, identity, run_id), result in zip(x.built, results) if sid is not None]
        if rows:
            self.state.record(rows)

    # -- metadata --------------------------------------------------------------------------------------------------
    def _json(self, body: bytes | None, encoding: str | None) -> Any:
        if not body:
            return None
        return json.loads(decoded(body, encoding, self.settings.proxy_max_body_bytes))

    def _remember(self, prefix: str | None, ident: Sequence[str] | None, answer: Any) -> Known | None:
        """Cache the table metadata of an answer (LoadTableResult, CommitTableResponse), its ``config`` dropped."""
        if ident is None or not isinstance(answer, Mapping) or not isinstance(answer.get("metadata"), Mapping):
            return None
        known = Known(answer.get("metadata-location"), answer["metadata"])
        self.cache.put(self.key(prefix, ident), known)
        return known

    def _table(self, ident: Sequence[str] | None, known: Known, prefix: str | None) -> LoadedTable:
        return rest_table(known.metadata, known.metadata_location, tuple(ident or ()), catalog_name=prefix or "rest",
                          uri=self.public_uri, io_properties=self.io_properties)

    def table_of(self, prefix: str | None, ident: Sequence[str]) -> LoadedTable | None:
        """The table as last relayed, else as one load with the bridge's own credentials (a scan report's table)."""
        known = self.cache.get(self.key(prefix, ident)) or self._load(prefix, ident)
        return self._table(ident, known, prefix) if known is not None else None

    def _load(self, prefix: str | None, ident: Sequence[str]) -> Known | None:
        """One load through the upstream with the bridge's own catalog properties (``--io-property``)."""
        known = self.own.load(ident)
        if known is not None:
            self.cache.put(self.key(prefix, ident), known)
        return known


def _identifier(raw: Any) -> tuple[str, ...] | None:
    """A ``TableIdentifier`` (``{"namespace": [...], "name": ...}``) as a tuple."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("namespace"), list) or "name" not in raw:
        return None
    return (*(str(level) for level in raw["namespace"]), str(raw["name"]))


def _required(requirements: Sequence[Any], kind: str, key: str) -> Any:
    return next((r.get(key) for r in requirements if isinstance(r, Mapping) and r.get("type") == kind), None)


def _refs_before(table: LoadedTable, updates: Sequence[Any]) -> list[str]:
    """Without the metadata before a commit: its refs are today's, less those the commit set."""
    set_now = {u.get("ref-name") for u in updates if isinstance(u, Mapping) and u.get("action") == "set-snapshot-ref"}
    return [name for name in table.metadata.refs if name not in set_now]


def _summary(md: Any, snapshot_id: int) -> Mapping[str, str]:
    return md.snapshot_by_id(snapshot_id).summary
