"""Broken environments give one line naming the path and exit 2, never a ``PermissionError`` traceback: an
unreadable ``$HOME`` configuration (a broken state file: tests/state/test_store_errors.py)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from iceberg_lineage.config import find_config_file
from iceberg_lineage.errors import ConfigError

#: Root reads every file: drop the capabilities that let it, so permissions apply as to any user.
NO_DAC_OVERRIDE = ["setpriv", "--inh-caps=-dac_override,-dac_read_search",
                   "--bounding-set=-dac_override,-dac_read_search"]
needs_setpriv = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                                   reason="needs root and setpriv to drop CAP_DAC_OVERRIDE")


def test_unsearchable_home_is_a_config_error(tmp_path, monkeypatch):
    """``Path.is_file`` raises ``PermissionError`` (EACCES) for a file in a directory one may not search."""
    home_config = Path.home() / ".iceberg-lineage.yml"
    real_is_file = Path.is_file

    def is_file(self: Path) -> bool:
        if self == home_config:
            raise PermissionError(13, "Permission denied", str(self))
        return real_is_file(self)

    monkeypatch.setattr(Path, "is_file", is_file)
    with pytest.raises(ConfigError) as caught:
        find_config_file(env={}, cwd=tmp_path)
    assert caught.value.one_line() == f"file {home_config}: cannot read configuration: Permission denied"


def run_without_dac_override(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENLINEAGE", "ICEBERG_LINEAGE", "PYICEBERG"))}
    return subprocess.run([*NO_DAC_OVERRIDE, sys.executable, "-m", "iceberg_lineage.cli", *args],
                          env={**env, "HOME": str(home)}, cwd=home.parent, capture_output=True, text=True,
                          timeout=120, check=False)


@needs_setpriv
def test_unreadable_home_configs_for_real(tmp_path):
    locked = tmp_path / "locked-home"
    locked.mkdir(mode=0)
    readable = tmp_path / "home"
    readable.mkdir()
    (readable / ".pyiceberg.yaml").write_text("catalog: {}\n")
    (readable / ".pyiceberg.yaml").chmod(0)
    try:
        cases = [
            (locked, ["scan", "--dry-run"],
             f"file {locked}/.iceberg-lineage.yml: cannot read configuration: Permission denied"),
            (readable, ["scan", "--dry-run"],
             f"file {readable}/.pyiceberg.yaml: cannot read the PyIceberg configuration: Permission denied"),
            (readable, ["stats", "--catalog", "x", "--table", "db.t"],
             f"file {readable}/.pyiceberg.yaml: cannot read the PyIceberg configuration: Permission denied"),
        ]
        for home, args, line in cases:
            done = run_without_dac_override(home, *args)
            assert (done.returncode, done.stderr) == (2, f"iceberg-lineage: error: {line}\n"), args
    finally:
        locked.chmod(0o755)
