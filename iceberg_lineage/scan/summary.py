"""The scan's report: what happened to each table and to the whole scan, as JSON and as text.

It belongs to the scan service, not to the CLI: ``iceberg-lineage scan``, ``preview_scan`` and ``make run`` all
print the same summary.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass
from typing import Any, Literal

from iceberg_lineage.printable import printable
from iceberg_lineage.redact import scrub

#: What a scan did with one table.
TableStatus = Literal["unchanged", "updated", "failed"]


@dataclass(frozen=True)
class Gap:
    """Snapshots that expired before they were ever emitted: how many, and when (ms, inclusive bounds)."""

    count: int
    first_ms: int | None
    last_ms: int | None


@dataclass(frozen=True)
class TableFailure:
    """Why one table failed. The reason and the file are cleaned of secrets (a presigned manifest-list URL, a URI
    with a password) once, here, for every output; the text forms also show control characters, JSON keeps the
    exact (cleaned) values."""

    catalog: str
    table: str
    reason: str
    file: str | None = None
    kind: str = "error"

    def __post_init__(self) -> None:
        object.__setattr__(self, "reason", scrub(self.reason))  # reasons quote URIs, which may hold credentials
        if self.file is not None:
            object.__setattr__(self, "file", scrub(self.file))

    @property
    def what(self) -> str:
        """The reason, and the file when known."""
        return self.reason + (f" (file {self.file})" if self.file else "")

    def one_line(self) -> str:
        """The failure for people: ``catalog.table: reason (file f)``, control characters shown."""
        return printable(f"{self.catalog}.{self.table}: {self.what}")


@dataclass(frozen=True)
class TableOutcome:
    catalog: str
    identifier: tuple[str, ...]
    status: TableStatus
    emitted: int = 0
    by_hooks: int = 0
    gap: Gap | None = None
    failure: TableFailure | None = None
    #: hook-tagged snapshots the ledger did not know as delivered, whose owner's events the scan sent
    resent: int = 0
    #: events the server refused for good (HTTP 4xx other than 408/429): kept in the spool, not delivered
    rejected: int = 0
    #: of the snapshots emitted, those whose every event the transport confirmed, and those with an event waiting
    #: in the spool; those a queueing transport (``async_http``) took are neither until it flushed
    delivered: int = 0
    spooled: int = 0

    @property
    def name(self) -> str:
        return ".".join(self.identifier)


@dataclass(frozen=True)
class DeliveryPhase:
    """How long the scan waited on delivery, against its deadline (``scan.delivery_deadline_s``): once it passed,
    the remaining events were spooled without being sent."""

    deadline_s: float
    spent_s: float

    @property
    def deadline_passed(self) -> bool:
        return self.spent_s >= self.deadline_s

    def to_json(self) -> dict[str, Any]:
        return {"deadline_s": self.deadline_s, "spent_s": round(self.spent_s, 3), "deadline_passed": self.deadline_passed}


@dataclass(frozen=True)
class ScanSummary:
    mode: str
    dry_run: bool
    tables_scanned: int
    unchanged: int
    updated: int
    failed: int
    snapshots_emitted: int
    snapshots_by_hooks: int
    drops: int
    renames: int
    gaps: tuple[tuple[str, Gap], ...]
    failures: tuple[TableFailure, ...]
    elapsed_s: float
    snapshots_resent: int = 0
    events_rejected: int = 0
    delivery: DeliveryPhase | None = None
    #: Snapshots emitted whose events the transport confirmed; None while a queueing transport (``async_http``)
    #: has not confirmed them yet (its flush comes after the scan's own end event).
    snapshots_delivered: int | None = 0
    #: Snapshots emitted with an event waiting in the spool for ``replay``.
    snapshots_spooled: int = 0
    #: Every event of the scan that waits in the spool: the snapshots' runs, RENAMEs, DROPs and the scan's own run.
    events_spooled: int = 0
    #: Events a queueing transport (``async_http``) gave up on after the scan handed them over: lost.
    events_unconfirmed: int = 0

    @property
    def exit_code(self) -> int:
        """1 when a table failed or an event was rejected or lost (not delivered, and a replay will not help);
        else 3 when events wait in the spool for ``replay``; else 0 (``docs/exit-codes.md``)."""
        if self.failures or self.events_rejected or self.events_unconfirmed:
            return 1
        return 3 if self.events_spooled else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "dry_run": self.dry_run,
            "tables": {"scanned": self.tables_scanned, "unchanged": self.unchanged, "updated": self.updated,
                       "failed": self.failed},
            "snapshots": {"emitted": self.snapshots_emitted, "delivered": self.snapshots_delivered,
                          "spooled": self.snapshots_spooled, "already_emitted_by_hooks": self.snapshots_by_hooks,
                          "resent_for_hooks": self.snapshots_resent},
            "rejected_events": self.events_rejected,
            "spooled_events": self.events_spooled,
            "unconfirmed_events": self.events_unconfirmed,
            "drops": self.drops,
            "renames": self.renames,
            "gaps": [{"table": t, **dataclasses.asdict(g)} for t, g in self.gaps],
            "failures": [dataclasses.asdict(f) for f in self.failures],
            "elapsed_s": round(self.elapsed_s, 3),
            "delivery": self.delivery.to_json() if self.delivery else None,
            "exit_code": self.exit_code,
        }


def _when(ms: int | None) -> str:
    if ms is None:
        return "?"
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def gap_line(table: str, gap: Gap) -> str:
    return (f"{printable(table)}: {gap.count} snapshot(s) expired before they were emitted "
            f"(committed between {_when(gap.first_ms)} and {_when(gap.last_ms)})")


def outcome_line(o: TableOutcome) -> str | None:
    """One progress line for tables where something happened (control characters shown); None for unchanged ones."""
    if o.failure is not None:
        return printable(f"{o.catalog}.{o.name}: FAILED: {o.failure.what}")
    if o.status != "updated":
        return None
    parts = [f"{o.emitted} snapshot(s) emitted"]
    if o.spooled:
        parts.append(f"{o.spooled} spooled")
    if o.by_hooks:
        parts.append(f"{o.by_hooks} already emitted by hooks")
    if o.resent:
        parts.append(f"{o.resent} re-sent for hooks")
    if o.rejected:
        parts.append(f"{o.rejected} event(s) REJECTED by the server")
    return printable(f"{o.catalog}.{o.name}: ") + ", ".join(parts)


def summary_text(s: ScanSummary, events_to: str) -> str:
    """The summary for people: names from metadata and reasons with their control characters shown."""
    dry = ", dry run" if s.dry_run else ""
    lines = [
        f"iceberg-lineage scan ({s.mode}{dry}): {s.tables_scanned} table(s) scanned in {s.elapsed_s:.1f} s",
        f"  tables:    {s.unchanged} unchanged, {s.updated} updated, {s.failed} failed",
        f"  snapshots: {s.snapshots_emitted} emitted, {s.snapshots_by_hooks} already emitted by hooks"
        + (f", {s.snapshots_resent} re-sent for hooks" if s.snapshots_resent else "")
        if s.mode == "history" else f"  dataset events: {s.snapshots_emitted} emitted (current snapshots)",
    ]
    if not s.dry_run:
        delivered = "? (not confirmed yet)" if s.snapshots_delivered is None else s.snapshots_delivered
        waiting = (f" ({s.events_spooled} event(s) wait in the spool: send them with iceberg-lineage replay)"
                   if s.events_spooled else "")
        lines.append(f"  sent:      {delivered} delivered, {s.snapshots_spooled} spooled{waiting}")
    if s.events_unconfirmed:
        lines.append(f"  lost:      {s.events_unconfirmed} event(s) the async_http transport queued and then gave "
                     "up on")
    if s.events_rejected:
        lines.append(f"  rejected:  {s.events_rejected} event(s) refused by the server, not delivered (kept in the "
                     "spool: iceberg-lineage replay --list)")
    if s.drops or s.renames:
        lines.append(f"  tables dropped: {s.drops}, renamed: {s.renames}")
    lines += [f"  warning: gap in {gap_line(t, g)}" for t, g in s.gaps]
    lines += [f"  failed:  {f.one_line()}" for f in s.failures]
    if s.delivery and s.delivery.deadline_passed:
        lines.append(f"  delivery:  deadline of {s.delivery.deadline_s:g} s passed (scan.delivery_deadline_s): the "
                     "rest was spooled unsent")
    lines.append(f"  events:    {printable(events_to)}")
    return "\n".join(lines)
