"""Snapshot summary properties this project writes, read by every entry point (the hook writes them; the scanner
and the REST bridge read them).

A tag marks ownership, not delivery: it names the run that reports the snapshot, so that anyone can rebuild that
run's events exactly. Whether those events got out is known only from the delivery ledger (the state store).

The hook writes two keys, the run id and the rest of the ownership as one JSON value: PyIceberg deep-copies the
whole table metadata about 19 times per commit, key by key, so every summary key of every snapshot in the table's
history costs time on every later commit. Tags written by earlier versions as four keys are still read.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal, Mapping

#: Snapshot summary property naming the run that committed the snapshot.
RUN_ID_PROPERTY = "iceberg-lineage.run-id"
#: The rest of the ownership, one JSON object: ``owner``, ``job-namespace`` and ``job`` (as the legacy keys below).
OWNERSHIP_PROPERTY = "iceberg-lineage.ownership"
#: Legacy tag (four keys, read only): the job of that run (name and namespace).
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
        rest = {"owner": self.owner, "job-namespace": self.job_namespace, "job": self.job_name}
        return {RUN_ID_PROPERTY: self.run_id, OWNERSHIP_PROPERTY: json.dumps(rest, separators=(",", ":"))}


def _declared(summary: Mapping[str, str]) -> Mapping[str, object]:
    """owner, job-namespace and job as the tag declares them: the JSON value, else the legacy keys."""
    text = summary.get(OWNERSHIP_PROPERTY)
    if text is None:
        return {"owner": summary.get(OWNER_PROPERTY), "job-namespace": summary.get(JOB_NAMESPACE_PROPERTY),
                "job": summary.get(JOB_PROPERTY)}
    try:
        declared = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return declared if isinstance(declared, dict) else {}


def ownership(summary: Mapping[str, str]) -> Ownership | None:
    """The ownership a summary declares; None for an untagged snapshot and for a tag written before the ledger
    existed (``run-id`` alone, or an incomplete tag), which counts as delivered."""
    declared = _declared(summary)
    run_id, owner = summary.get(RUN_ID_PROPERTY), declared.get("owner")
    job, namespace = declared.get("job"), declared.get("job-namespace")
    if not (isinstance(run_id, str) and isinstance(job, str) and isinstance(namespace, str)):
        return None
    if not (run_id and job and namespace) or owner not in OWNERS:
        return None
    return Ownership(run_id, namespace, job, owner)  # type: ignore[arg-type]


def tagged(summary: Mapping[str, str]) -> bool:
    return RUN_ID_PROPERTY in summary
