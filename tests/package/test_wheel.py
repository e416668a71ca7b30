"""The package as a user gets it (issue 29): ``python -m build`` makes an sdist and a wheel holding what the tool
needs at run time; the wheel, installed into a fresh venv without the test extras (offline, from the wheelhouse
that ``make provision`` fills), runs from a folder outside the clone: ``--version``, the demo, a ``scan`` of the
demo's catalog, the public API, and a one-line hint for an extra that is not installed."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from iceberg_lineage import __version__

REPO = Path(__file__).resolve().parents[2]
WHEELHOUSE = REPO / ".cache" / "wheelhouse"
#: What the built package must hold besides its modules: read at run time through importlib.resources or by Python.
RUNTIME_FILES = (
    "iceberg_lineage/py.typed",
    "iceberg_lineage/schemas/IcebergTableStatisticsDatasetFacet.json",
    "iceberg_lineage/schemas/IcebergLineageScanRunFacet.json",
    "iceberg_lineage/demo/__main__.py",
    "iceberg_lineage/demo/tables.py",
    "iceberg_lineage/demo/samples.py",
    "iceberg_lineage/quality/rules.py",
    "iceberg_lineage/_bootstrap/sitecustomize.py",
    "scan_reporters/py.typed",
)


def wheelhouse() -> Path:
    """The provisioned wheelhouse; skipped with the reason `make provision` left (failed under CI=true), as when
    `build` (the test extra's) is not installed."""
    error = REPO / ".cache" / "interop" / "wheelhouse.error"
    if importlib.util.find_spec("build") is None:
        reason = "build is not installed (make provision installs the test extra)"
    elif (WHEELHOUSE / ".filled").exists():
        return WHEELHOUSE
    else:
        reason = f"no wheelhouse in {WHEELHOUSE} (make provision)" + (
            f": {error.read_text().strip()}" if error.exists() else "")
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def offline_env(home: Path, wheels: Path) -> dict[str, str]:
    """No PYTHONPATH (the clone must not leak in), pip offline on the wheelhouse."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PIP_CONSTRAINT")}
    return {**env, "HOME": str(home), "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def run(args: list, cwd: Path, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=240)
    if check:
        assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The sdist and the wheel (built from the sdist, as pip would), and a fresh venv with the wheel alone."""
    wheels = wheelhouse()
    root = tmp_path_factory.mktemp("package")
    env = offline_env(root, wheels)
    run([sys.executable, "-m", "build", "--outdir", root / "dist", REPO], root, env)
    venv = root / "venv"
    # pip of this interpreter installs into the venv (pip --python): no pip of its own to set up
    run([sys.executable, "-m", "venv", "--without-pip", venv], root, env)
    (wheel,) = (root / "dist").glob("iceberg_lineage-*.whl")
    run([sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "--quiet", wheel],
        root, env)
    outside = root / "outside"
    outside.mkdir()
    return root / "dist", venv, outside, env


def test_the_sdist_and_the_wheel_hold_the_runtime_files(installed):
    dist, _, _, _ = installed
    (wheel,) = dist.glob(f"iceberg_lineage-{__version__}-py3-none-any.whl")
    (sdist,) = dist.glob(f"iceberg_lineage-{__version__}.tar.gz")
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    prefix = f"iceberg_lineage-{__version__}/"
    in_sdist = {name.removeprefix(prefix) for name in tarfile.open(sdist).getnames()}
    assert [f for f in RUNTIME_FILES if f not in in_wheel] == []
    assert [f for f in RUNTIME_FILES if f not in in_sdist] == []
    assert not any(name.startswith("tests/") for name in in_wheel | in_sdist)
    assert "constraints.txt" in in_sdist
    entry_points = zipfile.ZipFile(wheel).read(f"iceberg_lineage-{__version__}.dist-info/entry_points.txt").decode()
    assert "iceberg-lineage = iceberg_lineage.cli:main" in entry_points
    assert "iceberg-lineage-demo = iceberg_lineage.demo.run:main" in entry_points


def test_the_fresh_venv_has_the_core_only(installed):
    """Not the test extras nor any optional extra: the core's dependencies alone."""
    _, venv, outside, env = installed
    code = ("import importlib.util as u; "
            "print(*[m for m in ('pytest', 'hypothesis', 'aiohttp', 'confluent_kafka', 'distributed', 'matplotlib', "
            "'IPython', 'boto3') if u.find_spec(m)])")
    assert run([venv / "bin" / "python", "-c", code], outside, env).stdout.strip() == ""


def test_every_module_imports_without_extras_but_the_rest_bridge(installed):
    """Optional libraries are imported lazily: in the core install every module imports, except the REST bridge's
    package, which is the ``proxy`` extra (the ``proxy`` command checks for aiohttp before importing it)."""
    _, venv, outside, env = installed
    code = """
import importlib, pkgutil, iceberg_lineage, scan_reporters
for package in (iceberg_lineage, scan_reporters):
    for found in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if not found.name.endswith(("__main__", "sitecustomize")):
            try:
                importlib.import_module(found.name)
            except ImportError as exc:
                print(found.name, exc.name)
"""
    assert run([venv / "bin" / "python", "-c", code], outside, env).stdout.splitlines() == [
        "iceberg_lineage.proxy aiohttp"]


def test_version_demo_scan_and_import_outside_the_clone(installed):
    _, venv, outside, env = installed
    cli = venv / "bin" / "iceberg-lineage"
    assert run([cli, "--version"], outside, env).stdout.strip().endswith(f"version {__version__}")

    demo = run([venv / "bin" / "iceberg-lineage-demo"], outside, env)  # `python -m iceberg_lineage.demo`
    assert "demo.orders" in demo.stderr and "try next:" in demo.stderr
    assert (outside / "warehouse" / "catalog.db").is_file()
    sent = [json.loads(line) for line in (outside / ".iceberg-lineage" / "events.jsonl").read_text().splitlines()]

    # the demo's scan emitted every snapshot; a second scan of the same catalog finds the 5 tables and nothing new
    scan = run([cli, "scan", "--catalog", "default", "--state", ".iceberg-lineage/state.db", "--no-progress",
                "--format", "json"], outside, env)  # the demo's own state, as its "try next" commands use it
    summary = json.loads(scan.stderr.strip().splitlines()[-1])
    assert (summary["tables"]["scanned"], summary["tables"]["failed"], summary["snapshots"]["emitted"]) == (5, 0, 0)
    after = (outside / ".iceberg-lineage" / "events.jsonl").read_text().splitlines()
    assert len(after) > len(sent)  # only the scan's own run was added
    assert {json.loads(line)["job"]["name"] for line in after[len(sent):]} == {"iceberg-lineage.scan"}

    # the installed package, not the clone; the public API's figures equal PyIceberg's own count
    code = ("import iceberg_lineage, pyiceberg.catalog.sql as s; "
            "from iceberg_lineage.read.catalogs import embedded_sql_catalog; "
            "stats = iceberg_lineage.table_stats('demo.orders', catalog=embedded_sql_catalog()); "
            "rows = embedded_sql_catalog().load_table('demo.orders').scan().to_arrow().num_rows; "
            "print(iceberg_lineage.__file__, stats.snapshots[-1].records, rows)")
    where, records, rows = run([venv / "bin" / "python", "-c", code], outside, env).stdout.split()
    assert Path(where).is_relative_to(venv) and records == rows


@pytest.mark.parametrize(("args", "env_vars", "message"), [
    (["proxy", "--upstream", "http://127.0.0.1:9"], {}, "the REST bridge needs aiohttp, which is not installed: "
                                                        "pip install 'iceberg-lineage[proxy]'"),
    (["scan", "--catalog", "default", "--executor", "dask"], {}, "--executor dask needs distributed, which is not installed: "
                                         "pip install 'iceberg-lineage[dask]'"),
    (["scan", "--catalog", "default"], {"OPENLINEAGE__TRANSPORT__TYPE": "kafka", "OPENLINEAGE__TRANSPORT__TOPIC_NAME": "lineage"},
     "the kafka transport needs confluent_kafka, which is not installed: pip install 'iceberg-lineage[kafka]'"),
], ids=["proxy", "dask", "kafka"])
def test_a_missing_extra_is_one_line_naming_it(installed, tmp_path, args, env_vars, message):
    _, venv, _, env = installed
    done = run([venv / "bin" / "iceberg-lineage", *args], tmp_path, {**env, **env_vars}, check=False)
    assert (done.returncode, done.stderr.strip().splitlines()[-1:]) == (2, [f"iceberg-lineage: error: {message}"])
    assert "Traceback" not in done.stderr
