"""Spark 3.5 with Iceberg 1.10 Java through the proxy, as an application of its own (a separate Spark process with
its own app id): it reads A and C and writes B, and Java posts real scan and commit reports. One application run
(START, RUNNING per scan, COMPLETE at the proxy's shutdown, no outputs); B's per-snapshot COMPLETE has A and C as
inputs at the snapshots read and names the application run as parent; the report facets are what Java reported."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from urllib.parse import urlparse

import pyarrow as pa

from iceberg_lineage.lineage.engine_runs import application_run_id
from iceberg_lineage.lineage.events import snapshot_run_id
from tests.proxy.conftest import run_of
from tests.support.engines import REPO, require
from tests.support.marquez import dataset_node, edges, job_node

ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": pa.array(["a", "b", "c"])})
NS_PER_MS = 1_000_000


def camel(name: str) -> str:
    head, *rest = name.split("-")
    return head + "".join(p.capitalize() for p in rest)


def expected_scan_facet(report: dict) -> dict:
    """icebergScanReport 1-0-1 as the facet's schema defines it, from Java's JSON (durations in ms)."""
    known = {"totalPlanningDuration", "resultDataFiles", "resultDeleteFiles", "totalDataManifests",
             "totalDeleteManifests", "scannedDataManifests", "skippedDataManifests", "totalFileSizeInBytes",
             "totalDeleteFileSizeInBytes", "skippedDataFiles", "skippedDeleteFiles", "scannedDeleteManifests",
             "skippedDeleteManifests", "indexedDeleteFiles", "equalityDeleteFiles", "positionalDeleteFiles"}
    metrics = {}
    for name, value in report["metrics"].items():
        if camel(name) in known:
            metrics[camel(name)] = value["total-duration"] // NS_PER_MS if "time-unit" in value else value["value"]
    return {"snapshotId": report["snapshot-id"], "schemaId": report["schema-id"],
            "projectedFieldNames": report["projected-field-names"], "scanMetrics": metrics,
            "metadata": report.get("metadata")}


def expected_commit_metrics(report: dict) -> dict:
    out = {}
    for name, value in report["metrics"].items():
        key = camel(name).replace("Dvs", "DVs").replace("FilesSizeBytes", "FilesSizeInBytes")
        out[key] = value["total-duration"] // NS_PER_MS if "time-unit" in value else value["value"]
    return out


def test_a_spark_application_reads_a_and_c_and_writes_b(tapped, tmp_path, marquez):
    require("java", "pyspark", "iceberg-spark-runtime", "hadoop-aws")
    direct = tapped.seaweed.catalog("direct")
    direct.create_namespace_if_not_exists("app")
    for name in ("a", "c"):
        direct.create_table(f"app.{name}", ROWS.schema).append(ROWS)
    direct.create_table("app.b", ROWS.schema)
    read = {name: direct.load_table(f"app.{name}").metadata.current_snapshot_id for name in ("a", "c")}
    proxy = tapped.start()
    seaweed = json.dumps({k: str(v) for k, v in dataclasses.asdict(tapped.seaweed).items()})
    (tmp_path / "spark").mkdir()
    done = subprocess.run([sys.executable, "-m", "tests.proxy.spark_app", str(tmp_path / "spark"), proxy.uri, seaweed],
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    app_id = done.stdout.split()[-1]
    b = direct.load_table("app.b").metadata
    [written] = b.snapshots
    b_run = str(snapshot_run_id(str(b.table_uuid), written.snapshot_id, written.timestamp_ms))
    tapped.events(lambda events: any(e["run"]["runId"] == b_run for e in events))
    proxy.stop()  # the application's run completes at shutdown
    app_run = application_run_id("spark", app_id)
    events = tapped.events(lambda events: any(e["eventType"] == "COMPLETE" for e in run_of(events, app_run)))

    app = run_of(events, app_run)
    types = [e["eventType"] for e in app]
    assert types[0] == "START" and types[-1] == "COMPLETE" and set(types[1:-1]) == {"RUNNING"}, types
    assert all(e["outputs"] == [] and e["job"]["name"] == "spark.application" for e in app)
    assert app[0]["run"]["facets"]["externalQuery"]["externalQueryId"] == app_id
    names = {name: urlparse(direct.load_table(f"app.{name}").location()).path.strip("/") for name in "ac"}
    assert sorted(i["name"] for i in app[-1]["inputs"]) == sorted(names.values())

    scans = [json.loads(r) for r in tapped.tap.reports if json.loads(r)["report-type"] == "scan-report"]
    commits = [json.loads(r) for r in tapped.tap.reports if json.loads(r)["report-type"] == "commit-report"]
    assert {r["snapshot-id"] for r in scans} == set(read.values()) and len(commits) == 1
    running = [i for e in app if e["eventType"] == "RUNNING" for i in e["inputs"]]
    assert len(running) == len(scans)
    for report, dataset in zip(scans, running):
        facet = dataset["inputFacets"]["icebergScanReport"]
        assert {k: facet.get(k) for k in ("snapshotId", "schemaId", "projectedFieldNames", "scanMetrics",
                                          "metadata")} == expected_scan_facet(report)

    [complete] = [e for e in run_of(events, b_run) if e["eventType"] == "COMPLETE"]
    assert complete["run"]["facets"]["parent"]["run"]["runId"] == app_run
    assert sorted((i["name"], i["facets"]["version"]["datasetVersion"]) for i in complete["inputs"]) == sorted(
        (names[t], str(read[t])) for t in "ac")
    facet = complete["outputs"][0]["outputFacets"]["icebergCommitReport"]
    assert facet["commitMetrics"] == expected_commit_metrics(commits[0])
    assert facet["commitMetrics"]["attempts"] >= 1 and "totalDuration" in facet["commitMetrics"]
    assert (facet["snapshotId"], facet["operation"]) == (written.snapshot_id, commits[0]["operation"])

    # in Marquez: A and C -> B's commit job (a child of the application) -> B; the application reads A and C
    marquez.post(events)
    job = marquez.job_of_run(b_run)  # under spark.application's name: it is its parent
    out = complete["outputs"][0]
    graph = marquez.lineage(job, depth=1)  # Marquez draws a dataset's graph from one job: ask the job's
    reads = {dataset_node(i["namespace"], i["name"]) for i in complete["inputs"]}
    assert {(r, job) for r in reads} | {(job, dataset_node(out["namespace"], out["name"]))} <= edges(graph)
    application = job_node(complete["job"]["namespace"], "spark.application")
    assert {(r, application) for r in reads} <= edges(marquez.lineage(application, depth=1))
    assert job == job_node(complete["job"]["namespace"], f"spark.application.{complete['job']['name']}")
