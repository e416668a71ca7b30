"""The hook attached by configuration (issue 28, finding 6): with a job name in the reporter's options, the process is
one run, as under ``iceberg-lineage run``; without one, each commit and scan stays a run of its own. And every run
the hook reports, whichever way it was attached, carries the ``processing_engine`` and ``tags`` run facets.

Real subprocesses running a real script, ``.pyiceberg.yaml`` in their own HOME, a real HTTP endpoint."""
from __future__ import annotations

import datetime as dt
import subprocess
import sys
import textwrap

from tests.support.hook import (
    SCHEMA, assert_hook_facets, inputs, outputs, rows, table_of, tags_in_metadata, valid, version,
)

#: Reads a's first snapshot and writes it into b, loading the catalog twice (each load makes its own reporter);
#: installs its own excepthook first, as a program may; prints the time before its first scan; ``raise`` ends it
#: with an uncaught exception.
SCRIPT = """
import datetime, sys
import scan_reporters
scan_reporters.install()
from pyiceberg.catalog import load_catalog

sys.excepthook = lambda kind, value, tb: print("the script's own hook:", value, file=sys.stderr)
a = load_catalog("lake").load_table("db.a")
b = load_catalog("lake").load_table("db.b")
print(datetime.datetime.now(datetime.timezone.utc).isoformat())
b.append(a.scan(snapshot_id=a.metadata.snapshots[0].snapshot_id).to_arrow())
if sys.argv[1:] == ["raise"]:
    raise ValueError("bad row 7")
"""


def run_configured(lake, collector, tmp_path, *args: str, job_name: str | None) -> subprocess.CompletedProcess:
    """SCRIPT with ``lake`` configured in ``$HOME/.pyiceberg.yaml`` to report to OpenLineage (under ``job_name``)."""
    catalog, env = lake
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    job = f"\n    metrics-reporter.openlineage.job-name: {job_name}" if job_name else ""
    (home / ".pyiceberg.yaml").write_text(textwrap.dedent(f"""\
        catalog:
          lake:
            type: sql
            uri: {catalog.properties["uri"]}
            warehouse: {catalog.properties["warehouse"]}
            metrics-reporter-impl: openlineage""") + job + "\n")
    (tmp_path / "configured.py").write_text(SCRIPT)
    return subprocess.run(
        [sys.executable, "configured.py", *args], cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**env, "HOME": str(home), "PYICEBERG_HOME": str(home), "XDG_STATE_HOME": str(tmp_path / "state"),
             "OPENLINEAGE_URL": collector.url})


def test_configured_job_name_makes_the_process_one_run(lake, collector, tmp_path):
    done = run_configured(lake, collector, tmp_path, job_name="nightly")
    assert (done.returncode, done.stderr) == (0, "")
    events = valid(collector.bodies)
    assert [e["eventType"] for e in events] == ["START", "RUNNING", "RUNNING", "COMPLETE"]
    # the run starts at the first scan, not as the catalogs are loaded
    assert dt.datetime.fromisoformat(events[0]["eventTime"]) >= dt.datetime.fromisoformat(done.stdout.strip())
    assert len({e["run"]["runId"] for e in events}) == 1 and {e["job"]["name"] for e in events} == {"nightly"}
    catalog, _ = lake
    a, b = catalog.load_table("db.a"), catalog.load_table("db.b")
    first, written = a.metadata.snapshots[0].snapshot_id, b.current_snapshot().snapshot_id
    final = events[-1]
    assert [(table_of(d), version(d)) for d in inputs(final)] == [("db.a", first)]
    assert [(table_of(d), version(d)) for d in outputs(final)] == [("db.b", written)]
    assert final["outputs"][0]["outputFacets"]["icebergCommitReport"]["commitMetrics"]["addedRecords"] == 2
    assert tags_in_metadata(b) == {written: final["run"]["runId"]}
    assert_hook_facets(events, "configuration")


def test_uncaught_exception_fails_the_configured_run(lake, collector, tmp_path):
    done = run_configured(lake, collector, tmp_path, "raise", job_name="nightly")
    assert (done.returncode, done.stderr) == (1, "the script's own hook: bad row 7\n")
    events = valid(collector.bodies)
    assert [e["eventType"] for e in events] == ["START", "RUNNING", "RUNNING", "FAIL"]
    assert len({e["run"]["runId"] for e in events}) == 1 and {e["job"]["name"] for e in events} == {"nightly"}
    error = events[-1]["run"]["facets"]["errorMessage"]
    assert error["message"] == "ValueError: bad row 7" and 'raise ValueError("bad row 7")' in error["stackTrace"]
    assert [table_of(d) for d in inputs(events[-1])] == ["db.a"]
    assert [table_of(d) for d in outputs(events[-1])] == ["db.b"]


def test_without_job_name_each_commit_and_scan_is_its_own_run(lake, collector, tmp_path):
    done = run_configured(lake, collector, tmp_path, job_name=None)
    assert (done.returncode, done.stderr) == (0, "")
    events = valid(collector.bodies)
    assert [(e["eventType"], e["job"]["name"]) for e in events] == [
        ("START", "db.a.scan"), ("COMPLETE", "db.a.scan"), ("START", "db.b.pyiceberg"), ("COMPLETE", "db.b.pyiceberg")]
    scan, commit = events[1]["run"]["runId"], events[3]["run"]["runId"]
    assert scan != commit and [e["run"]["runId"] for e in events] == [scan, scan, commit, commit]
    assert [table_of(d) for d in inputs(events[1])] == ["db.a"]
    assert [table_of(d) for d in outputs(events[3])] == ["db.b"]
    assert_hook_facets(events, "configuration")


def test_code_hook_runs_carry_processing_engine_and_tags(sql_catalog, collector):
    import iceberg_lineage

    catalog = iceberg_lineage.observe(sql_catalog, client=collector.client)
    table = catalog.create_table("db.t", SCHEMA)
    table.append(rows(1))
    alone = valid(collector.events())
    with iceberg_lineage.run("coded", client=collector.client):
        table.append(rows(2))
    in_run = valid(collector.events())[len(alone):]

    assert [(e["eventType"], e["job"]["name"]) for e in alone] == [
        ("START", "db.t.pyiceberg"), ("COMPLETE", "db.t.pyiceberg")] * 2  # create_table's CREATE, the append
    assert_hook_facets(alone, "observe")
    assert [(e["eventType"], e["job"]["name"]) for e in in_run] == [
        ("START", "coded"), ("RUNNING", "coded"), ("COMPLETE", "coded")]
    assert_hook_facets(in_run, "run")
