"""``make run`` (issue 29): the demo in a virtualenv of its own with the core install only, never the test extras nor
the shared ``.venv``, saying what it does before each slow step. Read from make's own plan of a cold run
(``make -n -B``: every step, none executed)."""
from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def cold_run_plan() -> list[str]:
    if shutil.which("make") is None:
        pytest.skip("no make on PATH")
    done = subprocess.run(["make", "--no-print-directory", "-n", "-B", "-C", str(REPO), "run"], capture_output=True,
                          text=True, timeout=60, check=True)
    return done.stdout.splitlines()


def test_make_run_installs_the_core_alone_into_its_own_venv_and_says_so():
    plan = cold_run_plan()
    installs = [i for i, line in enumerate(plan) if " pip install " in line]
    assert len(installs) == 1, plan
    install = shlex.split(plan[installs[0]])
    venv = Path(install[0]).parents[1]  # <venv>/bin/python -m pip install ...
    assert venv.name != ".venv"
    assert install[-2:] == ["-e", "."]  # the project alone: no [test,...] extras
    assert "-c" in install and install[install.index("-c") + 1] == "constraints.txt"
    # an echo says what happens before the venv is made and before the install
    made = next(i for i, line in enumerate(plan) if re.search(r"-m venv " + re.escape(str(venv)), line))
    for step in (made, installs[0]):
        assert plan[step - 1].startswith("echo ") and "make run:" in plan[step - 1]
    assert plan[-1] == f"{venv}/bin/python -m iceberg_lineage.demo"
