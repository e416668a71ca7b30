"""Side by side with OpenLineage Spark: one Spark application of its own (a separate process, OpenLineage's listener,
its file transport) reads A, writes B and MERGEs into C on the Hadoop, JDBC and REST catalogs; our events for the
same tables must name them as OpenLineage Spark does, and our ``icebergCommitReport`` must equal its
``commitMetrics``, except what only the writer measures (``totalDuration``, ``attempts``) and the snapshot id, which
OpenLineage Spark writes as a double (it loses the low digits of a 64-bit id; ours is the exact integer).

The tables' catalogs cache tables here (``cache-enabled=true``, Iceberg's default): OpenLineage Spark registers its
metrics reporter only on a caching catalog, and without it sends no ``icebergCommitReport`` at all.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from iceberg_lineage.config import Settings
from iceberg_lineage.lineage.events import history_events
from iceberg_lineage.lineage.serde import to_json
from iceberg_lineage.read.catalogs import CatalogSpec
from iceberg_lineage.read.source import load_metadata_path
from iceberg_lineage.scan.discovery import TableFilter
from iceberg_lineage.scan.driver import ScanOptions, scan
from iceberg_lineage.state.store import StateStore
from iceberg_lineage.stats.walker import table_history
from tests.support.engines import HADOOP, JDBC, SparkEngine, require
from tests.support.marquez import dataset_node, edges
from tests.support.olschema import validate_event
from tests.support.openlineage_spark import run_application
from tests.support.rest_engines import spark_catalog_properties
from tests.support.scan import Recorder

REST = "rest"
CATALOGS = (HADOOP, JDBC, REST)
TABLES = ("a", "b", "c")
#: Only the writer measures these.
WRITER_ONLY = {"totalDuration", "attempts"}


def statements(catalog: str) -> list[str]:
    """The tables, then the job: read A and write B, MERGE A into C (merge-on-read: position deletes)."""
    ns = f"{catalog}.peers"
    v2 = "TBLPROPERTIES ('format-version'='2', 'write.merge.mode'='merge-on-read')"
    return [
        f"CREATE NAMESPACE IF NOT EXISTS {ns}",
        f"CREATE TABLE {ns}.a (id bigint, name string) USING iceberg {v2}",
        f"INSERT INTO {ns}.a VALUES (1, 'a'), (2, 'b'), (3, 'c')",
        f"CREATE TABLE {ns}.b (id bigint, name string) USING iceberg {v2}",
        f"CREATE TABLE {ns}.c (id bigint, name string) USING iceberg {v2}",
        f"INSERT INTO {ns}.c VALUES (1, 'old'), (9, 'z')",
        f"INSERT INTO {ns}.b SELECT * FROM {ns}.a",
        f"MERGE INTO {ns}.c t USING {ns}.a s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET name = s.name WHEN NOT MATCHED THEN INSERT *",
    ]


@dataclasses.dataclass
class SideBySide:
    root: Path
    theirs: list[dict[str, Any]]
    #: catalog -> table -> our events (one COMPLETE run per snapshot, in commit order)
    ours: dict[str, dict[str, list[dict[str, Any]]]]
    rest_uri: str


def _ours_hadoop(root: Path) -> dict[str, list[dict[str, Any]]]:
    """PyIceberg has no Hadoop catalog, so the scanner cannot list one: the tables are read from their folders
    and named as a Hadoop catalog names them (``LoadedTable.catalog_type = "hadoop"``, through the Python API)."""
    warehouse = f"file://{root / 'hadoop'}"
    events = {}
    for name in TABLES:
        table = dataclasses.replace(
            load_metadata_path(str(root / "hadoop" / "peers" / name)), catalog_name=HADOOP, catalog_type="hadoop",
            catalog_properties={"type": "hadoop", "warehouse": warehouse}, identifier=("peers", name))
        history = table_history(table, depth="entries")
        events[name] = [json.loads(to_json(e)) for e in history_events(table, history, Settings())]
    return events


def _ours_scanned(spec: CatalogSpec, state_path: Path) -> dict[str, list[dict[str, Any]]]:
    sink = Recorder()
    with StateStore(state_path) as state:
        # Only this test's namespace: the session's REST catalog also holds other suites' tables.
        scan(ScanOptions(catalogs=(spec,), filters=TableFilter(namespaces=("peers",))), Settings(), state, sink)
    events: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
    for doc in sink.terminal:  # each run's COMPLETE (its START names no output)
        events[doc["job"]["name"].split(".")[1]].append(doc)
    return events


@pytest.fixture(scope="module")
def side_by_side(tmp_path_factory, seaweed) -> SideBySide:
    require("java", "pyspark", "iceberg-spark-runtime", "sqlite-jdbc", "hadoop-aws", "openlineage-spark")
    root = tmp_path_factory.mktemp("openlineage-spark")
    conf = {f"spark.sql.catalog.{c}.cache-enabled": "true" for c in CATALOGS}
    conf[f"spark.sql.catalog.{REST}"] = "org.apache.iceberg.spark.SparkCatalog"
    for key, value in spark_catalog_properties(seaweed.uri, seaweed).items():
        conf.setdefault(f"spark.sql.catalog.{REST}.{key}", value)
    theirs = run_application(root, [s for c in CATALOGS for s in statements(c)], extra_conf=conf)
    jdbc = SparkEngine(None, root).pyiceberg_catalog()
    ours = {
        HADOOP: _ours_hadoop(root),
        JDBC: _ours_scanned(CatalogSpec.of(JDBC, {"type": "sql", **jdbc.properties}), root / "state-jdbc.db"),
        REST: _ours_scanned(CatalogSpec.of(REST, seaweed.catalog_properties()), root / "state-rest.db"),
    }
    return SideBySide(root, theirs, ours, seaweed.uri)


def _symlinks(dataset: dict[str, Any]) -> list[dict]:
    return (dataset.get("facets", {}).get("symlinks") or {}).get("identifiers", [])


def their_datasets(events: list[dict[str, Any]]) -> dict[str, tuple[str, str, list[dict]]]:
    """TABLE symlink (``namespace name``) -> (namespace, name, symlinks) of every dataset OpenLineage Spark named."""
    found: dict[str, tuple[str, str, list[dict]]] = {}
    for event in events:
        for dataset in event.get("inputs", []) + event.get("outputs", []):
            for link in _symlinks(dataset):
                identity = (dataset["namespace"], dataset["name"], _symlinks(dataset))
                assert found.setdefault(f"{link['namespace']} {link['name']}", identity) == identity
    return found


def our_identity(events: list[dict[str, Any]]) -> tuple[str, str, list[dict]]:
    outputs = {(o["namespace"], o["name"], json.dumps(_symlinks(o))) for e in events for o in e["outputs"]}
    assert len(outputs) == 1  # one name for every snapshot
    namespace, name, symlinks = outputs.pop()
    return namespace, name, json.loads(symlinks)


def their_commit_reports(events: list[dict[str, Any]], symlink: dict) -> dict[str, dict]:
    """datasetVersion -> OpenLineage Spark's icebergCommitReport for the table of ``symlink`` (each commit is
    reported twice, by the write's own job and by the command's: the two must agree)."""
    reports: dict[str, dict] = {}
    for event in events:
        for output in event.get("outputs", []):
            report = output.get("outputFacets", {}).get("icebergCommitReport")
            if report is None or symlink not in _symlinks(output):
                continue
            version = output["facets"]["version"]["datasetVersion"]
            body = {k: v for k, v in report.items() if not k.startswith("_")}
            assert reports.setdefault(version, body) == body
    return reports


def test_our_events_are_valid_openlineage(side_by_side):
    for by_table in side_by_side.ours.values():
        for events in by_table.values():
            assert events
            for event in events:
                validate_event(event)


@pytest.mark.parametrize("catalog", [HADOOP, REST])
def test_same_namespace_name_and_table_symlink_as_openlineage_spark(side_by_side, catalog):
    theirs = their_datasets(side_by_side.theirs)
    for table in TABLES:
        ours = our_identity(side_by_side.ours[catalog][table])
        [link] = ours[2]
        assert ours == theirs[f"{link['namespace']} {link['name']}"]
    root = side_by_side.root
    expected = {
        HADOOP: ("file", f"{root}/hadoop/peers/a", [{"name": "peers.a", "namespace": f"file:{root}/hadoop",
                                                     "type": "TABLE"}]),
        REST: ("s3://warehouse", "peers/a", [{"name": "peers.a", "namespace": side_by_side.rest_uri, "type": "TABLE"}]),
    }[catalog]
    assert our_identity(side_by_side.ours[catalog]["a"]) == expected


def test_jdbc_catalog_openlineage_spark_names_no_dataset_and_we_do(side_by_side):
    """OpenLineage #4677: a JDBC catalog falls to its Hive handler, and the statements' events carry no dataset."""
    theirs = [e for e in side_by_side.theirs if "jdbc_peers" in e["job"]["name"]]
    assert theirs and all(not e.get("inputs") and not e.get("outputs") for e in theirs)
    root = side_by_side.root
    assert our_identity(side_by_side.ours[JDBC]["b"]) == (
        "file", f"{root}/jdbc/peers/b",
        [{"name": "peers.b", "namespace": f"sqlite:///{root}/catalog.db", "type": "TABLE"}])


@pytest.mark.parametrize("catalog", [HADOOP, REST])
def test_commit_report_equals_openlineage_sparks_commit_metrics(side_by_side, catalog):
    for table, operations in {"a": ["append"], "b": ["append"], "c": ["append", "overwrite"]}.items():
        ours = {e["outputs"][0]["facets"]["version"]["datasetVersion"]: e["outputs"][0]["outputFacets"]
                ["icebergCommitReport"] for e in side_by_side.ours[catalog][table]}
        [link] = our_identity(side_by_side.ours[catalog][table])[2]
        theirs = their_commit_reports(side_by_side.theirs, link)
        assert list(theirs) == list(ours)  # every commit, on both sides
        assert [r["operation"] for r in ours.values()] == operations
        for version, report in ours.items():
            their = dict(theirs[version])
            their_metrics = {k: v for k, v in their.pop("commitMetrics").items() if k not in WRITER_ONLY}
            assert their.pop("snapshotId") == float(report["snapshotId"]) and report["snapshotId"] == int(version)
            assert their_metrics == report["commitMetrics"]
            assert their == {k: v for k, v in report.items() if not k.startswith("_") and k not in
                             ("commitMetrics", "snapshotId")}
    merged = their_commit_reports(side_by_side.theirs, our_identity(side_by_side.ours[catalog]["c"])[2][0])
    last = list(merged.values())[-1]["commitMetrics"]
    # the MERGE's position deletes, as both report them (OpenLineage #3831 does not hit a merge-on-read MERGE here)
    assert (last["addedPositionalDeletes"], last["addedDataFiles"], last["addedRecords"]) == (1, 1, 3)


def _body(facet: dict) -> dict:
    return {k: v for k, v in facet.items() if not k.startswith("_")}


@pytest.mark.parametrize("catalog", [HADOOP, REST])
def test_the_dataset_facets_both_send_agree(side_by_side, catalog):
    """For B's commit by the job: ``storage`` and ``outputStatistics`` are equal, ``schema`` has the same names
    and types (we add ``ordinal_position``), and ``catalog`` the same framework, type, name and warehouse."""
    [ours] = [e["outputs"][0] for e in side_by_side.ours[catalog]["b"]]
    version = ours["facets"]["version"]["datasetVersion"]
    theirs = [o for e in side_by_side.theirs for o in e.get("outputs", [])
              if o.get("facets", {}).get("version", {}).get("datasetVersion") == version]
    with_stats = [o for o in theirs if "outputStatistics" in o.get("outputFacets", {})]
    assert theirs and with_stats
    keys = ("framework", "type", "name", "warehouseUri")
    for their in theirs:
        assert _body(their["facets"]["storage"]) == _body(ours["facets"]["storage"]) == {
            "storageLayer": "iceberg", "fileFormat": "parquet"}
        names_and_types = [{k: f[k] for k in ("name", "type")} for f in ours["facets"]["schema"]["fields"]]
        assert names_and_types == their["facets"]["schema"]["fields"] == [
            {"name": "id", "type": "long"}, {"name": "name", "type": "string"}]
        catalogs = their["facets"]["catalog"], ours["facets"]["catalog"]
        assert [{k: c.get(k) for k in keys} for c in catalogs] == [{k: catalogs[1].get(k) for k in keys}] * 2
        assert [c["source"] for c in catalogs] == ["spark", "iceberg-lineage"]
    size = ours["outputFacets"]["icebergCommitReport"]["commitMetrics"]["addedFilesSizeInBytes"]
    for their in with_stats:
        assert _body(their["outputFacets"]["outputStatistics"]) == _body(ours["outputFacets"]["outputStatistics"]) \
            == {"rowCount": 3, "fileCount": 1, "size": size}


def test_jobs_reads_openlineage_sparks_own_file(side_by_side):
    """`iceberg-lineage jobs` on the file OpenLineage Spark's file transport wrote: every run of every job is
    counted as the events say, checked against a pairing done here by runId."""
    from iceberg_lineage.jobs import read_jobs

    terminal: dict[tuple[str, str], dict[str, str]] = {}
    for event in side_by_side.theirs:
        job = (event["job"]["namespace"], event["job"]["name"])
        state = terminal.setdefault(job, {}).setdefault(event["run"]["runId"], "open")
        if event["eventType"] in ("COMPLETE", "FAIL", "ABORT"):
            terminal[job][event["run"]["runId"]] = event["eventType"]
        elif state == "open":
            terminal[job][event["run"]["runId"]] = "open"
    report = read_jobs(side_by_side.root / "openlineage-spark.jsonl")
    got = {(j.namespace, j.name): (j.completed, j.failed, j.aborted, j.open) for j in report.jobs}
    want = {job: tuple(list(runs.values()).count(s) for s in ("COMPLETE", "FAIL", "ABORT", "open"))
            for job, runs in terminal.items()}
    assert got == want and sum(c for c, *_ in got.values()) >= 6  # the 3 catalogs' writes, at least
    assert report.bad_lines == 0


def test_their_events_and_ours_meet_at_one_dataset_node_in_marquez(side_by_side, marquez):
    """OpenLineage Spark's events writing b and our run of b's snapshot, in one Marquez: one node for b, which their
    INSERT INTO b SELECT FROM a links to a."""
    ours = side_by_side.ours[HADOOP]["b"]
    namespace, name, [link] = our_identity(ours)
    a_namespace, a_name, [a_link] = our_identity(side_by_side.ours[HADOOP]["a"])
    theirs = [e for e in side_by_side.theirs if e["eventType"] == "COMPLETE"
              and any(link in _symlinks(o) for o in e.get("outputs", []))]
    marquez.post(theirs + ours)

    def graph_of(event: dict[str, Any]) -> set[tuple[str, str]]:
        """Marquez draws a dataset's graph from one job: each job's own graph, then."""
        return edges(marquez.lineage(marquez.job_of_run(event["run"]["runId"]), depth=1))

    b, a = dataset_node(namespace, name), dataset_node(a_namespace, a_name)
    assert theirs and all((marquez.job_of_run(e["run"]["runId"]), b) in graph_of(e) for e in [*theirs, ours[-1]])
    readers = [e for e in theirs if any(a_link in _symlinks(i) for i in e.get("inputs", []))]
    assert readers and all((a, marquez.job_of_run(e["run"]["runId"])) in graph_of(e) for e in readers)
