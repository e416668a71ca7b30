"""Run contexts: START, a RUNNING event per commit and scan, then COMPLETE (or FAIL) listing every table once."""
from __future__ import annotations

import threading

import pytest
from tests.support.hook import SCHEMA, inputs, outputs, rows, table_of, tags_in_metadata, valid, version

from iceberg_lineage.hook import context as runs
from iceberg_lineage.hook import reporter as hook
from iceberg_lineage.hook.process import command_job_name


@pytest.fixture
def lake(sql_catalog, collector):
    """Tables a (two snapshots) and b (empty), observed, events to a real HTTP server."""
    hook.observe(sql_catalog, client=collector.client)
    a = sql_catalog.create_table("db.a", SCHEMA)
    a.append(rows(1, 2))
    a.append(rows(3))
    b = sql_catalog.create_table("db.b", SCHEMA)
    collector.events()
    collector.clear()
    return a, b


def test_read_a_write_b_is_one_run(lake, collector):
    a, b = lake
    first = a.metadata.snapshots[0].snapshot_id
    with runs.run("copy_a_to_b", client=collector.client) as run:
        b.append(a.scan(snapshot_id=first).to_arrow())
        b.overwrite(rows(7), overwrite_filter="id == 1")

    events = valid(collector.events())
    assert [e["eventType"] for e in events] == ["START", "RUNNING", "RUNNING", "RUNNING", "RUNNING", "COMPLETE"]
    assert {e["run"]["runId"] for e in events} == {run.run_id}
    assert {e["job"]["name"] for e in events} == {"copy_a_to_b"}
    scan, *writes = events[1:5]
    assert [version(d) for d in inputs(scan)] == [first] and not outputs(scan)
    assert [version(outputs(w)[0]) for w in writes] == [s.snapshot_id for s in b.metadata.snapshots]
    assert set(tags_in_metadata(b).values()) == {run.run_id}
    final = events[-1]
    assert [(table_of(d), version(d)) for d in inputs(final)] == [("db.a", first)]
    assert [(table_of(d), version(d)) for d in outputs(final)] == [("db.b", b.current_snapshot().snapshot_id)]
    assert inputs(final)[0]["inputFacets"]["inputStatistics"]["rowCount"] == 2
    assert outputs(final)[0]["outputFacets"]["icebergCommitReport"]["commitMetrics"]["attempts"] == 1
    assert final["run"]["facets"]["processing_engine"]["name"] == "pyiceberg"


def test_failing_body_fails_the_run_and_reraises(lake, collector):
    a, b = lake
    with pytest.raises(ZeroDivisionError) as raised:
        with runs.run("broken", client=collector.client):
            b.append(a.scan().to_arrow())
            1 / 0  # noqa: B018
    events = valid(collector.events())
    assert [e["eventType"] for e in events] == ["START", "RUNNING", "RUNNING", "FAIL"]
    error = events[-1]["run"]["facets"]["errorMessage"]
    assert error["message"] == f"ZeroDivisionError: {raised.value}" and error["programmingLanguage"] == "python"
    assert "1 / 0" in error["stackTrace"]
    assert [table_of(d) for d in outputs(events[-1])] == ["db.b"]


def test_nested_runs_carry_a_parent_facet(lake, collector):
    a, b = lake
    with runs.run("outer", client=collector.client) as outer:
        with runs.run("inner", client=collector.client) as inner:
            b.append(rows(5))
        a.scan().to_arrow()

    events = valid(collector.events())
    inner_events = [e for e in events if e["run"]["runId"] == inner.run_id]
    assert [e["eventType"] for e in inner_events] == ["START", "RUNNING", "COMPLETE"]
    parent = inner_events[0]["run"]["facets"]["parent"]
    assert parent["run"]["runId"] == outer.run_id and parent["job"]["name"] == "outer"
    assert parent["root"]["run"]["runId"] == outer.run_id
    outer_final = events[-1]
    assert outer_final["run"]["runId"] == outer.run_id and "parent" not in outer_final["run"]["facets"]
    assert [table_of(d) for d in inputs(outer_final)] == ["db.a"] and not outputs(outer_final)


def test_threads_started_in_a_run_belong_to_it(lake, collector):
    a, b = lake
    with runs.run("threaded", client=collector.client) as run:
        worker = threading.Thread(target=lambda: b.append(rows(8)))
        worker.start()
        worker.join()
    final = valid(collector.events())[-1]
    assert final["run"]["runId"] == run.run_id
    assert [table_of(d) for d in outputs(final)] == ["db.b"]
    assert set(tags_in_metadata(b).values()) == {run.run_id}


def test_run_is_a_decorator_and_names_the_job_after_the_script(lake, collector, monkeypatch):
    a, b = lake
    monkeypatch.setattr("sys.argv", ["/jobs/nightly_copy.py"])

    @runs.run(client=collector.client)
    def job():
        b.append(a.scan().to_arrow())

    job()
    assert {e["job"]["name"] for e in valid(collector.events())} == {"nightly_copy"}


def test_commit_outside_any_run_after_a_run(lake, collector):
    a, b = lake
    with runs.run("first", client=collector.client):
        b.append(rows(1))
    b.append(rows(2))
    last = valid(collector.events())[-1]
    assert last["eventType"] == "COMPLETE" and last["job"]["name"] == "db.b.pyiceberg"
    assert last["run"]["runId"] == tags_in_metadata(b)[b.current_snapshot().snapshot_id]


@pytest.mark.parametrize(("argv", "name"), [
    (["python", "etl.py", "--day", "1"], "etl"),
    (["/usr/bin/python3.11", "-u", "-X", "dev", "jobs/load_orders.py"], "load_orders"),
    (["python3", "-m", "pipelines.daily"], "pipelines.daily"),
    (["python", "-c", "print(1)"], "python"),
    (["./spark-submit.sh", "x"], "spark-submit.sh"),
])
def test_job_name_of_a_command(argv, name):
    assert command_job_name(argv) == name
