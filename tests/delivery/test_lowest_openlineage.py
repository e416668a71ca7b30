"""The delivery tests again, in a virtualenv with the lowest openlineage-python that pyproject.toml allows (made by
``make provision``): our transports wrap its transports and pass through its configuration, so they must hold on
every version we accept. Skipped with a one-line reason when not provisioned; under CI=true it fails instead."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from tests.support.delivery import OPENLINEAGE_MIN_VENV, lowest_openlineage, missing_lowest_openlineage

REPO = Path(__file__).resolve().parents[2]
#: A focused subset: HTTP hardening, spool, breaker, composite fan-out, replay and quarantine, and the check that no
#: attribute of openlineage-python's objects is set.
SUBSET = ("test_delivery_http.py", "test_silent_server.py", "test_composite_and_cli.py", "test_quarantine.py",
          "test_spool.py", "test_no_patching.py")


@pytest.fixture(scope="module")
def python() -> Path:
    reason = missing_lowest_openlineage()
    if reason:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"openlineage-min: {reason}", pytrace=False)
        pytest.skip(f"openlineage-min: {reason}")
    return OPENLINEAGE_MIN_VENV / "bin" / "python"


def _run(python: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([str(python), *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)


def test_the_virtualenv_holds_the_lowest_allowed_openlineage(python):
    got = _run(python, "-c", "import openlineage.client as c, iceberg_lineage, sys; "
                             "print(c.__version__, c.__file__.startswith(sys.prefix), iceberg_lineage.__file__)")
    version, own, package = got.stdout.split()
    assert got.returncode == 0, got.stderr
    assert version.split(".")[:2] == lowest_openlineage().split(".")[:2] and own == "True"
    assert Path(package).is_relative_to(REPO)  # this checkout's code, not the shared venv's editable install


def test_the_delivery_tests_pass_with_the_lowest_allowed_openlineage(python):
    got = _run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *(f"tests/delivery/{t}" for t in SUBSET))
    assert got.returncode == 0, got.stdout[-3000:] + got.stderr[-2000:]
    assert " passed" in got.stdout.splitlines()[-1] and "failed" not in got.stdout.splitlines()[-1]
