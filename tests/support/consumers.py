"""The consumers' own code for tests/consumers, each in a virtualenv of its own under .cache/interop (make provision):
OpenMetadata's ingestion framework (its OpenLineage connector parses our events offline) and DataHub's Airflow
plugin (its OpenLineage -> DataHub URN mapping). Each probe runs in that interpreter, on our events as JSON Lines."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Iterable

from tests.support.engines import INTEROP, _provision_error

PROBES = Path(__file__).parents[1] / "consumers"
VENVS = {"openmetadata": INTEROP / "openmetadata" / "venv", "datahub": INTEROP / "datahub" / "venv"}


def missing_consumer(name: str) -> str | None:
    if (VENVS[name] / "bin" / "python").exists() and not (INTEROP / f"{name}.error").exists():
        return None
    return f"no {name} virtualenv in {VENVS[name]} (make provision){_provision_error(name)}"


def probe(name: str, events: Iterable[Any]) -> list[dict[str, Any]]:
    """What the consumer's code makes of each event (``tests/consumers/<name>_probe.py`` in its interpreter)."""
    from iceberg_lineage.lineage.serde import to_json

    lines = "".join((e if isinstance(e, str) else to_json(e)) + "\n" for e in events)
    done = subprocess.run([str(VENVS[name] / "bin" / "python"), "-W", "ignore", str(PROBES / f"{name}_probe.py")],
                          input=lines, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines()]
