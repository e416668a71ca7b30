"""Where the per-user state lives in a test: ``tests/conftest.py`` points ``XDG_STATE_HOME`` at ``<tmp>/xdg-state``
and runs the test in ``<tmp>``, so the state folder is :data:`USER_STATE` relative to the working directory."""
from pathlib import Path

XDG_STATE = "xdg-state"
#: The per-user state folder (state.db, spool, events.jsonl), relative to the test's working directory.
USER_STATE = Path(XDG_STATE) / "iceberg-lineage"
