"""Every run we start gets a START and a terminal event (``events.start_events``), and parents only where they are
deterministic: an application id in the summary, or (``requires_parent``: OpenMetadata before 1.13) the table's run.
Atlan: START and terminal pairs, its connection as the job namespace, and parents."""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
import uuid

from openlineage.client.event_v2 import InputDataset, RunState

from iceberg_lineage.config import Settings, load_settings
from iceberg_lineage.lineage.engine_runs import Application, application_event
from iceberg_lineage.lineage.events import snapshot_run_event, with_start
from iceberg_lineage.lineage.profiles import TABLE_RUN_NAMESPACE
from iceberg_lineage.lineage.shaping import shaped as shape
from iceberg_lineage.lineage.runs import application_run_id
from tests.consumers.tables import doc, snapshot_event, stats, table
from tests.support.olschema import validate_event
from tests.support.userstate import USER_STATE

OPENMETADATA = Settings().updated({"consumer.profile": "openmetadata"})
ATLAN = Settings().updated({"consumer.profile": "atlan", "consumer.connection": "lake-connection"})
SNAPSHOT_TIME = "2025-12-01T12:00:00.000Z"  # the fixture snapshot's timestamp-ms, 1764590400000


def named(ref: dict) -> dict:
    """A parent facet's run or job without its (empty) facets."""
    return {k: v for k, v in ref.items() if k != "facets"}


def run_pair(settings: Settings, app_id: str | None = None) -> list:
    """The events of the fixture snapshot's run as built (before the profile), its summary naming ``app_id``."""
    loaded = table(3)
    figures = stats(loaded)
    if app_id is not None:
        figures = dataclasses.replace(figures, summary={**figures.summary, "spark.app.id": app_id})
    return with_start(snapshot_run_event(loaded, figures, settings), settings)


def sent(settings: Settings, app_id: str | None = None) -> list[dict]:
    """What the consumer receives: the run's events shaped by the profile, as JSON."""
    out = [doc(e) for built in run_pair(settings, app_id) for e in shape(built, settings).events]
    for event in out:
        validate_event(json.dumps(event))
    return out


def test_a_run_is_a_start_then_its_complete_and_the_setting_turns_the_start_off(monkeypatch, tmp_path):
    start, complete = (doc(e) for e in run_pair(Settings()))
    assert (start["eventType"], complete["eventType"]) == ("START", "COMPLETE")
    assert start["run"] == complete["run"] and start["job"] == complete["job"]
    assert start["eventTime"] == complete["eventTime"] == SNAPSHOT_TIME  # the snapshot's time, not the clock's
    output = complete["outputs"][0]
    # no outputs: Marquez makes a dataset version of every output it is sent (tests/peers/test_marquez.py)
    assert start["outputs"] == [] and start["inputs"] == []
    assert "icebergTableStatistics" in output["facets"] and "outputStatistics" in output["outputFacets"]
    for event in (start, complete):
        validate_event(json.dumps(event))
    assert [doc(e) for e in run_pair(Settings())][0] == start  # built again later: the same START

    assert [e.eventType for e in run_pair(Settings().updated({"events.start_events": False}))] == [RunState.COMPLETE]
    monkeypatch.chdir(tmp_path)
    assert load_settings(env={}).events.start_events is True
    assert load_settings(env={"ICEBERG_LINEAGE__EVENTS__START_EVENTS": "false"}).events.start_events is False
    (tmp_path / "iceberg-lineage.yml").write_text("events:\n  start_events: no\n")
    assert load_settings(env={}).events.start_events is False


def test_openmetadata_gets_a_table_runs_complete_with_the_tables_run_as_parent():
    [complete] = sent(OPENMETADATA)  # its START names no dataset (Marquez): no table to take a parent from
    assert [e.eventType for e in run_pair(OPENMETADATA)] == [RunState.START, RunState.COMPLETE]
    parent = complete["run"]["facets"]["parent"]
    output = complete["outputs"][0]
    run_id = str(uuid.uuid5(TABLE_RUN_NAMESPACE, f"{output['namespace']}\x1f{output['name']}"))
    assert named(parent["run"]) == named(parent["root"]["run"]) == {"runId": run_id}
    assert named(parent["job"]) == named(parent["root"]["job"]) == {"namespace": "iceberg-lineage",
                                                                    "name": "mart.orders"}  # <ns>.<table>
    again = sent(OPENMETADATA)  # sent again: the same run (only captureDate moves)
    assert again[0]["run"] == complete["run"]
    assert all("parent" not in e["run"]["facets"] for e in sent(Settings()))  # generic: no invented parent


def test_an_application_id_is_the_parent_and_an_application_run_stays_a_root():
    app_run = application_run_id("spark", "app-20251201-0001")
    for settings in (Settings(), OPENMETADATA):
        events = sent(settings, "app-20251201-0001")
        assert [e["eventType"] for e in events] == ["START", "COMPLETE"]
        for event in events:
            assert named(event["run"]["facets"]["parent"]["run"]) == {"runId": app_run}
            assert named(event["run"]["facets"]["parent"]["job"]) == {"namespace": "iceberg-lineage",
                                                                      "name": "spark.application"}
    app = Application("spark", "app-20251201-0001")
    read = InputDataset(namespace="s3://lake", name="warehouse/mart/customers")
    for state in (RunState.START, RunState.COMPLETE):
        event = application_event(app, state, OPENMETADATA, when=dt.datetime(2025, 12, 1, tzinfo=dt.timezone.utc),
                                  inputs=[read] if state == RunState.COMPLETE else [])
        [shaped] = shape(event, OPENMETADATA).events
        assert "parent" not in doc(shaped)["run"]["facets"]


def test_atlan_start_and_terminal_pairs_in_its_connection_with_parents():
    start, complete = sent(ATLAN, "app-20251201-0001")
    assert (start["eventType"], complete["eventType"]) == ("START", "COMPLETE")
    assert start["run"]["runId"] == complete["run"]["runId"]
    app_run = application_run_id("spark", "app-20251201-0001")
    for event in (start, complete):
        assert event["job"] == {**complete["job"], "namespace": "lake-connection"}
        parent = event["run"]["facets"]["parent"]
        assert named(parent["job"]) == named(parent["root"]["job"]) == {"namespace": "lake-connection",
                                                                        "name": "spark.application"}
        assert named(parent["run"]) == named(parent["root"]["run"]) == {"runId": app_run}
    # the parent's own events: the same run, in the same namespace
    app = Application("spark", "app-20251201-0001")
    [app_start] = shape(application_event(app, RunState.START, ATLAN, when=dt.datetime(2025, 12, 1,
                                                                                         tzinfo=dt.timezone.utc)),
                        ATLAN).events
    assert doc(app_start)["job"]["namespace"] == "lake-connection" and doc(app_start)["run"]["runId"] == app_run
    without_app = sent(ATLAN)
    assert [e["eventType"] for e in without_app] == ["START", "COMPLETE"]
    assert {e["job"]["namespace"] for e in without_app} == {"lake-connection"}


def test_the_scanner_sends_the_application_parent_of_a_spark_snapshot(sql_catalog, tmp_path):
    from tests.support.scan import rows, run_scan, write_table

    orders = write_table(sql_catalog, "db.orders", 1)
    orders.append(rows(10), snapshot_properties={"spark.app.id": "app-7"})
    _, sink = run_scan(sql_catalog, tmp_path / "state.db")
    events = sink.parsed
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"] * 2
    parents = [e["run"]["facets"].get("parent") for e in events]
    assert parents[:2] == [None, None]
    assert [p["run"]["runId"] for p in parents[2:]] == [application_run_id("spark", "app-7")] * 2
    for event in events:
        validate_event(json.dumps(event))
    _, again = run_scan(sql_catalog, tmp_path / "other.db")  # another scanner, from nothing: the same events
    assert [{k: v for k, v in e.items() if k != "outputs"} for e in again.parsed] == \
        [{k: v for k, v in e.items() if k != "outputs"} for e in events]


#: Dataset facets a START may carry: identity only (no version, schema nor statistics).
IDENTITY_FACETS = {"symlinks"}


def event_stream(sql_catalog, tmp_path) -> list[dict]:
    """What a consumer receives from a scan, the hook and checks: the scanner's runs (per snapshot, DROP, its own),
    the hook's (CREATE, commits, ALTER with its schema-alert checks run, scan, RENAME, DROP) and a checks run, all
    through the delivery path (the profile of the environment applies), read back from the file transport."""
    import pyarrow as pa

    from iceberg_lineage.checks import check_table, emit_checks
    from iceberg_lineage.delivery.client import make_client
    from iceberg_lineage.delivery.emitter import EMITTERS
    from iceberg_lineage.hook import observe
    from iceberg_lineage.scan import ScanOptions, scan_catalogs
    from pyiceberg.types import StringType
    from tests.support.scan import rows, spec_of, write_table

    settings = load_settings()
    options = ScanOptions(catalogs=(spec_of(sql_catalog),))
    write_table(sql_catalog, "db.plain", 2)
    scan_catalogs(options, settings)
    observe(sql_catalog, client=make_client())
    hooked = sql_catalog.create_table("db.hooked", schema=rows(0).schema)
    hooked.append(rows(0))
    with hooked.update_schema() as update:
        update.add_column("note", StringType())
    hooked.append(rows(10).append_column(pa.field("note", pa.string()), pa.array([None, "a", "b"], pa.string())))
    hooked.scan().to_arrow()
    sql_catalog.rename_table("db.hooked", "db.renamed")
    sql_catalog.drop_table("db.plain")
    assert EMITTERS.flush_all(30)
    scan_catalogs(options, settings)  # the DROP the scanner sees, and its own run
    emit_checks([check_table(("db", "renamed"), settings, catalog=sql_catalog)], settings)
    lines = (tmp_path / USER_STATE / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def runs_of(events: list[dict]) -> dict[str, list[dict]]:
    runs: dict[str, list[dict]] = {}
    for event in events:
        runs.setdefault(event["run"]["runId"], []).append(event)
    return runs


def job_type(event: dict) -> str:
    return event["job"]["facets"]["jobType"]["jobType"]


def kinds(events: list[dict]) -> set[str]:
    """The kinds of run in the stream: job types, lifecycle runs by their change."""
    out = set()
    for event in events:
        change = [d["facets"].get("lifecycleStateChange", {}).get("lifecycleStateChange")
                  for d in event.get("outputs") or ()]
        out.add(next((c for c in change if c), None) or job_type(event))
    return out


def test_every_run_of_a_scan_the_hook_and_checks_has_a_start_and_a_terminal_event_under_atlan(
        sql_catalog, tmp_path, monkeypatch):
    monkeypatch.setenv("ICEBERG_LINEAGE__CONSUMER__PROFILE", "atlan")
    monkeypatch.setenv("ICEBERG_LINEAGE__CONSUMER__CONNECTION", "lake-connection")
    events = event_stream(sql_catalog, tmp_path)
    for event in events:
        validate_event(event)
    assert kinds(events) == {"COMMIT", "CREATE", "ALTER", "RENAME", "DROP", "CHECK", "QUERY", "JOB"}
    assert {e["job"]["namespace"] for e in events} == {"lake-connection"}
    runs = runs_of(events)
    for run_id, run in runs.items():
        types = [e["eventType"] for e in run]
        assert types == ["START", "COMPLETE"] or types == ["START", "FAIL"], (run_id, types, run[0]["job"])
        start, terminal = run
        assert start["job"] == terminal["job"]
        # a hooked commit lasts as long as it took; the scan: its own clock
        assert start["eventTime"] == terminal["eventTime"] or job_type(start) in ("JOB", "COMMIT")
        assert start["eventTime"] <= terminal["eventTime"]
        for dataset in (*start.get("inputs", ()), *start.get("outputs", ())):
            assert set(dataset["facets"]) <= IDENTITY_FACETS and not dataset.get("inputFacets") \
                and not dataset.get("outputFacets"), (run_id, dataset)
        assert not {"errorMessage", "icebergLineageScan"} & set(start["run"].get("facets", {}))
    scanner = [run for run in runs.values() if run[0]["job"]["name"] == "iceberg-lineage.scan"]
    assert len(scanner) == 2
    drops = [run for run in runs.values() if "DROP" in kinds(run)]
    assert len(drops) == 2  # the hook's and the scanner's (each its own run)


def test_without_start_events_every_run_is_its_terminal_event_alone(sql_catalog, tmp_path, monkeypatch):
    monkeypatch.setenv("ICEBERG_LINEAGE__EVENTS__START_EVENTS", "false")
    events = event_stream(sql_catalog, tmp_path)
    assert kinds(events) == {"COMMIT", "CREATE", "ALTER", "RENAME", "DROP", "CHECK", "QUERY", "JOB"}
    assert [e for e in events if e["eventType"] == "START"] == []
    assert all(len(run) == 1 for run in runs_of(events).values())
