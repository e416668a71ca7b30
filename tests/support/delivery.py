"""Helpers of the delivery tests: real OpenLineage HTTP endpoints on 127.0.0.1 whose answers each test scripts,
and events to send them."""
from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any
from uuid import uuid4

from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import Job, Run, RunEvent, RunState
from openlineage.client.transport.http import HttpConfig, HttpTransport

from tests.support.lineage_server import Answer, LineageServer, Script, always_ok, free_port  # noqa: F401 (re-exported)


def http_client(url: str, *, timeout: float = 2.0, **retry: Any) -> OpenLineageClient:
    """A client with openlineage-python's HTTP transport; ``retry`` is merged into its default retry."""
    config: dict[str, Any] = {"url": url, "timeout": timeout}
    if retry:
        config["retry"] = retry
    return OpenLineageClient(transport=HttpTransport(HttpConfig.from_dict(config)))


#: Keeps tests fast: openlineage-python's 5 retries, with millisecond backoff.
FAST = {"backoff_factor": 0.01}


def run_event(
    event_type: RunState = RunState.START, run_id: str | None = None, job: str = "db.orders.spark"
) -> RunEvent:
    return RunEvent(
        eventType=event_type,
        eventTime=dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.timezone.utc).isoformat(),
        run=Run(runId=run_id or str(uuid4())),
        job=Job(namespace="iceberg-lineage-tests", name=job),
        producer="https://github.com/example/iceberg-lineage/tests",
    )


def run_pairs(n: int) -> list[RunEvent]:
    """START and COMPLETE of ``n`` runs, in emission order."""
    events = []
    for _ in range(n):
        run_id = str(uuid4())
        events += [run_event(RunState.START, run_id), run_event(RunState.COMPLETE, run_id)]
    return events


def key(body: bytes | str) -> tuple[str, str]:
    doc = json.loads(body)
    return doc["run"]["runId"], doc["eventType"]


#: openlineage-python at the lowest version pyproject.toml allows, in a virtualenv of its own (``make provision``).
OPENLINEAGE_MIN_VENV = Path(__file__).resolve().parents[2] / ".cache" / "interop" / "openlineage-min" / "venv"


def lowest_openlineage() -> str:
    """The lower bound of ``openlineage-python`` in pyproject.toml (``>=1.54`` -> ``1.54``)."""
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    [bound] = re.findall(r'"openlineage-python>=([0-9.]+)', pyproject.read_text())
    return bound


def missing_lowest_openlineage() -> str | None:
    """Why the lowest-version virtualenv is not usable (one line), or None."""
    python = OPENLINEAGE_MIN_VENV / "bin" / "python"
    if not python.exists():
        error = OPENLINEAGE_MIN_VENV.parent.with_suffix(".error")
        return f"no {OPENLINEAGE_MIN_VENV} (make provision)" + (f": {error.read_text().strip()}" if error.exists() else "")
    return None


def waiting_in(spool: str | Path) -> int:
    """How many events wait in the spool at ``spool`` (0 when there is none)."""
    from iceberg_lineage.delivery.spool import Spool

    if not Spool.exists(spool):
        return 0
    with Spool(spool) as opened:
        return opened.count()
