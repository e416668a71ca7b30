"""A hooked script as a user writes it (``observe`` on a SQLite catalog, then N appends), run in a real Python
process, shared by the outage tests and ``benchmarks/hook_outage.py``."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import sys
import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from iceberg_lineage.hook import observe

root, commits = sys.argv[1], int(sys.argv[2])
catalog = observe(SqlCatalog("lake", uri=f"sqlite:///{root}/lake.db", warehouse=f"file://{root}/warehouse"))
catalog.create_namespace_if_not_exists("db")
schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])
table = catalog.create_table("db.t", schema)
for n in range(commits):
    table.append(pa.table({"id": [n], "v": [f"v{n}"]}, schema=schema))
"""


def hooked_env(root: Path, *, url: str | None, **settings: str) -> dict[str, str]:
    """The environment of a hooked script: lineage to ``url`` (disabled when None), state and spool under
    ``root``, and ``ICEBERG_LINEAGE__`` settings (``delivery__breaker_cooldown_s="60"``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENLINEAGE", "ICEBERG_LINEAGE", "PYICEBERG"))}
    env.update({"ICEBERG_LINEAGE__SPOOL__PATH": str(root / "spool"),
                "ICEBERG_LINEAGE__STATE__PATH": str(root / "state.db")})
    env.update({"OPENLINEAGE_URL": url} if url else {"OPENLINEAGE_DISABLED": "true"})
    env.update({f"ICEBERG_LINEAGE__{name.upper()}": value for name, value in settings.items()})
    return env


def run_hooked(root: Path, commits: int, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    """Run :data:`SCRIPT` in ``root`` (a fresh folder: its own catalog and warehouse)."""
    (root / "warehouse").mkdir(parents=True)
    script = root / "hooked.py"
    script.write_text(SCRIPT)
    return subprocess.run([sys.executable, str(script), str(root), str(commits)], env=env, cwd=root,
                          capture_output=True, text=True, timeout=timeout)
