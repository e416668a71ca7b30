"""History mode against a real SQLite catalog: exactly once, in commit order, watermark after delivery only."""
from __future__ import annotations

import json
import os

import pytest
from tests.support.olschema import validate_event

from iceberg_lineage.scan.discovery import TableFilter
from iceberg_lineage.scan.driver import ScanOptions
from iceberg_lineage.scan.task import find_gap
from iceberg_lineage.state.store import StateStore, Watermark

from tests.support.scan import Recorder, lifecycle, rows, run_scan, snapshot_ids, write_table


def commit_order(table) -> list[int]:
    table = table.refresh()
    return [s.snapshot_id for s in sorted(table.snapshots(), key=lambda s: s.sequence_number)]


def test_every_snapshot_once_in_commit_order_then_only_new_ones(sql_catalog, state_path):
    orders = write_table(sql_catalog, "db.orders", 4)
    items = write_table(sql_catalog, "db.items", 2)

    summary, sink = run_scan(sql_catalog, state_path)

    by_table: dict[str, list[int]] = {}
    for event in sink.parsed:
        validate_event(event)
    # each snapshot's run: its START (no output: Marquez would make a version of it), then its COMPLETE, at the
    # snapshot's time
    starts, completes = sink.parsed[0::2], sink.parsed[1::2]
    assert {e["eventType"] for e in starts} == {"START"} and {e["eventType"] for e in completes} == {"COMPLETE"}
    for start, complete in zip(starts, completes):
        assert (start["run"], start["job"], start["eventTime"]) == \
            (complete["run"], complete["job"], complete["eventTime"])
        assert start["outputs"] == [] and len(complete["outputs"]) == 1
    for event in completes:
        by_table.setdefault(event["outputs"][0]["name"], []).extend(snapshot_ids([event]))
    assert by_table == {orders.location().removeprefix("file://"): commit_order(orders),
                        items.location().removeprefix("file://"): commit_order(items)}
    assert (summary.tables_scanned, summary.updated, summary.unchanged, summary.failed) == (2, 2, 0, 0)
    assert summary.snapshots_emitted == 6 and summary.exit_code == 0

    again, sink = run_scan(sql_catalog, state_path)
    assert sink.events == [] and again.snapshots_emitted == 0 and again.unchanged == 2

    write_table(sql_catalog, "db.orders", 2, start=100)
    third, sink = run_scan(sql_catalog, state_path)
    assert snapshot_ids(sink.parsed) == commit_order(orders)[-2:]
    assert (third.updated, third.unchanged, third.snapshots_emitted) == (1, 1, 2)


def test_a_failed_delivery_stops_the_watermark_and_the_rest_comes_again(sql_catalog, state_path):
    table = write_table(sql_catalog, "db.t", 4)
    order = commit_order(table)

    # START and COMPLETE of the first snapshot, then the second's START spooled and its COMPLETE failed
    summary, sink = run_scan(sql_catalog, state_path, Recorder(["delivered", "delivered", "spooled", "delivered",
                                                                "spooled", "failed"]))
    assert snapshot_ids(sink.parsed) == order[:3]  # stopped at the failed one
    assert summary.exit_code == 1 and summary.failed == 1 and summary.snapshots_emitted == 2
    assert "delivery failed" in summary.failures[0].reason
    with StateStore(state_path) as state:
        assert [s.snapshot_id for s in state.emitted(str(table.metadata.table_uuid))] == order[:2]

    retry, sink2 = run_scan(sql_catalog, state_path)
    assert snapshot_ids(sink2.parsed) == order[2:]
    assert sink2.parsed[0] == sink.parsed[4]  # the same START, re-emitted identical
    assert sink2.parsed[1]["run"]["runId"] == sink.parsed[5]["run"]["runId"]  # the same run, re-emitted
    assert retry.exit_code == 0


def test_dry_run_prints_and_records_nothing(sql_catalog, state_path):
    write_table(sql_catalog, "db.t", 3)
    summary, dry = run_scan(sql_catalog, state_path, readonly=True, dry_run=True)
    assert not state_path.exists()
    assert summary.snapshots_emitted == 3 and summary.dry_run
    _, real = run_scan(sql_catalog, state_path)
    # a crash between delivery and record re-emits the same runs: run ids do not depend on the attempt
    assert [e["run"]["runId"] for e in real.parsed] == [e["run"]["runId"] for e in dry.parsed]


def test_hook_tagged_snapshots_are_counted_not_emitted(sql_catalog, state_path):
    table = write_table(sql_catalog, "db.t", 1)
    table.append(rows(50), snapshot_properties={"iceberg-lineage.run-id": "0190f3a2-0000-7000-8000-000000000001"})
    table.append(rows(60))
    order = commit_order(table)

    summary, sink = run_scan(sql_catalog, state_path)
    assert snapshot_ids(sink.parsed) == [order[0], order[2]]
    assert (summary.snapshots_emitted, summary.snapshots_by_hooks) == (2, 1)
    with StateStore(state_path) as state:
        recorded = {s.snapshot_id: (s.via, s.run_id) for s in state.emitted(str(table.metadata.table_uuid))}
    assert recorded[order[1]] == ("hook", "0190f3a2-0000-7000-8000-000000000001")
    again, sink = run_scan(sql_catalog, state_path)
    assert sink.events == [] and again.snapshots_by_hooks == 0


def test_branches_tags_and_staged_snapshots_get_their_own_event_once(sql_catalog, state_path):
    table = write_table(sql_catalog, "db.t", 2)
    main_head = table.refresh().current_snapshot().snapshot_id
    table.manage_snapshots().create_tag(main_head, "v1").create_branch(main_head, "audit").commit()
    table.refresh().append(rows(70), branch="audit")
    table.refresh().append(rows(80))
    table.refresh().append(rows(90), branch=None)  # staged (write-audit-publish): on no branch yet
    table = table.refresh()
    summary, sink = run_scan(sql_catalog, state_path)
    assert sorted(snapshot_ids(sink.parsed)) == sorted(s.snapshot_id for s in table.snapshots())
    assert summary.snapshots_emitted == 5
    audit_head = table.metadata.refs["audit"].snapshot_id
    [audit_event] = [e for e in sink.parsed if snapshot_ids([e]) == [audit_head]]
    assert audit_event["outputs"][0]["outputFacets"]  # a real snapshot run, not a lifecycle event
    assert run_scan(sql_catalog, state_path)[1].events == []


def test_current_mode_one_dataset_event_per_changed_table(sql_catalog, state_path):
    write_table(sql_catalog, "db.a", 3)
    b = write_table(sql_catalog, "db.b", 1)
    summary, sink = run_scan(sql_catalog, state_path, mode="current")
    assert summary.snapshots_emitted == 2 and len(sink.events) == 2
    for event in sink.parsed:
        validate_event(event)
        assert "dataset" in event and "run" not in event
    assert run_scan(sql_catalog, state_path, mode="current")[1].events == []
    b.append(rows(5))
    _, sink = run_scan(sql_catalog, state_path, mode="current")
    [event] = sink.parsed
    assert event["dataset"]["facets"]["version"]["datasetVersion"] == str(b.refresh().current_snapshot().snapshot_id)
    # the history watermark is separate: a history scan still emits every snapshot
    assert run_scan(sql_catalog, state_path)[0].snapshots_emitted == 5


def test_expired_before_emitted_is_reported_as_a_gap(sql_catalog, state_path):
    table = write_table(sql_catalog, "db.t", 2)
    run_scan(sql_catalog, state_path)
    write_table(sql_catalog, "db.t", 3, start=200)
    table = table.refresh()
    lost = commit_order(table)[2:4]
    table.maintenance.expire_snapshots().by_ids(lost).commit()

    summary, sink = run_scan(sql_catalog, state_path)
    assert snapshot_ids(sink.parsed) == commit_order(table)[-1:]
    [(name, gap)] = summary.gaps
    assert name == "test.db.t" and gap.count == 2
    assert gap.first_ms <= gap.last_ms
    assert run_scan(sql_catalog, state_path)[0].gaps == ()  # reported once


def test_gap_detection_is_pure():
    from iceberg_lineage.read.metadata_json import parse_metadata

    def snap(i: int, seq: int) -> dict:
        return {"snapshot-id": i, "sequence-number": seq, "timestamp-ms": 1000 * seq, "manifest-list": "x",
                "summary": {"operation": "append"}}

    raw = {"format-version": 2, "table-uuid": "u", "location": "/t", "last-sequence-number": 6,
           "last-updated-ms": 6000, "schemas": [{"schema-id": 0, "fields": []}], "current-schema-id": 0,
           "snapshots": [snap(1, 1), snap(5, 5), snap(6, 6)], "current-snapshot-id": 6,
           "snapshot-log": [{"snapshot-id": i, "timestamp-ms": 1000 * i} for i in range(1, 7)]}
    md = parse_metadata(raw, "/t/metadata/v1.metadata.json")
    gap = find_gap(md, Watermark(frozenset({1}), 1, 1000))
    assert (gap.count, gap.first_ms, gap.last_ms) == (3, 1000, 5000)
    assert find_gap(md, Watermark(frozenset({1, 5, 6}), 6, 6000)) is None


def test_since_skips_older_snapshots(sql_catalog, state_path):
    table = write_table(sql_catalog, "db.t", 3)
    order = sorted(table.refresh().snapshots(), key=lambda s: s.sequence_number)
    summary, sink = run_scan(sql_catalog, state_path, since_ms=order[1].timestamp_ms)
    assert snapshot_ids(sink.parsed) == [s.snapshot_id for s in order if s.timestamp_ms >= order[1].timestamp_ms]


def test_nested_namespaces_and_filters(sql_catalog, state_path, tmp_path):
    sql_catalog.create_namespace(("db", "inner"))
    sql_catalog.create_namespace(("db", "inner", "deep"))
    for name in ("db.keep", "db.skip_me", "db.inner.t", "db.inner.deep.t"):
        write_table(sql_catalog, name, 1)
    summary, sink = run_scan(sql_catalog, state_path, filters=TableFilter(exclude=("*skip*",)))
    names = sorted(e["job"]["name"].rsplit(".", 1)[0] for e in sink.terminal)
    assert names == ["db.inner.deep.t", "db.inner.t", "db.keep"]
    _, sink = run_scan(sql_catalog, tmp_path / "other.db", readonly=True, filters=TableFilter(namespaces=("db.inner",)))
    assert sorted(e["job"]["name"].rsplit(".", 1)[0] for e in sink.terminal) == ["db.inner.deep.t", "db.inner.t"]


def test_dropped_table_gets_one_drop_only_in_scope(sql_catalog, state_path):
    write_table(sql_catalog, "db.stays", 1)
    gone = write_table(sql_catalog, "db.gone", 2)
    run_scan(sql_catalog, state_path)
    sql_catalog.drop_table("db.gone")

    out_of_scope, sink = run_scan(sql_catalog, state_path, filters=TableFilter(include=("db.stays",)))
    assert sink.events == [] and out_of_scope.drops == 0

    summary, sink = run_scan(sql_catalog, state_path)
    start, drop = sink.parsed  # its own run: START, COMPLETE
    assert (start["eventType"], start["run"]["runId"]) == ("START", drop["run"]["runId"])
    validate_event(drop)
    assert lifecycle(drop) == "DROP" and summary.drops == 1
    assert drop["outputs"][0]["name"] == gone.location().removeprefix("file://")
    assert run_scan(sql_catalog, state_path)[1].events == []


def test_renamed_table_gets_rename_and_no_history_again(sql_catalog, state_path):
    write_table(sql_catalog, "db.old_name", 3)
    run_scan(sql_catalog, state_path)
    sql_catalog.rename_table("db.old_name", "db.new_name")

    summary, sink = run_scan(sql_catalog, state_path)
    [rename] = sink.terminal
    validate_event(rename)
    assert lifecycle(rename) == "RENAME" and summary.renames == 1 and summary.drops == 0
    assert rename["job"]["name"].startswith("db.new_name.")
    assert summary.snapshots_emitted == 0
    assert run_scan(sql_catalog, state_path)[1].events == []


def test_unreadable_table_is_isolated(sql_catalog, state_path):
    write_table(sql_catalog, "db.good", 2)
    bad = write_table(sql_catalog, "db.bad", 2)
    with open(bad.metadata_location.removeprefix("file://"), "w") as f:
        f.write("{ not json")

    summary, sink = run_scan(sql_catalog, state_path)
    assert summary.snapshots_emitted == 2 and summary.failed == 1 and summary.exit_code == 1
    [failure] = summary.failures
    assert failure.table == "db.bad" and failure.catalog == "test"
    assert json.dumps(summary.to_json())  # machine-readable


def test_scan_options_refuse_bad_values():
    from iceberg_lineage.errors import ConfigError

    with pytest.raises(ConfigError):
        ScanOptions(catalogs=(), mode="everything")
    with pytest.raises(ConfigError):
        ScanOptions(catalogs=(), depth="deep")


def test_one_table_under_two_names_is_emitted_once_and_never_renamed(sql_catalog, state_path):
    table = write_table(sql_catalog, "db.main_name", 2)
    sql_catalog.register_table(("db", "alias"), table.metadata_location)
    for _ in range(3):
        summary, sink = run_scan(sql_catalog, state_path)
        assert summary.renames == 0 and summary.drops == 0
        assert all(lifecycle(e) in (None, "CREATE") for e in sink.parsed)
    first, _ = run_scan(sql_catalog, state_path.with_name("fresh.db"))
    assert first.snapshots_emitted == 2


def test_missing_manifest_list_fails_that_table_naming_the_file(sql_catalog, state_path):
    write_table(sql_catalog, "db.good", 1)
    broken = write_table(sql_catalog, "db.broken", 2).refresh()
    manifest_list = broken.current_snapshot().manifest_list
    os.remove(manifest_list.removeprefix("file://"))

    summary, sink = run_scan(sql_catalog, state_path)
    [failure] = summary.failures
    assert failure.table == "db.broken" and failure.kind == "manifest"
    assert failure.file and failure.file.endswith(manifest_list.rsplit("/", 1)[1])
    assert summary.snapshots_emitted == 1 and summary.exit_code == 1
