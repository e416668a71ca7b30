"""``iceberg-lineage run`` on an unmodified script, and attaching by catalog properties (real subprocesses; the
``.pyiceberg.yaml`` configuration is in test_configured_run)."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from tests.support.hook import (
    SCHEMA, assert_hook_facets, inputs, outputs, read_events, rows, table_of, tags_in_metadata, valid, version,
)
from tests.support.userstate import USER_STATE

ETL = """
import os, sys
from pyiceberg.catalog import load_catalog

catalog = load_catalog("lake", type="sql", uri=os.environ["LAKE_URI"], warehouse=os.environ["LAKE_WAREHOUSE"])
a, b = catalog.load_table("db.a"), catalog.load_table("db.b")
copied = a.scan(snapshot_id=a.metadata.snapshots[0].snapshot_id).to_arrow()
b.append(copied)
print("copied", copied.num_rows)
print("a warning of the script", file=sys.stderr)
mode = sys.argv[1] if len(sys.argv) > 1 else ""
if mode == "raise":
    raise ValueError("bad row 7")
if mode == "exit":
    sys.exit(3)
if mode == "kill":
    os.kill(os.getpid(), 9)
"""


@pytest.fixture
def lake(lake, tmp_path):
    """The hook suites' ``lake``, with etl.py reading a's first snapshot into b."""
    (tmp_path / "etl.py").write_text(ETL)
    return lake


def run_cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    """``iceberg-lineage run ARGS`` through the installed console script."""
    command = [str(Path(sys.executable).with_name("iceberg-lineage")), "run"]
    return subprocess.run([*command, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_read_a_write_b_script_is_one_run(lake, collector, tmp_path):
    catalog, env = lake
    done = run_cli("--", sys.executable, "etl.py", env={**env, "OPENLINEAGE_URL": collector.url}, cwd=tmp_path)

    assert (done.returncode, done.stdout, done.stderr) == (0, "copied 2\n", "a warning of the script\n")
    events = valid(collector.bodies)
    assert [e["eventType"] for e in events] == ["START", "RUNNING", "RUNNING", "COMPLETE"]
    assert len({e["run"]["runId"] for e in events}) == 1 and {e["job"]["name"] for e in events} == {"etl"}
    a, b = catalog.load_table("db.a"), catalog.load_table("db.b")
    first, written = a.metadata.snapshots[0].snapshot_id, b.current_snapshot().snapshot_id
    assert [(table_of(d), version(d)) for d in inputs(events[1])] == [("db.a", first)]
    assert [(table_of(d), version(d)) for d in outputs(events[2])] == [("db.b", written)]
    final = events[-1]
    assert [(table_of(d), version(d)) for d in inputs(final)] == [("db.a", first)]
    assert [(table_of(d), version(d)) for d in outputs(final)] == [("db.b", written)]
    assert final["outputs"][0]["outputFacets"]["icebergCommitReport"]["commitMetrics"]["addedRecords"] == 2
    assert tags_in_metadata(b) == {written: final["run"]["runId"]}
    assert_hook_facets(events, "process")

    from iceberg_lineage.config import Settings
    from iceberg_lineage.read.catalogs import CatalogSpec
    from iceberg_lineage.scan.driver import ScanOptions, scan
    from iceberg_lineage.scan.sinks import event_sink
    from iceberg_lineage.state.store import StateStore

    sent: list[str] = []
    spec = CatalogSpec.of("lake", {"type": "sql", **catalog.properties})
    # the scan shares the hook's state (the default state.path, under the same working directory): its ledger
    with StateStore(tmp_path / USER_STATE / "state.db") as state:
        summary = scan(ScanOptions(catalogs=(spec,)), Settings(), state, event_sink(lambda e: sent.append(e) or "delivered"))
    assert summary.snapshots_by_hooks == 1
    assert str(written) not in "".join(sent) and str(first) in "".join(sent)


@pytest.mark.parametrize(
    ("mode", "code", "message"),
    [("raise", 1, "ValueError: bad row 7"), ("exit", 3, "exited with code 3"), ("kill", 137, "killed by signal SIGKILL")],
)
def test_failing_script_is_a_fail_run_with_its_exit_code(lake, collector, tmp_path, mode, code, message):
    _, env = lake
    done = run_cli("--job-name", "nightly", "--", sys.executable, "etl.py", mode,
                   env={**env, "OPENLINEAGE_URL": collector.url}, cwd=tmp_path)
    assert done.returncode == code and done.stdout == "copied 2\n"
    events = valid(collector.bodies)
    assert events[0]["eventType"] == "START" and events[-1]["eventType"] == "FAIL"
    assert {e["job"]["name"] for e in events} == {"nightly"}
    assert events[-1]["run"]["facets"]["errorMessage"]["message"] == message
    if mode != "kill":  # a killed child loses the events it had not yet built; its FAIL still comes
        assert [table_of(d) for d in outputs(events[-1])] == ["db.b"]


def test_default_file_transport_and_existing_sitecustomize(lake, tmp_path):
    _, env = lake
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import os\nos.environ['CHAINED'] = 'yes'\n")
    script = tmp_path / "show.py"
    script.write_text("import os\nprint(os.environ.get('CHAINED'))\n")
    done = run_cli("--", sys.executable, "show.py", env={**env, "PYTHONPATH": str(site)}, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == "yes\n"
    assert done.stderr.count(f"appending events to {tmp_path / USER_STATE / 'events.jsonl'}") == 1
    events = valid(read_events(tmp_path / USER_STATE / "events.jsonl"))
    assert [(e["eventType"], e["job"]["name"]) for e in events] == [("START", "show"), ("COMPLETE", "show")]


def test_catalog_property_as_load_catalog_argument(lake, tmp_path):
    import pyiceberg.catalog
    from scan_reporters.instrument import install, uninstall

    catalog, _ = lake
    install()
    try:
        observed = pyiceberg.catalog.load_catalog(
            "lake", **{"type": "sql", **catalog.properties, "metrics-reporter-impl": "openlineage"})
        observed.load_table("db.b").append(rows(5))
    finally:
        uninstall()
    from iceberg_lineage.delivery.emitter import EMITTERS

    assert EMITTERS.flush_all(30)
    start, event = valid(read_events(tmp_path / USER_STATE / "events.jsonl"))
    assert (start["eventType"], start["run"]["runId"]) == ("START", event["run"]["runId"])
    assert event["job"]["name"] == "db.b.pyiceberg" and table_of(outputs(event)[0]) == "db.b"


def test_catalog_configured_by_the_script_itself(lake, collector, tmp_path):
    """PyIceberg reads its configuration when ``pyiceberg.catalog`` is imported, so instrumenting waits for it."""
    _, env = lake
    (tmp_path / "env_etl.py").write_text(textwrap.dedent("""\
        import os
        os.environ["PYICEBERG_CATALOG__LAKE__TYPE"] = "sql"
        os.environ["PYICEBERG_CATALOG__LAKE__URI"] = os.environ["LAKE_URI"]
        os.environ["PYICEBERG_CATALOG__LAKE__WAREHOUSE"] = os.environ["LAKE_WAREHOUSE"]
        from pyiceberg.catalog import load_catalog
        lake = load_catalog("lake")
        lake.load_table("db.b").append(lake.load_table("db.a").scan().to_arrow())
        """))
    done = run_cli("--", sys.executable, "env_etl.py", env={**env, "OPENLINEAGE_URL": collector.url}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    final = valid(collector.bodies)[-1]
    assert final["eventType"] == "COMPLETE" and final["job"]["name"] == "env_etl"
    assert [table_of(d) for d in inputs(final)] == ["db.a"] and [table_of(d) for d in outputs(final)] == ["db.b"]


DIRECT = """
import os
from pyiceberg.catalog.sql import SqlCatalog

catalog = SqlCatalog("lake", uri=os.environ["LAKE_URI"], warehouse=os.environ["LAKE_WAREHOUSE"])
a, b = catalog.load_table("db.a"), catalog.load_table("db.b")
b.append(a.scan(snapshot_id=a.metadata.snapshots[0].snapshot_id).to_arrow())
"""


def test_directly_built_catalog_is_seen(lake, collector, tmp_path):
    """PyIceberg's getting-started guide builds ``SqlCatalog(...)`` itself: no ``load_catalog`` to hook into."""
    catalog, env = lake
    (tmp_path / "direct.py").write_text(DIRECT)
    done = run_cli("--", sys.executable, "direct.py", env={**env, "OPENLINEAGE_URL": collector.url}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    events = valid(collector.bodies)
    assert [e["eventType"] for e in events] == ["START", "RUNNING", "RUNNING", "COMPLETE"]
    a, b = catalog.load_table("db.a"), catalog.load_table("db.b")
    first, written = a.metadata.snapshots[0].snapshot_id, b.current_snapshot().snapshot_id
    final = events[-1]
    assert [(table_of(d), version(d)) for d in inputs(final)] == [("db.a", first)]
    assert [(table_of(d), version(d)) for d in outputs(final)] == [("db.b", written)]
    assert tags_in_metadata(b) == {written: final["run"]["runId"]}
