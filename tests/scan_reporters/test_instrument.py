"""Instrumented catalogs: one ScanReport per scan execution, one CommitReport per new snapshot, observers."""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from tests.support import scan_reporters as h
from tests.support.scan_reporters import catalog, instrumented, memory  # noqa: F401 - pytest fixtures
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.table import DataScan
from pyiceberg.table.update import AddSnapshotUpdate

import scan_reporters
from scan_reporters import CommitReport, ScanReport
from scan_reporters.reporters.memory import InMemoryMetricsReporter


def sorted_rows(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=lambda r: (r["id"], r["cat"]))


def test_every_write_gives_one_commit_report_per_new_snapshot(instrumented, memory):
    table = h.simple_table(instrumented, "db.w", batches=2)
    table.overwrite(h.arrow_rows([100, 101], "a", 5), overwrite_filter="cat == 'a'")
    table.delete("id == 12")
    table.dynamic_partition_overwrite(h.arrow_rows([200], "b", 6))
    table.upsert(h.arrow_rows([200, 300], "b", 6), join_cols=["id"])
    with table.update_schema() as update:
        update.add_column("note", h.StringType())
    table.transaction().set_properties({"k": "v"}).commit_transaction()

    snapshots = table.snapshots()
    reports = memory.commit_reports
    assert [r.snapshot_id for r in reports] == [s.snapshot_id for s in snapshots]
    for report, snapshot in zip(reports, snapshots):
        assert report.table_name == "t.db.w"
        assert report.operation == snapshot.summary.operation.value
        assert report.sequence_number == snapshot.sequence_number
        values = report.commit_metrics.values()
        assert values["attempts"] == 1 and values["total-duration"] > 0
        assert values["total-records"] == int(snapshot.summary["total-records"])
        assert values.get("added-records") == (int(snapshot.summary["added-records"]) if snapshot.summary["added-records"] else None)
    outcomes = memory.commit_outcomes
    assert [o.added_snapshot_ids for o in outcomes][-2:] == [(), ()]  # schema and property updates: no snapshot
    assert sum(len(o.added_snapshot_ids) for o in outcomes) == len(snapshots)
    for outcome in outcomes:
        assert outcome.error is None and outcome.identifier == ("db", "w")
        assert [r.snapshot_id for r in outcome.commit_reports] == list(outcome.added_snapshot_ids)
        assert outcome.metadata is not None and outcome.metadata_location.endswith(".metadata.json")
    assert outcomes[0].base_metadata.current_snapshot_id is None
    assert outcomes[-1].metadata.properties["k"] == "v"


def test_create_transaction_has_no_base_metadata(instrumented, memory):
    with instrumented.create_table_transaction("db.ct", h.SCHEMA) as tx:
        tx.append(h.arrow_rows([1, 2], "a", 0))
    (outcome,) = memory.commit_outcomes
    assert outcome.base_metadata is None and len(outcome.commit_reports) == 1
    assert outcome.commit_reports[0].commit_metrics.values()["added-records"] == 2


def test_results_unchanged_and_one_report_per_scan_execution(catalog, memory):
    table = h.simple_table(catalog, "db.r", batches=4)
    table.delete("id == 3")
    plain_rows = sorted_rows(table.scan(row_filter="id > 2").to_arrow())
    plain_files = sorted(t.file.file_path for t in table.scan().plan_files())
    plain_count = table.scan(row_filter="cat == 'a'").count()

    scan_reporters.instrument(catalog, memory)
    assert sorted_rows(table.scan(row_filter="id > 2").to_arrow()) == plain_rows
    assert sorted(t.file.file_path for t in table.scan().plan_files()) == plain_files
    assert table.scan(row_filter="cat == 'a'").count() == plain_count
    assert sorted_rows(table.scan(row_filter="id > 2").to_arrow_batch_reader().read_all()) == plain_rows
    assert len(memory.scan_reports) == 4
    assert all(isinstance(r, ScanReport) and r.table_name == "t.db.r" for r in memory.scan_reports)
    if _has_pandas():  # pandas is not a dependency of the project
        assert len(table.scan().to_pandas()) == 39
        assert len(memory.scan_reports) == 5
    assert not memory.commit_reports


def _has_pandas() -> bool:
    import importlib.util

    return importlib.util.find_spec("pandas") is not None


def test_scan_outcome_and_time_travel(instrumented, memory):
    table = h.simple_table(instrumented, "db.tt", batches=3)
    first = table.snapshots()[0].snapshot_id
    table.manage_snapshots().create_tag(first, "v1").commit()
    memory.clear()

    rows = table.scan(snapshot_id=first).to_arrow()
    tagged = table.scan().use_ref("v1").select("id").to_arrow()
    current = table.scan(row_filter="cat == 'b'").to_arrow()
    outcomes = memory.scan_outcomes
    assert [o.snapshot_id for o in outcomes] == [first, first, table.current_snapshot().snapshot_id]
    assert [o.report.snapshot_id for o in outcomes] == [o.snapshot_id for o in outcomes]
    assert [o.result_records for o in outcomes] == [rows.num_rows, tagged.num_rows, current.num_rows] == [10, 10, 10]
    assert outcomes[2].result_data_files == 1 and outcomes[2].result_file_size_in_bytes > 0
    assert outcomes[2].row_filter == table.scan(row_filter="cat == 'b'").row_filter
    assert outcomes[1].report.projected_field_names == ("id",)
    for outcome in outcomes:
        assert outcome.table is table  # the Table the scan came from
        assert outcome.table.metadata_location == table.metadata_location


def test_empty_table_and_server_side_planning_give_no_report(instrumented, memory, monkeypatch):
    empty = instrumented.create_table("db.empty", h.SCHEMA)
    assert empty.scan().to_arrow().num_rows == 0
    table = h.simple_table(instrumented, "db.ssp", batches=1)
    monkeypatch.setattr(instrumented, "supports_server_side_planning", lambda: True)
    monkeypatch.setattr(DataScan, "_plan_files_server_side", lambda self: [])
    assert list(table.scan().plan_files()) == []
    assert memory.scan_reports == []


def test_instrumenting_twice_does_not_double_report_and_covers_loaded_tables(catalog, memory):
    table = h.simple_table(catalog, "db.i", batches=1)  # loaded before instrumentation
    scan_reporters.instrument(catalog, memory)
    scan_reporters.instrument(catalog)
    table.append(h.arrow_rows([50], "z", 0))
    table.scan().to_arrow()
    assert len(memory.commit_reports) == 1 and len(memory.scan_reports) == 1
    replacement = InMemoryMetricsReporter()
    scan_reporters.instrument(catalog, replacement)
    table.scan().to_arrow()
    assert len(memory.scan_reports) == 1 and len(replacement.scan_reports) == 1
    scan_reporters.uninstrument(catalog)
    table.scan().to_arrow()
    assert type(catalog).__name__ == "SqlCatalog" and len(replacement.scan_reports) == 1
    # the class-level scan patch goes away with the last instrumented catalog (other tests' catalogs may live on)
    import gc

    from scan_reporters.instrument import _LIVE

    gc.collect()
    if not _LIVE:
        assert "__wrapped__" not in vars(DataScan.plan_files)


class Exploding:
    def report(self, report):
        raise RuntimeError("report boom")

    def after_commit(self, outcome):
        raise RuntimeError("after_commit boom")

    def after_scan(self, outcome):
        raise RuntimeError("after_scan boom")

    def before_commit(self, table, updates):
        raise RuntimeError("before_commit boom")


def test_reporter_exceptions_are_logged_and_swallowed(catalog, memory, caplog):
    scan_reporters.instrument(catalog, scan_reporters.CompositeMetricsReporter([Exploding(), memory]))
    with caplog.at_level(logging.ERROR, logger="scan_reporters"):
        table = h.simple_table(catalog, "db.x", batches=2)
        assert table.scan().to_arrow().num_rows == 20
    assert len(memory.commit_reports) == 2 and len(memory.scan_reports) == 1
    messages = caplog.text
    for boom in ("report boom", "after_commit boom", "after_scan boom", "before_commit boom"):
        assert boom in messages


class RunIdStamper:
    """Adds a summary property to every new snapshot, as the lineage layer does."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def report(self, report):
        pass

    def before_commit(self, table, updates):
        stamped = []
        for update in updates:
            if isinstance(update, AddSnapshotUpdate):
                self.calls.append(update.snapshot.snapshot_id)
                summary = update.snapshot.summary.model_copy()
                summary["iceberg-lineage.run-id"] = "run-42"
                update = AddSnapshotUpdate(snapshot=update.snapshot.model_copy(update={"summary": summary}))
            stamped.append(update)
        return tuple(stamped)


def test_before_commit_stamps_the_committed_snapshot(instrumented, memory):
    stamper = RunIdStamper()
    scan_reporters.instrument(instrumented, scan_reporters.CompositeMetricsReporter([stamper, memory]))
    table = h.simple_table(instrumented, "db.stamp", batches=2)
    on_disk = json.loads(Path(table.metadata_location.removeprefix("file://")).read_text())
    assert [s["summary"].get("iceberg-lineage.run-id") for s in on_disk["snapshots"]] == ["run-42", "run-42"]
    assert stamper.calls == [s["snapshot-id"] for s in on_disk["snapshots"]]
    assert table.scan().to_arrow().num_rows == 20
    assert [r.snapshot_id for r in memory.commit_reports] == stamper.calls


def test_retry_counts_attempts_and_calls_before_commit_each_time(instrumented, memory):
    stamper = RunIdStamper()
    scan_reporters.instrument(instrumented, scan_reporters.CompositeMetricsReporter([stamper, memory]))
    h.simple_table(instrumented, "db.retry", batches=1)
    with instrumented.load_table("db.retry").transaction() as tx:
        tx.set_properties({"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "5"})
    stale = instrumented.load_table("db.retry")
    instrumented.load_table("db.retry").append(h.arrow_rows([90], "a", 0))  # a concurrent writer
    memory.clear()
    stamper.calls.clear()
    stale.append(h.arrow_rows([91], "a", 0))

    (outcome,) = memory.commit_outcomes
    assert outcome.attempts == 2 and outcome.error is None
    assert len(stamper.calls) == 2 and len(set(stamper.calls)) == 1 == len(outcome.added_snapshot_ids)
    (report,) = memory.commit_reports
    assert report.commit_metrics.values()["attempts"] == 2
    assert stale.current_snapshot().summary["iceberg-lineage.run-id"] == "run-42"


def test_a_commit_failing_for_good_is_reported_once_with_its_error(instrumented, memory):
    h.simple_table(instrumented, "db.fail", batches=1)
    with instrumented.load_table("db.fail").transaction() as tx:
        tx.set_properties({"commit.retry.num-retries": "0"})
    stale = instrumented.load_table("db.fail")
    instrumented.load_table("db.fail").append(h.arrow_rows([90], "a", 0))
    memory.clear()
    with pytest.raises(CommitFailedException):
        stale.append(h.arrow_rows([91], "a", 0))
    (outcome,) = memory.commit_outcomes
    assert isinstance(outcome.error, CommitFailedException)
    assert outcome.attempts == 1 and outcome.metadata is None and outcome.commit_reports == ()
    assert memory.commit_reports == []


def test_lifecycle_operations_are_table_events(instrumented, memory):
    table = instrumented.create_table("db.life", h.SCHEMA)
    location = table.metadata_location
    instrumented.drop_table("db.life")
    instrumented.register_table("db.life2", location)
    instrumented.rename_table("db.life2", "db.life3")
    instrumented.purge_table("db.life3")
    events = [(e.kind, e.identifier, e.new_identifier, e.metadata_location) for e in memory.table_events]
    assert events[0] == ("create", ("db", "life"), None, location)
    assert events[1] == ("drop", ("db", "life"), None, location)
    assert events[2] == ("register", ("db", "life2"), None, location)
    assert events[3][:3] == ("rename", ("db", "life2"), ("db", "life3"))
    assert events[4][:2] == ("drop", ("db", "life3")) and memory.table_events[4].purge
    assert len(events) == 5 and all(e.metadata is not None for e in memory.table_events)


def test_concurrent_writers_and_readers_on_separate_tables(instrumented, memory):
    tables = [h.simple_table(instrumented, f"db.c{i}", batches=1) for i in range(4)]
    memory.clear()
    errors: list[BaseException] = []

    def work(table):
        try:
            for j in range(3):
                table.append(h.arrow_rows([100 + j], "a", 0))
                table.scan(row_filter="id >= 100").to_arrow()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in tables]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(memory.commit_reports) == 12 and len(memory.scan_reports) == 12
    for table in tables:
        name = "t." + ".".join(table.name())
        mine = [r for r in memory.commit_reports if r.table_name == name]
        assert sorted(r.snapshot_id for r in mine) == sorted(s.snapshot_id for s in table.snapshots()[1:])
        assert all(r.commit_metrics.values()["attempts"] == 1 for r in mine)
        scans = [r for r in memory.scan_reports if r.table_name == name]
        assert [r.scan_metrics.values()["result-data-files"] for r in scans] == [1, 2, 3]


def test_commit_reports_are_frozen(instrumented, memory):
    h.simple_table(instrumented, "db.frozen", batches=1)
    report = memory.commit_reports[0]
    assert isinstance(report, CommitReport)
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.snapshot_id = 1  # type: ignore[misc]
    assert pc.sum(instrumented.load_table("db.frozen").scan().to_arrow()["id"]).as_py() == sum(range(10))


def test_position_deletes_read_the_same_and_equality_deletes_still_report(catalog, memory):
    table = h.simple_table(catalog, "db.del", batches=3)
    files = sorted(t.file.file_path for t in table.scan().plan_files())
    h.commit_delete_files(table, [h.position_delete_file(table, files[0], [0, 4], path_scoped=False)])
    plain = sorted_rows(table.scan().to_arrow())
    scan_reporters.instrument(catalog, memory)
    assert sorted_rows(table.scan().to_arrow()) == plain and len(plain) == 28
    values = memory.scan_reports[-1].scan_metrics.values()
    assert (values["positional-delete-files"], values["result-delete-files"]) == (1, 1)

    partition = next(t.file.partition for t in table.scan().plan_files() if t.file.file_path == files[1])
    h.commit_delete_files(table, [h.equality_delete_file(table, partition)])
    memory.clear()
    with pytest.raises(ValueError, match="equality deletes"):
        table.scan().to_arrow()
    (report,) = memory.scan_reports
    assert report.scan_metrics.values()["equality-delete-files"] == 1


def test_an_instrumented_catalog_pickles_as_the_plain_catalog():
    import pickle

    from pyiceberg.catalog.noop import NoopCatalog

    catalog = scan_reporters.instrument(NoopCatalog("n", **{"metrics-reporter-impl": "memory"}))
    try:
        clone = pickle.loads(pickle.dumps(catalog))
        assert type(clone) is NoopCatalog and clone.properties == catalog.properties
        assert not scan_reporters.is_instrumented(clone) and scan_reporters.is_instrumented(catalog)
    finally:
        scan_reporters.uninstrument(catalog)


def test_commit_reporting_reads_no_manifests(instrumented, memory, monkeypatch):
    """CommitReports come from the snapshot summary: a fast append with manifest reading forbidden still reports."""
    from pyiceberg.manifest import ManifestFile

    import scan_reporters.scan_metrics

    table = h.simple_table(instrumented, "db.nomf", batches=1)

    def forbidden(*args, **kwargs):
        raise AssertionError("manifest read on the commit path")

    monkeypatch.setattr(ManifestFile, "fetch_manifest_entry", forbidden)
    monkeypatch.setattr(scan_reporters.scan_metrics, "read_live_entries", forbidden)
    table.append(h.arrow_rows([77], "a", 0))
    assert memory.commit_reports[-1].snapshot_id == table.current_snapshot().snapshot_id
    assert memory.commit_reports[-1].commit_metrics.values()["total-records"] == 11
