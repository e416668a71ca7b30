"""Snapshot summary properties this project writes, read by every entry point (the hook writes them; the scanner
and the REST bridge read them).

A tag marks ownership, not delivery: it names the run that reports the snapshot, so that anyone can rebuild that
run's events exactly. Whether those events got out is known only from the delivery ledger (the state store).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping

#: Snapshot summary property naming the run that committed the snapshot.
RUN_ID_PROPERTY = "iceberg-lineage.run-id"
#: The job of that run (name and namespace).
JOB_PROPERTY = "iceberg-lineage.job"
JOB_NAMESPACE_PROPERTY = "iceberg-lineage.job-namespace"
#: Who owns the snapshot's event: ``snapshot`` (its own START/COMPLETE run) or ``context`` (a RUNNING event of a
#: run context). A tag without it was written before the ledger existed and counts as delivered.
OWNER_PROPERTY = "iceberg-lineage.owner"

Owner = Literal["snapshot", "context"]
OWNERS: tuple[str, ...] = ("snapshot", "context")


@dataclass(frozen=True)
class Ownership:
    """What a snapshot's tag says: the run that reports it, and what kind of run that is."""

    run_id: str
    job_namespace: str
    job_name: str
    owner: Owner

    def properties(self) -> dict[str, str]:
        return {RUN_ID_PROPERTY: self.run_id, JOB_NAMESPACE_PROPERTY: self.job_namespace,
                JOB_PROPERTY: self.job_name, OWNER_PROPERTY: self.owner}


def ownership(summary: Mapping[str, str]) -> Ownership | None:
    """The ownership a summary declares; None for an untagged snapshot and for a tag written before the ledger
    existed (``run-id`` alone, or an incomplete tag), which counts as delivered."""
    run_id, owner = summary.get(RUN_ID_PROPERTY), summary.get(OWNER_PROPERTY)
    job, namespace = summary.get(JOB_PROPERTY), summary.get(JOB_NAMESPACE_PROPERTY)
    if not (run_id and job and namespace) or owner not in OWNERS:
        return None
    return Ownership(run_id, namespace, job, owner)  # type: ignore[arg-type]


def tagged(summary: Mapping[str, str]) -> bool:
    return RUN_ID_PROPERTY in summary
