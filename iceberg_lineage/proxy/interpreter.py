"""What the proxy reports of the requests it relayed: the lineage process's :class:`Interpreter` turns each
:class:`~iceberg_lineage.proxy.capture.Capture` into events and hands them to the
:class:`~iceberg_lineage.proxy.tracker.ApplicationTracker`, off the request path.

- A commit's new snapshots (its ``add-snapshot`` updates) get the scanner's per-snapshot run, START and COMPLETE
  (the same builder, runId and job name), at ``--depth``; a snapshot tagged by the hook is recorded as the hook's,
  unsent. The tracker adds the engine application's reads and holds the COMPLETE (never the START) for the engine's
  commit report.
- create, register, a staged create once committed: CREATE; drop: DROP; rename: RENAME; schema, spec, sort-order
  and property updates: ALTER with the schema diff; all with the scanner's lifecycle runIds and job names.
- ``transactions/commit`` (204, no body): the snapshots from the request, applied to the metadata the proxy last
  relayed for the table, or to one load with the proxy's own credentials (never the engine's).
- ``/metrics``: the scan or commit report, its filter literals and its ``metadata`` sanitised before anything reads
  it, for the tracker.
"""
from __future__ import annotations

import datetime as dt
import json
import logging
from typing import Mapping, Sequence, Union

from openlineage.client.event_v2 import RunEvent

from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.failure_log import FailureLog
from iceberg_lineage.delivery.webhook import announce
from iceberg_lineage.jsontypes import Json
from iceberg_lineage.lineage import events as ev
from iceberg_lineage.lineage.checks import table_alert_runs
from iceberg_lineage.lineage.engine_runs import REPORT_METADATA_KEYS
from iceberg_lineage.lineage.facets import ms_to_datetime
from iceberg_lineage.lineage.tags import RUN_ID_PROPERTY, tagged
from iceberg_lineage.proxy.capture import Capture
from iceberg_lineage.proxy.forward import decoded
from iceberg_lineage.proxy.outbox import Built, SnapshotRef
from iceberg_lineage.proxy.routes import Route
from iceberg_lineage.proxy.tables import LoadResult, RelayedTables
from iceberg_lineage.proxy.tracker import ApplicationTracker, CommitRun
from iceberg_lineage.read.metadata import MetadataFile
from iceberg_lineage.read.rest import added_snapshot_ids, alters, apply_updates, creates
from iceberg_lineage.read.source import LoadedTable
from iceberg_lineage.state.proxy_snapshots import ProxiedSnapshot, ProxySnapshots

LOG = logging.getLogger(__name__)
log_once = FailureLog(LOG)

Item = Union[Built, CommitRun]


class Interpreter:
    """Builds the events of captures; one per proxy, in its lineage process. Snapshots the hook reports are
    recorded in ``state`` as the hook's."""

    def __init__(self, settings: Settings, tables: RelayedTables, tracker: ApplicationTracker,
                 state: ProxySnapshots | None, *, depth: str) -> None:
        self.settings, self.tables, self.tracker, self.state, self.depth = settings, tables, tracker, state, depth

    def interpret(self, capture: Capture) -> None:
        try:
            if capture.route.kind == "metrics":
                self._report(capture)
            else:
                self.tracker.send(self.build(capture))
        except Exception as exc:  # noqa: BLE001 - a body we cannot read costs its events, nothing else
            log_once(f"reading a {capture.route.kind} capture", exc)

    def _report(self, capture: Capture) -> None:
        from scan_reporters.reports import CommitReport, ScanReport, from_rest_request

        route = capture.route
        if route.identifier is None or not capture.request:
            return
        report = from_rest_request(_sanitized(self._json(capture.request, capture.request_encoding)))
        if isinstance(report, (ScanReport, CommitReport)):  # else an unknown report-type, as Java's unknown()
            self.tracker.report(route.prefix, route.identifier, report)

    def build(self, capture: Capture) -> list[Item]:
        """The events of a relayed request, in the order they are sent."""
        route, kind = capture.route, capture.route.kind
        if capture.bodies_left_out:
            return self._reloaded(route, capture.elapsed_ms)
        request = self._json(capture.request, capture.request_encoding)
        response = self._json(capture.response, capture.response_encoding)
        if kind == "load":
            self._remember(route.prefix, route.identifier, response)
            return []
        if kind in ("create", "register"):
            return self._create(route, request, response)
        if kind == "commit" and route.identifier is not None:
            base = self.tables.get(route.prefix, route.identifier)
            loaded = self._remember(route.prefix, route.identifier, response)
            return self._commit(route.prefix, route.identifier, request, base, loaded, capture.elapsed_ms)
        if kind == "transaction":
            return self._transaction(route.prefix, request, capture.elapsed_ms)
        if kind == "drop":
            return self._drop(route)
        if kind == "rename":
            return self._rename(route.prefix, request)
        return []

    def _reloaded(self, route: Route, elapsed_ms: int | None) -> list[Item]:
        """A load or commit whose bodies the serving process left out (its queue was past ``proxy.queue_max_bytes``):
        the table loaded with the proxy's own credentials; a commit's snapshots are those the metadata relayed before
        did not have (without it, the current one). Other requests need their bodies: the scanner's catch-up reports
        what they changed."""
        if route.identifier is None or route.kind not in ("load", "commit"):
            log_once("reporting a request whose bodies were left out",
                     LookupError(f"a {route.kind} cannot be reported without its bodies"))
            return []
        base = self.tables.get(route.prefix, route.identifier)
        loaded = self.tables.load(route.prefix, route.identifier)
        if route.kind == "load" or loaded is None:
            return []
        table = self.tables.table(route.prefix, route.identifier, loaded)
        md = table.metadata
        if base is not None:
            before = {s.get("snapshot-id") for s in base.metadata.get("snapshots") or () if isinstance(s, Mapping)}
            added = [s.snapshot_id for s in md.snapshots if s.snapshot_id not in before]
        else:
            added = [md.current_snapshot_id] if md.current_snapshot_id not in (None, -1) else []
        return self._snapshots(route.prefix, table, added, elapsed_ms)

    def _create(self, route: Route, request: Json, response: Json) -> list[Item]:
        if not isinstance(request, Mapping) or "name" not in request:
            return []
        ident = (*route.namespace, str(request["name"]))
        loaded = self._remember(route.prefix, ident, response)
        if loaded is None or (route.kind == "create" and request.get("stage-create")):
            return []  # a staged create counts once its commit succeeds
        table = self.tables.table(route.prefix, ident, loaded)
        md = table.metadata
        when = ms_to_datetime(md.last_updated_ms or 0)
        # a registered table reuses a metadata file that may have been created (or registered) before
        run_id = ev.lifecycle_run_id(md.identity, "REGISTER", md.metadata_location, when) \
            if route.kind == "register" else None
        return _lifecycle(ev.lifecycle_event(table, "CREATE", self.settings, run_id=run_id, event_time=when),
                          self.settings)

    def _commit(self, prefix: str | None, ident: tuple[str, ...], request: Json, base: LoadResult | None,
                loaded: LoadResult | None, elapsed_ms: int | None) -> list[Item]:
        if loaded is None or not isinstance(request, Mapping):
            return []
        updates, requirements = request.get("updates") or [], request.get("requirements") or []
        table = self.tables.table(prefix, ident, loaded)
        out: list[Item] = []
        when = ms_to_datetime(table.metadata.last_updated_ms or 0)
        if creates(requirements):
            out += _lifecycle(ev.lifecycle_event(table, "CREATE", self.settings, event_time=when), self.settings)
            return out + self._snapshots(prefix, table, added_snapshot_ids(updates), elapsed_ms)
        base_schema = (base.metadata.get("current-schema-id") if base is not None
                       else _required(requirements, "assert-current-schema-id", "current-schema-id"))
        if alters(updates):
            base_refs = (base.metadata.get("refs") or {}) if base is not None else _refs_before(table, updates)
            out += _lifecycle(ev.alter_event(table, self.settings, base_refs=base_refs, base_schema_id=base_schema,
                                             event_time=when), self.settings)
        snapshot_ids = added_snapshot_ids(updates)
        out += self._snapshots(prefix, table, snapshot_ids, elapsed_ms)
        return out + self._schema_alerts(table, base_schema, snapshot_ids)

    def _schema_alerts(self, table: LoadedTable, base_schema: Json, snapshot_ids: list[int]) -> list[Item]:
        """A commit's schema alerts (log line, webhook) and their checks runs, for the snapshots the proxy reports
        and for a metadata-only commit; the hook announces its own snapshots'."""
        md = table.metadata
        before = md.schemas.get(base_schema) if isinstance(base_schema, int) else None
        if before is None:
            return []
        ours = [sid for sid in snapshot_ids if md.snapshot_by_id(sid) is not None and not tagged(_summary(md, sid))]
        if snapshot_ids and not ours:
            return []
        alerts, checks = table_alert_runs(table, before, ours, self.settings)
        announce(alerts, self.settings)
        return [Built(e) for e in checks]

    def _snapshots(self, prefix: str | None, table: LoadedTable, snapshot_ids: list[int],
                   elapsed_ms: int | None) -> list[Item]:
        """Each new snapshot's START and COMPLETE; the run lasts as long as its commit took at the catalog
        (``elapsed_ms``, measured by the serving process), starting at the snapshot's time."""
        md = table.metadata
        present = [sid for sid in snapshot_ids if md.snapshot_by_id(sid) is not None]
        hooked = [sid for sid in present if tagged(_summary(md, sid))]
        if hooked and self.state is not None:
            self.state.record(ProxiedSnapshot(md.identity, sid, "hook", _summary(md, sid).get(RUN_ID_PROPERTY), "hook")
                              for sid in hooked)
        ours = [sid for sid in present if sid not in hooked]
        if not ours:
            return []
        capture = dt.datetime.now(dt.timezone.utc)
        runs = ev.snapshot_runs(table, ours, self.settings, depth=self.depth, capture_time=capture,
                                elapsed_ms=elapsed_ms)
        out: list[Item] = []
        for sid in ours:
            for event in runs.get(sid, ()):
                # a START does not make the snapshot delivered, and never waits; its COMPLETE may wait for a report
                out.append(Built(event) if event.eventType.value == "START" else CommitRun(
                    prefix, tuple(table.identifier), SnapshotRef(md.identity, sid), _summary(md, sid), event))
        return out

    def _transaction(self, prefix: str | None, request: Json, elapsed_ms: int | None) -> list[Item]:
        out: list[Item] = []
        changes = request.get("table-changes") if isinstance(request, Mapping) else None
        for change in changes or ():
            ident = _identifier(change.get("identifier") if isinstance(change, Mapping) else None)
            if ident is None:
                continue
            base = self.tables.get(prefix, ident)
            if base is not None:
                loaded: LoadResult | None = LoadResult(None, apply_updates(base.metadata, change.get("updates") or []))
                self.tables.put(prefix, ident, loaded)  # type: ignore[arg-type]
            else:
                loaded = self.tables.load(prefix, ident)  # after the commit: it holds the new snapshots
            out += self._commit(prefix, ident, change, base, loaded, elapsed_ms)
        return out

    def _drop(self, route: Route) -> list[Item]:
        loaded = self.tables.pop(route.prefix, route.identifier or ())
        if loaded is None:
            LOG.warning("iceberg-lineage proxy: %s was dropped before its metadata was known; no DROP event",
                        ".".join(route.identifier or ()))
            return []
        table = self.tables.table(route.prefix, route.identifier or (), loaded)
        return _lifecycle(ev.lifecycle_event(table, "DROP", self.settings), self.settings)

    def _rename(self, prefix: str | None, request: Json) -> list[Item]:
        if not isinstance(request, Mapping):
            return []
        source, target = _identifier(request.get("source")), _identifier(request.get("destination"))
        if source is None or target is None:
            return []
        loaded = self.tables.pop(prefix, source) or self.tables.load(prefix, target)
        if loaded is None:
            return []
        self.tables.put(prefix, target, loaded)
        table = self.tables.table(prefix, target, loaded)
        return _lifecycle(ev.lifecycle_event(table, "RENAME", self.settings, previous_identifier=source),
                          self.settings)

    # -- bodies ------------------------------------------------------------------------------------------------------
    def _json(self, body: bytes | None, encoding: str | None) -> Json:
        if not body:
            return None
        return json.loads(decoded(body, encoding, self.settings.proxy.max_body_bytes))

    def _remember(self, prefix: str | None, ident: Sequence[str] | None, answer: Json) -> LoadResult | None:
        """Keep the table metadata of an answer (LoadTableResult, CommitTableResponse), its ``config`` dropped."""
        if ident is None or not isinstance(answer, Mapping) or not isinstance(answer.get("metadata"), Mapping):
            return None
        loaded = LoadResult(answer.get("metadata-location"), answer["metadata"])
        self.tables.put(prefix, ident, loaded)
        return loaded


def _sanitized(request: Json) -> Json:
    """A ``ReportMetricsRequest`` as the proxy keeps it: its filter's literals as Iceberg Java's sanitiser writes
    them (tokens already there stay), its ``metadata`` only the allow-listed keys."""
    from scan_reporters.sanitize import sanitize_json

    if not isinstance(request, Mapping):
        return request
    out = dict(request)
    if "filter" in out:
        out["filter"] = sanitize_json(out["filter"])
    if isinstance(out.get("metadata"), Mapping):
        out["metadata"] = {k: v for k, v in out["metadata"].items() if k in REPORT_METADATA_KEYS}
    return out


def _lifecycle(event: RunEvent, settings: Settings) -> list[Item]:
    """A lifecycle run as sent: START (unless ``events.start_events`` is off) and COMPLETE, no snapshot each."""
    return [Built(e) for e in ev.with_start(event, settings)]


def _identifier(raw: Json) -> tuple[str, ...] | None:
    """A ``TableIdentifier`` (``{"namespace": [...], "name": ...}``) as a tuple."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("namespace"), list) or "name" not in raw:
        return None
    return (*(str(level) for level in raw["namespace"]), str(raw["name"]))


def _required(requirements: Sequence[Json], kind: str, key: str) -> Json:
    return next((r.get(key) for r in requirements if isinstance(r, Mapping) and r.get("type") == kind), None)


def _refs_before(table: LoadedTable, updates: Sequence[Json]) -> list[str]:
    """Without the metadata before a commit: its refs are today's, less those the commit set."""
    set_now = {u.get("ref-name") for u in updates if isinstance(u, Mapping) and u.get("action") == "set-snapshot-ref"}
    return [name for name in table.metadata.refs if name not in set_now]


def _summary(md: MetadataFile, snapshot_id: int) -> Mapping[str, str]:
    return md.snapshot_by_id(snapshot_id).summary
