"""Our events in a real Marquez 0.51.1 (the reference OpenLineage server), read back through its REST API: one dataset
version per snapshot with the latest schema current, runs with the commit's duration where it is known, the lineage
graph across tables, checks runs, failures and drops. Every event is validated against the OpenLineage schemas
before it is posted; 39 events in all (posting costs 0.3-0.7 s each)."""
from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.types import StringType

import iceberg_lineage
from iceberg_lineage.hook.reporter import observe
from iceberg_lineage.checks.run import checks_events
from iceberg_lineage.config import Settings
from iceberg_lineage.lineage.serde import to_json
from tests.support.checks import check
from tests.support.hook import FileSink
from tests.support.marquez import dataset_node, edges, job_node
from tests.support.olschema import validate_event
from tests.support.scan import rows, run_scan

JOBS = "iceberg-lineage"


def valid(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for event in events:
        validate_event(json.dumps(event))
    return events


def output_of(events: list[dict[str, Any]]) -> tuple[str, str]:
    """(namespace, name) of the table the last event with an output wrote."""
    dataset = [e for e in events if e.get("outputs")][-1]["outputs"][0]
    return dataset["namespace"], dataset["name"]


def fields(version: dict[str, Any]) -> list[str]:
    return [f["name"] for f in version["fields"]]


@pytest.fixture
def observed(tmp_path):
    """An observed SQLite catalog whose events go to a JSON Lines file."""
    sink = FileSink(tmp_path / "events.jsonl")
    (tmp_path / "wh").mkdir()
    catalog = observe(SqlCatalog("hooked", uri=f"sqlite:///{tmp_path}/hooked.db", warehouse=f"file://{tmp_path}/wh"),
                      client=sink.client)
    catalog.create_namespace("db")
    return catalog, sink


def test_a_scanned_history_is_one_version_per_snapshot_and_the_latest_schema_is_current(marquez, sql_catalog,
                                                                                        state_path):
    table = sql_catalog.create_table("db.history", schema=rows(0).schema)
    table.append(rows(0))
    table.append(rows(10))
    with table.update_schema() as update:
        update.add_column("note", StringType())
    table.append(pa.table({"id": pa.array([99], pa.int64()), "name": ["x"], "note": ["new"]}))
    _, sink = run_scan(sql_catalog, state_path)
    events = valid(sink.parsed)
    marquez.post(events)

    namespace, name = output_of(events)
    snapshots = table.metadata.snapshots
    versions = marquez.versions(namespace, name)  # newest first
    assert len(versions) == len(snapshots) == 3
    assert [v["facets"]["version"]["datasetVersion"] for v in versions] == [
        str(s.snapshot_id) for s in reversed(snapshots)]
    # the schema change is a new field in the next version; the current version is the latest snapshot's
    assert [fields(v) for v in versions] == [["id", "name", "note"], ["id", "name"], ["id", "name"]]
    current = marquez.dataset(namespace, name)
    assert current["currentVersion"] == versions[0]["version"]
    assert fields(current) == ["id", "name", "note"]
    assert current["facets"]["version"]["datasetVersion"] == str(table.metadata.current_snapshot_id)
    assert {"schema", "icebergTableStatistics", "dataQualityMetrics", "catalog", "storage", "symlinks"} <= set(
        current["facets"])
    # a scanner reads history: it does not know how long a commit took, so each run is instant
    [job] = {v["createdByRun"]["jobVersion"]["name"] for v in versions}
    runs = marquez.runs(JOBS, job)
    assert len(runs) == 3 and {(r["state"], r["durationMs"]) for r in runs} == {("COMPLETED", 0)}


def test_hooked_commits_last_their_commit_and_one_job_reports_each_snapshot(marquez, observed):
    catalog, sink = observed
    table = catalog.create_table("db.hooked", schema=rows(0).schema)
    table.append(rows(0))
    table.append(table.scan(limit=2).to_arrow())  # a read, then a write: as the demo does
    events = valid(sink.events())
    marquez.post(events)

    namespace, name = output_of(events)
    versions = marquez.versions(namespace, name)
    # one version per snapshot, and one for the CREATE run (the empty table, with its schema)
    assert len(versions) == len(table.metadata.snapshots) + 1 == 3
    assert {v["createdByRun"]["jobVersion"]["name"] for v in versions} == {"db.hooked.pyiceberg"}
    # the scan is a reader of the table, never a writer of its versions
    graph = marquez.lineage(dataset_node(namespace, name), depth=1)
    assert (dataset_node(namespace, name), job_node(JOBS, "db.hooked.scan")) in edges(graph)
    assert (job_node(JOBS, "db.hooked.scan"), dataset_node(namespace, name)) not in edges(graph)
    # a hooked commit runs from its snapshot's stamp to the commit's end (its measured duration)
    completes = {e["run"]["runId"]: e for e in events if e["eventType"] == "COMPLETE" and e["outputs"]
                 and "icebergCommitReport" in e["outputs"][0]["outputFacets"]}
    runs = {r["id"]: r for r in marquez.runs(JOBS, "db.hooked.pyiceberg") if r["id"] in completes}
    assert len(runs) == 2
    for run_id, run in runs.items():
        took = completes[run_id]["outputs"][0]["outputFacets"]["icebergCommitReport"]["commitMetrics"][
            "totalDuration"]
        assert run["state"] == "COMPLETED" and run["durationMs"] == took


def test_a_run_context_links_what_it_reads_to_what_it_writes(marquez, observed):
    catalog, sink = observed
    source = catalog.create_table("db.source", schema=rows(0).schema)
    source.append(rows(0))
    target = catalog.create_table("db.target", schema=rows(0).schema)
    with iceberg_lineage.run("daily_copy", client=sink.client):
        target.append(source.scan().to_arrow())
    with pytest.raises(RuntimeError), iceberg_lineage.run("daily_fail", client=sink.client):
        source.scan().to_arrow()
        raise RuntimeError("boom")
    events = valid(sink.events())
    marquez.post(events)

    src = next(d for e in events for d in e.get("inputs", ()) if d["name"].endswith("/source"))
    dst = next(d for e in events for d in e.get("outputs", ()) if d["name"].endswith("/target"))
    graph = marquez.lineage(job_node(JOBS, "daily_copy"), depth=1)
    job = job_node(JOBS, "daily_copy")
    assert {(dataset_node(src["namespace"], src["name"]), job),
            (job, dataset_node(dst["namespace"], dst["name"]))} <= edges(graph)
    [copy] = marquez.runs(JOBS, "daily_copy")
    [failed] = marquez.runs(JOBS, "daily_fail")
    assert (copy["state"], failed["state"]) == ("COMPLETED", "FAILED")
    assert failed["facets"]["errorMessage"]["message"] == "RuntimeError: boom"


def test_checks_runs_lifecycle_states_a_drop_and_the_catalog_alias(marquez, observed):
    catalog, sink = observed
    table = catalog.create_table("db.checked", schema=rows(0).schema)
    table.append(rows(0))
    result = check(table, {"row_count": {"min": 100}})  # 3 rows: the assertion fails
    checks = [json.loads(to_json(e)) for e in checks_events([result], Settings())]
    written = valid(sink.events())  # CREATE, then the snapshot: START and COMPLETE each
    marquez.post(written + valid(checks))
    namespace, name = output_of(written)
    # the first snapshot carries CREATE; the next one, without a lifecycle facet, leaves the state empty
    assert marquez.dataset(namespace, name)["lastLifecycleState"] == "CREATE"
    table.append(rows(10))
    marquez.post(valid(sink.events())[len(written):])
    assert marquez.dataset(namespace, name)["lastLifecycleState"] == ""
    posted = len(sink.events())
    catalog.drop_table("db.checked")
    marquez.post(valid(sink.events())[posted:])

    [run] = marquez.runs(JOBS, "db.checked.checks")
    [read] = run["inputDatasetVersions"]
    assertions = read["facets"]["dataQualityAssertions"]["assertions"]
    assert [(a["assertion"], a["success"], a["actual"]) for a in assertions] == [
        (a.assertion, a.success, a.actual) for a in result.assertions] == [("row_count", False, "3")]
    assert run["state"] == "COMPLETED"  # a failed assertion is a finding, not a failed run
    dropped = marquez.dataset(namespace, name)
    assert dropped["lastLifecycleState"] == "DROP" and fields(dropped) == ["id", "name"]
    assert len(marquez.versions(namespace, name)) == 4  # CREATE, two snapshots, the DROP

    # the symlink makes an alias dataset in the catalog's namespace; a lineage query by it finds the table
    [alias] = written[-1]["outputs"][0]["facets"]["symlinks"]["identifiers"]
    assert (alias["namespace"], alias["name"]) == (catalog.properties["uri"], "db.checked")
    graph = marquez.lineage(dataset_node(alias["namespace"], alias["name"]), depth=2)
    assert dataset_node(namespace, name) in graph
