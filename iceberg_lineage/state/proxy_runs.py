"""The proxy's open engine application runs and the per-snapshot COMPLETEs waiting for their commit report, in the
state file (``state.path``, tables of schema version 3, see :mod:`iceberg_lineage.state.store`).

One proxy's lineage process keeps them for all its serving processes; proxies sharing a state file (replicas, or a
restart) share them here. Every row has an owner, the lineage process that made it (``host:pid:token``), with a lease
it renews while it lives; only the owner, or any process once the owner is gone (lease expired, or its pid dead on
this host), completes an application or sends a held commit. Each transition is one compare-and-set on the row's
status, so exactly one process sends each event. Rows outlive the process: a restarted proxy completes the
applications its predecessor left open.
"""
from __future__ import annotations

import json
import os
import secrets
import socket
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Sequence

from iceberg_lineage.errors import ConfigError
from iceberg_lineage.state.schema import prepare

#: Seconds a process's ownership holds without renewal; past it another process takes its rows over.
LEASE_S = 30.0
#: Seconds a sent commit is kept for a late report, and a report for a commit not yet relayed.
KEEP_COMMIT_S = 3600.0
#: Seconds a completed application is remembered, so that late activity is an OTHER event, not a new START.
KEEP_APPLICATION_S = 7 * 86400.0

Seen = Literal["start", "open", "complete"]


@dataclass(frozen=True)
class OpenApplication:
    run_id: str
    engine: str
    app_id: str
    engine_version: str | None
    last_activity: float


@dataclass(frozen=True)
class HeldCommit:
    table_key: str
    snapshot_id: int
    identity: str | None
    event: str


@dataclass(frozen=True)
class ReportMatch:
    """A commit report's snapshot: its COMPLETE was waiting (``in_time``) or already sent (``late``)."""

    timing: Literal["in_time", "late"]
    commit: HeldCommit


def process_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def _gone(owner: str) -> bool:
    """The owner is a process of this host that no longer runs."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def table_key(prefix: str | None, identifier: Sequence[str]) -> str:
    """A table as the REST paths of its commit and of its reports both name it."""
    return json.dumps([prefix, *identifier])


_APP_COLUMNS = "run_id, engine, app_id, engine_version, last_activity"
_HELD_COLUMNS = "table_key, snapshot_id, identity, event"


class ApplicationStore:
    """The applications and held commits of the state file; thread-safe (the emitter's and the sweeper's threads)."""

    def __init__(self, path: str | Path, *, owner: str | None = None, lease_s: float = LEASE_S) -> None:
        self.path = Path(path)
        self.owner = owner or process_owner()
        self.lease_s = lease_s
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            prepare(self._db)
        except (sqlite3.Error, OSError) as exc:
            raise ConfigError(f"cannot open the state file ({exc})", file=str(path)) from None
        except ConfigError as exc:
            raise ConfigError(exc.reason, file=str(path)) from None

    # -- applications ------------------------------------------------------------------------------------------------
    def seen(self, run_id: str, engine: str, app_id: str, engine_version: str | None, now: float) -> Seen:
        """Activity of an application: ``start`` (first seen: this process owns it now), ``open``, or
        ``complete`` (it was completed before: the activity is an OTHER event)."""
        with self._lock, self._db:
            created = self._db.execute(
                "INSERT OR IGNORE INTO app_runs VALUES (?, ?, ?, ?, 'open', ?, ?, ?, ?)",
                (run_id, engine, app_id, engine_version, now, now, self.owner, now + self.lease_s)).rowcount
            if created:
                return "start"
            touched = self._db.execute(
                "UPDATE app_runs SET last_activity=MAX(last_activity, ?), engine_version=COALESCE(engine_version, ?)"
                " WHERE run_id=? AND status='open'", (now, engine_version, run_id)).rowcount
        return "open" if touched else "complete"

    def record_read(self, run_id: str, namespace: str, name: str, snapshot_id: int | None, now: float) -> None:
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO app_reads VALUES (?, ?, ?, ?, ?)",
                             (run_id, namespace, name, snapshot_id, now))

    def reads(self, run_id: str) -> list[tuple[str, str, int | None]]:
        """The tables the application read, each at the snapshot read last."""
        with self._lock:
            return [tuple(r) for r in self._db.execute(  # type: ignore[misc]
                "SELECT namespace, name, snapshot_id FROM app_reads WHERE run_id=? ORDER BY namespace, name",
                (run_id,))]

    def complete_idle(self, now: float, idle_s: float) -> list[OpenApplication]:
        """Claim the applications idle for ``idle_s`` that this process owns or that lost their owner: marked
        complete, theirs to announce."""
        return self._complete("status='open' AND last_activity<=?", (now - idle_s,), now, orphans_only=False)

    def complete_owned(self, now: float) -> list[OpenApplication]:
        """At shutdown: every open application this process owns, marked complete."""
        return self._complete("status='open' AND owner=?", (self.owner,), now, orphans_only=False)

    def complete_orphans(self, now: float) -> list[OpenApplication]:
        """At start-up: the open applications whose owner is gone (a killed predecessor), marked complete."""
        return self._complete("status='open' AND owner<>?", (self.owner,), now, orphans_only=True)

    def _complete(self, where: str, args: tuple, now: float, *, orphans_only: bool) -> list[OpenApplication]:
        with self._lock:
            rows = self._db.execute(f"SELECT {_APP_COLUMNS}, owner, lease_until FROM app_runs WHERE {where}",
                                    args).fetchall()
            claimed = []
            for *app, owner, lease_until in rows:
                if not self._claimable(owner, lease_until, now, orphans_only):
                    continue
                with self._db:
                    won = self._db.execute(
                        "UPDATE app_runs SET status='complete', owner=?, lease_until=? WHERE run_id=? "
                        "AND status='open' AND last_activity=?", (self.owner, now, app[0], app[4])).rowcount
                if won:
                    claimed.append(OpenApplication(*app))
            return claimed

    def _claimable(self, owner: str, lease_until: float, now: float, orphans_only: bool) -> bool:
        orphan = lease_until < now or _gone(owner)
        return orphan if orphans_only else owner == self.owner or orphan

    # -- commits waiting for their report ----------------------------------------------------------------------------
    def hold(self, key: str, snapshot_id: int, identity: str | None, event: str, due: float | None,
             now: float) -> str | None:
        """Hold a snapshot's COMPLETE until ``due`` (None: it goes out now, and is kept for a late report); when its
        report came first, the report's JSON instead (the COMPLETE then goes out at once, and is recorded as sent)."""
        status, until = ("waiting", due) if due is not None else ("sent", now + KEEP_COMMIT_S)
        with self._lock, self._db:
            if self._db.execute("INSERT OR IGNORE INTO held_commits VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?)",
                                (key, snapshot_id, identity, event, status, until, self.owner,
                                 now + self.lease_s)).rowcount:
                return None
            report = self._db.execute(
                "SELECT report FROM held_commits WHERE table_key=? AND snapshot_id=? AND status='report'",
                (key, snapshot_id)).fetchone()
            if report is None:
                return None  # the same commit relayed again: it is held, or was sent, already
            self._db.execute("UPDATE held_commits SET identity=?, event=?, status='sent', due=? WHERE table_key=? "
                             "AND snapshot_id=?", (identity, event, now + KEEP_COMMIT_S, key, snapshot_id))
            return report[0]

    def report(self, key: str, snapshot_id: int, report: str, now: float) -> ReportMatch | None:
        """A commit report arrived: its snapshot's COMPLETE, if it waited (now claimed as sent) or was already sent;
        None when the commit is not known yet (the report is kept for it)."""
        with self._lock, self._db:
            row = self._db.execute(f"SELECT {_HELD_COLUMNS}, status FROM held_commits WHERE table_key=? AND "
                                   "snapshot_id=?", (key, snapshot_id)).fetchone()
            if row is None:
                self._db.execute("INSERT OR IGNORE INTO held_commits VALUES (?, ?, NULL, NULL, ?, 'report', ?, ?, ?)",
                                 (key, snapshot_id, report, now + KEEP_COMMIT_S, self.owner, now))
                return None
            *held, status = row
            if status == "waiting" and self._db.execute(
                    "UPDATE held_commits SET status='sent', due=? WHERE table_key=? AND snapshot_id=? AND "
                    "status='waiting'", (now + KEEP_COMMIT_S, key, snapshot_id)).rowcount:
                return ReportMatch("in_time", HeldCommit(*held))
            if status in ("waiting", "sent") and held[3] is not None:
                return ReportMatch("late", HeldCommit(*held))
            return None

    def unmatched_reports(self, now: float) -> list[tuple[str, int, str]]:
        """Claim the commit reports kept for a commit that never came, once their keeping time is over (by any
        process: each claim is one compare-and-set), as (table key, snapshot id, report JSON); theirs to send."""
        with self._lock:
            rows = self._db.execute("SELECT table_key, snapshot_id, report FROM held_commits WHERE status='report' "
                                    "AND due<=?", (now,)).fetchall()
            claimed = []
            for key, snapshot_id, report in rows:
                with self._db:
                    if self._db.execute("UPDATE held_commits SET status='reported' WHERE table_key=? AND "
                                        "snapshot_id=? AND status='report'", (key, snapshot_id)).rowcount:
                        claimed.append((key, snapshot_id, report))
            return claimed

    def due(self, now: float) -> list[HeldCommit]:
        """Claim the held COMPLETEs whose wait is over (this process's, or an owner's that is gone), as sent."""
        return self._release("status='waiting' AND due<=?", (now,), now)

    def release_owned(self, now: float) -> list[HeldCommit]:
        """At shutdown: every COMPLETE this process holds, claimed as sent without waiting longer."""
        return self._release("status='waiting' AND owner=?", (self.owner,), now)

    def _release(self, where: str, args: tuple, now: float) -> list[HeldCommit]:
        with self._lock:
            rows = self._db.execute(f"SELECT {_HELD_COLUMNS}, owner, lease_until FROM held_commits WHERE {where}",
                                    args).fetchall()
            claimed = []
            for *held, owner, lease_until in rows:
                if not self._claimable(owner, lease_until, now, orphans_only=False):
                    continue
                with self._db:
                    won = self._db.execute(
                        "UPDATE held_commits SET status='sent', due=?, owner=? WHERE table_key=? AND snapshot_id=? "
                        "AND status='waiting'", (now + KEEP_COMMIT_S, self.owner, held[0], held[1])).rowcount
                if won:
                    claimed.append(HeldCommit(*held))
            return claimed

    # -- upkeep ------------------------------------------------------------------------------------------------------
    def renew(self, now: float) -> None:
        """Extend this process's leases; forget sent commits, early reports and completed applications past their
        keeping time."""
        until = now + self.lease_s
        with self._lock, self._db:
            self._db.execute("UPDATE app_runs SET lease_until=? WHERE owner=? AND status='open'", (until, self.owner))
            self._db.execute("UPDATE held_commits SET lease_until=? WHERE owner=? AND status='waiting'",
                             (until, self.owner))
            self._db.execute("DELETE FROM held_commits WHERE status<>'waiting' AND due<?", (now,))
            old = now - KEEP_APPLICATION_S
            self._db.execute("DELETE FROM app_reads WHERE run_id IN (SELECT run_id FROM app_runs WHERE "
                             "status='complete' AND last_activity<?)", (old,))
            self._db.execute("DELETE FROM app_runs WHERE status='complete' AND last_activity<?", (old,))

    def close(self) -> None:
        with self._lock:
            self._db.close()
