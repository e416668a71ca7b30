"""A generated OpenLineage event log whose truth is known: per job, how many runs completed, failed, aborted or
stayed open, how long each took, what it wrote, and the last failure; with duplicates, terminal events before
their START, RUNNING events repeating statistics, and FAILs with an ``errorMessage``."""
from __future__ import annotations

import datetime as dt
import json
import random
import uuid
from dataclasses import dataclass, field
from typing import Any

T0 = dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc)
PRODUCER = "https://example.com/generator"


def when(seconds: float) -> str:
    return (T0 + dt.timedelta(seconds=seconds)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def run_event(kind: str, run_id: str, job: str, at: float, *, namespace: str = "ns", inputs: list | None = None,
              outputs: list | None = None, error: str | None = None) -> dict[str, Any]:
    run: dict[str, Any] = {"runId": run_id}
    if error is not None:
        run["facets"] = {"errorMessage": {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/"
                                          "1-0-1/ErrorMessageRunFacet.json", "message": error,
                                          "programmingLanguage": "python"}}
    return {"eventType": kind, "eventTime": when(at), "producer": PRODUCER,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": run, "job": {"namespace": namespace, "name": job},
            "inputs": inputs or [], "outputs": outputs or []}


def output(name: str, rows: int | None, size: int | None, version: str | None = None) -> dict[str, Any]:
    stats = {k: v for k, v in (("rowCount", rows), ("size", size)) if v is not None}
    dataset: dict[str, Any] = {"namespace": "s3://lake", "name": name, "facets": {},
                               "outputFacets": {"outputStatistics": {"_producer": PRODUCER, "_schemaURL": "x", **stats}}}
    if version is not None:
        dataset["facets"]["version"] = {"_producer": PRODUCER, "_schemaURL": "x", "datasetVersion": version}
    return dataset


@dataclass
class Truth:
    completed: int = 0
    failed: int = 0
    aborted: int = 0
    open: int = 0
    durations: list[float] = field(default_factory=list)
    rows: int | None = None
    bytes: int | None = None
    last_failure: tuple[str, str] | None = None  # (time, message)

    @property
    def rate(self) -> float:
        return (self.failed + self.aborted) / (self.completed + self.failed + self.aborted)


def generated_log(seed: int = 7) -> tuple[list[str], dict[str, Truth]]:
    """JSON lines (shuffled within each run's neighbourhood, duplicates included) and the truth per job name."""
    rng = random.Random(seed)
    plan = {"ingest": (19, 1, 0, 2), "transform": (6, 3, 1, 0), "export": (4, 0, 0, 3), "solo": (0, 0, 1, 1)}
    events: list[dict[str, Any]] = []
    truth = {job: Truth() for job in plan}
    clock = 0.0
    for job, (ok, fail, abort, still_open) in plan.items():
        outcomes = ["COMPLETE"] * ok + ["FAIL"] * fail + ["ABORT"] * abort + [None] * still_open
        rng.shuffle(outcomes)
        for i, outcome in enumerate(outcomes):
            clock += 60
            run_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            duration = round(rng.lognormvariate(2, 1.2), 3)
            events += _one_run(job, run_id, clock, duration, outcome, i, truth[job])
    lines = [json.dumps(e) for e in events]
    # out of order: each line moves up to 3 places (a terminal event may precede its START)
    keyed = sorted(range(len(lines)), key=lambda n: n + rng.uniform(-3, 3))
    return [lines[n] for n in keyed], truth


def _one_run(job: str, run_id: str, start: float, duration: float, outcome: str | None, i: int,
             truth: Truth) -> list[dict[str, Any]]:
    end = start + duration
    events = [run_event("START", run_id, job, start, inputs=[{"namespace": "s3://lake", "name": f"raw/{job}"}])]
    if outcome is None:
        truth.open += 1
        return events + [run_event("RUNNING", run_id, job, start + 1)]
    written = []
    if job == "ingest" and outcome == "COMPLETE":
        # a RUNNING event per commit, the terminal one repeating the last version: 10 + 20 rows, 100 + 200 bytes
        events.append(run_event("RUNNING", run_id, job, start + 0.5,
                                outputs=[output(f"out/{job}", 10, 100, f"{i}a")]))
        written = [output(f"out/{job}", 10, 100, f"{i}a"), output(f"out/{job}", 20, 200, f"{i}b")]
        truth.rows = (truth.rows or 0) + 30
        truth.bytes = (truth.bytes or 0) + 300
    elif job == "transform" and outcome == "COMPLETE":
        written = [output("out/transform", 5, None)]  # no size: bytes stay unknown
        truth.rows = (truth.rows or 0) + 5
    error = f"job {job} run {i} failed: disk <full> & co" if outcome == "FAIL" else None
    terminal = run_event(outcome, run_id, job, end, outputs=written, error=error)
    events.append(terminal)
    if i % 4 == 0:
        events.append(terminal)  # delivered twice (the same runId and eventType)
    if i % 5 == 0:
        events.append(events[0])  # a duplicate START
    state = {"COMPLETE": "completed", "FAIL": "failed", "ABORT": "aborted"}[outcome]
    setattr(truth, state, getattr(truth, state) + 1)
    truth.durations.append(duration)
    if outcome != "COMPLETE" and (truth.last_failure is None or terminal["eventTime"] > truth.last_failure[0]):
        truth.last_failure = (terminal["eventTime"], error)
    return events
