"""The bridge's engine applications and commit reports: what a ``/metrics`` report or a relayed commit changes, and
the sweeper that completes idle applications and sends the COMPLETEs whose report did not come in time.

State lives in the state file (:class:`~iceberg_lineage.state.applications.ApplicationStore`, leased rows: one
owner per bridge); events are built by :mod:`iceberg_lineage.lineage.applications` and queued on the lineage
process's emitter, so nothing here runs in a serving process. Timings: ``proxy.report_wait_s`` (2 s) and ``proxy.run_idle_timeout_s``
(``--run-idle-timeout``, 300 s); at shutdown every application this process owns completes and every COMPLETE it
holds goes out.
"""
from __future__ import annotations

import datetime as dt
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from openlineage.client.event_v2 import RunEvent, RunState

from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.delivery import DeliveryResult
from iceberg_lineage.delivery.failure_log import FailureLog
from iceberg_lineage.lineage import applications as apps
from iceberg_lineage.lineage.serde import to_json
from iceberg_lineage.read.source import LoadedTable
from iceberg_lineage.state.applications import ApplicationStore, HeldCommit, OpenApplication, Seen, table_key
from iceberg_lineage.state.bridge import BridgedSnapshot

LOG = logging.getLogger(__name__)
log_once = FailureLog(LOG)

#: (prefix, identifier) -> the table as the bridge knows it (its cache, else one load with its own credentials)
Lookup = Callable[[Any, Sequence[str]], "LoadedTable | None"]


@dataclass
class Outgoing:
    """Events for the emitter (a :class:`~iceberg_lineage.delivery.emitter.Pending`), built on its thread; what
    became of a snapshot's COMPLETE is recorded in the bridge's state."""

    build: Callable[[], list[tuple[RunEvent, Any]]]
    record: Callable[[Sequence[BridgedSnapshot]], None] | None
    built: list[tuple[RunEvent, Any]] = field(default_factory=list)

    def events(self) -> list[RunEvent]:
        try:
            self.built = self.build()
        except Exception as exc:  # noqa: BLE001 - a report we cannot read costs its events, nothing else
            log_once("building the events of a metrics report or a held commit", exc)
            self.built = []
        return [event for event, _ in self.built]

    def settled(self, results: Sequence[DeliveryResult]) -> None:
        rows = [BridgedSnapshot(snap[0], snap[1], "proxy", event.run.runId, result.status)
                for (event, snap), result in zip(self.built, results) if snap is not None]
        if rows and self.record is not None:
            self.record(rows)


def _moment(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc)


class ApplicationTracker:
    """One per bridge, in its lineage process: applications, scan and commit reports, held commits."""

    def __init__(self, store: ApplicationStore, settings: Settings, *, submit: Callable[[Any], None],
                 lookup: Lookup, record: Callable[[Sequence[BridgedSnapshot]], None] | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.store, self.settings = store, settings
        self.submit, self.lookup, self.record, self.clock = submit, lookup, record, clock
        self.wait_s = settings.proxy_report_wait_s
        self.idle_s = settings.proxy_run_idle_timeout_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: tables whose commit reports this process received: their clients report, so their commits wait
        self._reporting: set[str] = set()

    # -- reports (the emitter's thread) ------------------------------------------------------------------------------
    def capture(self, prefix: str | None, identifier: Sequence[str], body: bytes) -> Outgoing:
        """What the emitter builds from an accepted ``/metrics`` post (``ReportMetricsRequest`` JSON)."""
        return Outgoing(lambda: self.report_events(prefix, identifier, body), self.record)

    def report_events(self, prefix: str | None, identifier: Sequence[str], body: bytes) -> list[tuple[RunEvent, Any]]:
        from scan_reporters.reports import CommitReport, ScanReport, from_rest_request

        report = from_rest_request(json.loads(body))
        if isinstance(report, ScanReport):
            return [(event, None) for event in self._scan(prefix, identifier, report)]
        if isinstance(report, CommitReport):
            return self._commit_report(prefix, identifier, report)
        return []  # an unknown report-type, as Java's ReportMetricsRequest.unknown()

    def _scan(self, prefix: str | None, identifier: Sequence[str], report: Any) -> list[RunEvent]:
        table = self.lookup(prefix, identifier)
        if table is None:  # neither relayed nor loadable with the bridge's own credentials
            log_once("naming the table of a scan report", LookupError(f"no metadata for {'.'.join(identifier)}"))
            return []
        app = apps.Application.of(report.metadata)
        if app is None:
            return apps.scan_run(table, report, self.settings)
        now = self.clock()
        dataset = apps.scan_input(table, report, self.settings)
        seen, out = self._seen(app, now)
        self.store.record_read(app.run_id, dataset.namespace, dataset.name, report.snapshot_id, now)
        state = RunState.OTHER if seen == "complete" else RunState.RUNNING
        return out + [apps.application_event(app, state, self.settings, when=_moment(now), inputs=[dataset])]

    def _seen(self, app: apps.Application, now: float) -> tuple[Seen, list[RunEvent]]:
        """Record activity; with the START when the application is new."""
        seen = self.store.seen(app.run_id, app.engine, app.app_id, app.engine_version, now)
        start = [apps.application_event(app, RunState.START, self.settings, when=_moment(now))]
        return seen, start if seen == "start" else []

    def _commit_report(self, prefix: str | None, identifier: Sequence[str],
                       report: Any) -> list[tuple[RunEvent, Any]]:
        now = self.clock()
        app = apps.Application.of(report.metadata)
        out: list[tuple[RunEvent, Any]] = [(e, None) for e in (self._seen(app, now)[1] if app else [])]
        key = table_key(prefix, identifier)
        self._reporting.add(key)
        match = self.store.report(key, report.snapshot_id, json.dumps(report.to_json()), now)
        if match is None:
            return out
        doc = json.loads(match.commit.event)
        if match.timing == "late":
            return out + [(apps.late_report_event(doc, report, _moment(now)), None)]
        return out + [(apps.commit_report_event(doc, report), _reported(match.commit))]

    # -- commits (the emitter's thread, from the Reporter) -----------------------------------------------------------
    def hold(self, prefix: str | None, identifier: Sequence[str], identity: str, snapshot_id: int,
             summary: Mapping[str, str], event: RunEvent) -> list[RunEvent]:
        """A snapshot's COMPLETE (the scanner's event, with the application's reads as inputs), held until its
        commit report comes or ``proxy.report_wait_s`` passed; returns it when it must go out now (its report came
        first, or none is expected: it is kept, so that a report coming later is an OTHER event).

        A report is expected from Iceberg Java (its summaries carry ``iceberg-version``; its ``RESTMetricsReporter``
        reports every commit) and from any client whose reports for the table this process has seen; DuckDB, plain
        PyIceberg and other engines that never report do not delay their lineage."""
        from scan_reporters.reports import CommitReport

        if event.eventType != RunState.COMPLETE:  # the run's START goes straight out; only its COMPLETE waits
            return [event]
        now = self.clock()
        app = apps.Application.of(summary)
        doc = json.loads(to_json(event))
        if app is not None:
            for start in self._seen(app, now)[1]:
                self.submit(start)
            reads = [apps.TableRead(*read) for read in self.store.reads(app.run_id)]
            doc = apps.with_reads(doc, reads)
        key = table_key(prefix, identifier)
        expected = self.wait_s > 0 and ("iceberg-version" in summary or key in self._reporting)
        report = self.store.hold(key, snapshot_id, identity, json.dumps(doc), now + self.wait_s if expected else None,
                                 now)
        if report is not None:
            return [apps.commit_report_event(doc, CommitReport.from_json(report))]
        return [] if expected else [apps.commit_report_event(doc, None)]

    # -- the sweeper -------------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Complete what a killed predecessor left open, then sweep on a daemon thread."""
        now = self.clock()
        self._send_completes(self.store.complete_orphans(now))
        self._thread = threading.Thread(target=self._run, name="iceberg-lineage-applications", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        period = min(1.0, max(0.05, min(self.wait_s or 1.0, self.idle_s) / 4))
        while not self._stop.wait(period):
            try:
                self.sweep()
            except Exception as exc:  # noqa: BLE001 - the bridge goes on serving
                log_once("sweeping applications and held commits", exc)

    def sweep(self) -> None:
        now = self.clock()
        self.store.renew(now)
        self._send_held(self.store.due(now))
        self._send_completes(self.store.complete_idle(now, self.idle_s))

    def stop(self) -> None:
        """At shutdown: send every COMPLETE held here and complete every application owned here."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        now = self.clock()
        self._send_held(self.store.release_owned(now))
        self._send_completes(self.store.complete_owned(now))

    def _send_held(self, held: Sequence[HeldCommit]) -> None:
        for commit in held:
            self.submit(Outgoing(lambda c=commit: [(apps.commit_report_event(json.loads(c.event), None),
                                                    _reported(c))], self.record))

    def _send_completes(self, completed: Sequence[OpenApplication]) -> None:
        for app in completed:
            self.submit(Outgoing(lambda a=app: [(self._complete_event(a), None)], None))

    def _complete_event(self, row: OpenApplication) -> RunEvent:
        app = apps.Application(row.engine, row.app_id, row.engine_version)
        reads = [apps.TableRead(*read).dataset() for read in self.store.reads(row.run_id)]
        return apps.application_event(app, RunState.COMPLETE, self.settings, when=_moment(row.last_activity),
                                      inputs=reads)


def _reported(commit: HeldCommit) -> tuple[str, int] | None:
    return (commit.identity, commit.snapshot_id) if commit.identity is not None else None
