"""The proxy's engine applications and commit reports: what a ``/metrics`` report or a relayed commit changes, and
the sweeper that completes idle applications, sends the COMPLETEs whose report did not come in time, and sends the
reports whose commit never came.

State lives in the state file (:class:`~iceberg_lineage.state.proxy_runs.ApplicationStore`, leased rows: one owner
per proxy); events are built by :mod:`iceberg_lineage.lineage.engine_runs` and leave through the lineage process's
:class:`~iceberg_lineage.proxy.outbox.Outbox`. Timings: ``proxy.report_wait_s`` (2 s) and
``proxy.run_idle_timeout_s`` (``--run-idle-timeout``, 300 s); a report whose commit the proxy never saw (a restart
between them, another proxy in front of the catalog) waits an hour, then is an OTHER event of the snapshot's
deterministic run, which the scanner's COMPLETE joins. At shutdown every application this process owns completes
and every COMPLETE it holds goes out.
"""
from __future__ import annotations

import datetime as dt
import json
import logging
import threading
import time
from typing import Callable, Mapping, NamedTuple, Sequence, Union

from openlineage.client.event_v2 import RunEvent, RunState
from scan_reporters.reports import CommitReport, ScanReport

from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.failure_log import FailureLog
from iceberg_lineage.lineage import engine_runs as apps
from iceberg_lineage.lineage.events import snapshot_run_event
from iceberg_lineage.lineage.serde import from_json, to_json
from iceberg_lineage.proxy.outbox import Built, Outbox, SnapshotRef
from iceberg_lineage.proxy.tables import RelayedTables
from iceberg_lineage.read.source import LoadedTable
from iceberg_lineage.state.proxy_runs import ApplicationStore, HeldCommit, OpenApplication, Seen, table_key
from iceberg_lineage.stats import snapshot_stats

LOG = logging.getLogger(__name__)
log_once = FailureLog(LOG)


class CommitRun(NamedTuple):
    """A snapshot's COMPLETE as relayed, which the tracker holds for the engine's commit report when one is
    expected."""

    prefix: str | None
    identifier: tuple[str, ...]
    snapshot: SnapshotRef
    summary: Mapping[str, str]
    event: RunEvent


def _moment(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc)


class ApplicationTracker:
    """One per proxy, in its lineage process: applications, scan and commit reports, held commits."""

    def __init__(self, store: ApplicationStore, settings: Settings, tables: RelayedTables, outbox: Outbox, *,
                 clock: Callable[[], float] = time.time) -> None:
        self.store, self.settings, self.tables, self.outbox, self.clock = store, settings, tables, outbox, clock
        self.wait_s = settings.proxy.report_wait_s
        self.idle_s = settings.proxy.run_idle_timeout_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: tables whose commit reports this process received: their clients report, so their commits wait
        self._reporting: set[str] = set()

    # -- what the interpreter hands on -------------------------------------------------------------------------------
    def send(self, items: Sequence[Union[Built, CommitRun]]) -> None:
        """A relayed request's events, in order: each goes out, but a snapshot's COMPLETE that waits for its report."""
        out: list[Built] = []
        for item in items:
            out += self._commit(item) if isinstance(item, CommitRun) else [item]
        self.outbox.send(out)

    def report(self, prefix: str | None, identifier: Sequence[str], report: ScanReport | CommitReport) -> None:
        """An accepted ``/metrics`` report (sanitised)."""
        try:
            if isinstance(report, ScanReport):
                events = self._scan(self.tables.table_of(prefix, identifier), identifier, report)
                self.outbox.send([Built(e) for e in events])
            else:
                self.outbox.send(self._commit_report(prefix, identifier, report))
        except Exception as exc:  # noqa: BLE001 - a report we cannot read costs its events, nothing else
            log_once("building the events of a metrics report", exc)

    def _scan(self, table: LoadedTable | None, identifier: Sequence[str], report: ScanReport) -> list[RunEvent]:
        if table is None:  # neither relayed nor loadable with the proxy's own credentials
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

    def _commit_report(self, prefix: str | None, identifier: Sequence[str], report: CommitReport) -> list[Built]:
        now = self.clock()
        app = apps.Application.of(report.metadata)
        out = [Built(e) for e in (self._seen(app, now)[1] if app else [])]
        key = table_key(prefix, identifier)
        self._reporting.add(key)
        match = self.store.report(key, report.snapshot_id, json.dumps(report.to_json()), now)
        if match is None:
            return out
        held = from_json(match.commit.event)  # as it waited in the state file
        if match.timing == "late":
            return out + [Built(apps.late_report_event(held, report, _moment(now)))]
        return out + [Built(apps.commit_report_event(held, report), _ref(match.commit))]

    def _commit(self, run: CommitRun) -> list[Built]:
        """A snapshot's COMPLETE (the scanner's event, with the application's reads as inputs), held until its
        commit report comes or ``proxy.report_wait_s`` passed; out now when its report came first, or when none is
        expected (it is kept, so that a report coming later is an OTHER event).

        A report is expected from Iceberg Java (its summaries carry ``iceberg-version``; its ``RESTMetricsReporter``
        reports every commit) and from any client whose reports for the table this process has seen; DuckDB, plain
        PyIceberg and other engines that never report do not delay their lineage."""
        now = self.clock()
        app = apps.Application.of(run.summary)
        event, out = run.event, []
        if app is not None:
            out = [Built(e) for e in self._seen(app, now)[1]]
            event = apps.with_reads(event, [apps.TableRead(*read) for read in self.store.reads(app.run_id)])
        key = table_key(run.prefix, run.identifier)
        expected = self.wait_s > 0 and ("iceberg-version" in run.summary or key in self._reporting)
        report = self.store.hold(key, run.snapshot.snapshot_id, run.snapshot.identity, to_json(event),
                                 now + self.wait_s if expected else None, now)
        if report is not None:
            return out + [Built(apps.commit_report_event(event, CommitReport.from_json(report)), run.snapshot)]
        return out if expected else out + [Built(event, run.snapshot)]

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
            except Exception as exc:  # noqa: BLE001 - the proxy goes on serving
                log_once("sweeping applications and held commits", exc)

    def sweep(self) -> None:
        now = self.clock()
        self._send_unmatched(self.store.unmatched_reports(now))
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
            self.outbox.send([Built(from_json(commit.event), _ref(commit))])

    def _send_completes(self, completed: Sequence[OpenApplication]) -> None:
        for app in completed:
            self.outbox.send([Built(self._complete_event(app))])

    def _complete_event(self, row: OpenApplication) -> RunEvent:
        app = apps.Application(row.engine, row.app_id, row.engine_version)
        reads = [apps.TableRead(*read).dataset() for read in self.store.reads(row.run_id)]
        return apps.application_event(app, RunState.COMPLETE, self.settings, when=_moment(row.last_activity),
                                      inputs=reads)

    def _send_unmatched(self, reports: Sequence[tuple[str, int, str]]) -> None:
        """Commit reports whose commit never came: each an OTHER event of its snapshot's deterministic run (the
        table loaded with the proxy's own credentials), carrying ``icebergCommitReport``."""
        for key, snapshot_id, text in reports:
            prefix, *identifier = json.loads(key)
            table = self.tables.table_of(prefix, identifier)
            if table is None or table.metadata.snapshot_by_id(snapshot_id) is None:
                log_once("reporting a commit report whose commit the proxy never saw",
                         LookupError(f"no snapshot {snapshot_id} in {'.'.join(identifier)}"))
                continue
            run = snapshot_run_event(table, snapshot_stats(table, snapshot_id, depth="summary"), self.settings)
            report = CommitReport.from_json(text)
            self.outbox.send([Built(apps.late_report_event(run, report, _moment(self.clock())))])


def _ref(commit: HeldCommit) -> SnapshotRef | None:
    return SnapshotRef(commit.identity, commit.snapshot_id) if commit.identity is not None else None
