"""The journal of ``iceberg-lineage run``: how the child tells the parent what it read, wrote and died of.

The parent builds the run's final event from it once it knows the exit code, so a child killed without running its
exit handlers still gets its FAIL with its datasets.
"""
from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from openlineage.client.event_v2 import InputDataset, OutputDataset
from openlineage.client.serde import Serde

from iceberg_lineage.lineage.runs import Failure, dataset_key


class Journal:
    """Append-only JSON Lines shared by the child (writer, possibly several processes) and the parent (reader).

    One line per dataset as it was emitted, and one per uncaught exception, tagged with the writer's pid.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def _append(self, entry: Mapping[str, Any]) -> None:
        line = json.dumps({**entry, "pid": os.getpid()}, sort_keys=True, default=str) + "\n"
        with self._lock, open(self.path, "a", encoding="utf-8") as out:
            out.write(line)

    def datasets(self, inputs: Sequence[InputDataset], outputs: Sequence[OutputDataset]) -> None:
        for role, items in (("input", inputs), ("output", outputs)):
            for d in items:
                self._append({"kind": role, "dataset": Serde.to_dict(d)})

    def failure(self, failure: Failure) -> None:
        self._append({"kind": "error", "message": failure.message, "stackTrace": failure.stack_trace})


@dataclass(frozen=True)
class JournalState:
    """What a child process reported: datasets read and written (last entry per table wins) and its error."""

    inputs: tuple[InputDataset, ...] = ()
    outputs: tuple[OutputDataset, ...] = ()
    failures: Mapping[int, Failure] = field(default_factory=dict)


def read_journal(path: str | Path) -> JournalState:
    """Parse a journal; a torn last line (a killed child) is ignored."""
    inputs: dict[tuple[str, str], InputDataset] = {}
    outputs: dict[tuple[str, str], OutputDataset] = {}
    failures: dict[int, Failure] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    for line in lines:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if entry.get("kind") == "error":
            failures[int(entry["pid"])] = Failure(entry["message"], entry.get("stackTrace"))
            continue
        d = entry["dataset"]
        if entry["kind"] == "input":
            ds = InputDataset(namespace=d["namespace"], name=d["name"], facets=d.get("facets") or {},
                              inputFacets=d.get("inputFacets") or {})
            inputs[dataset_key(ds)] = ds
        else:
            out = OutputDataset(namespace=d["namespace"], name=d["name"], facets=d.get("facets") or {},
                                outputFacets=d.get("outputFacets") or {})
            outputs[dataset_key(out)] = out
    return JournalState(tuple(inputs.values()), tuple(outputs.values()), failures)
