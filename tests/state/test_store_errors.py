"""A broken state file gives one line naming the path and exit 2, never a ``sqlite3`` traceback, in a scan and in a
dry run: a state path that is a directory, a garbage state file (left as it was)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from iceberg_lineage.cli import main


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(("iceberg-lineage: error:", "Traceback"))]


@pytest.mark.parametrize("dry_run", [False, True], ids=["scan", "dry-run"])
def test_state_path_that_is_a_directory(tmp_path, dry_run):
    state = tmp_path / "state-dir"
    state.mkdir()
    result = CliRunner().invoke(main, ["scan", "--catalog", "default", "--state", str(state),
                                       *(["--dry-run"] if dry_run else [])])
    assert result.exit_code == 2
    assert error_lines(result.stderr) == [f"iceberg-lineage: error: file {state}: is a directory, not a state file"]


@pytest.mark.parametrize("dry_run", [False, True], ids=["scan", "dry-run"])
def test_garbage_state_file(tmp_path, dry_run):
    state = tmp_path / "state.db"
    state.write_bytes(b"this is no SQLite database\n" * 200)
    result = CliRunner().invoke(main, ["scan", "--catalog", "default", "--state", str(state),
                                       *(["--dry-run"] if dry_run else [])])
    assert result.exit_code == 2
    assert error_lines(result.stderr) == [
        f"iceberg-lineage: error: file {state}: cannot open the state file (file is not a database)"]
    assert state.read_bytes() == b"this is no SQLite database\n" * 200  # left as it was
