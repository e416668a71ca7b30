"""Consumer profiles (consumer.profile): each consumer's published limits, applied in one place after events are
built (lineage.shaping.shaped, which the delivery path calls before sending)."""
from __future__ import annotations

import json
import logging

import pytest
from click.testing import CliRunner
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import RunState
from openlineage.client.transport.transport import Transport

from iceberg_lineage.config import PROFILE_NAMES, Settings, load_settings
from iceberg_lineage.errors import ConfigError
from iceberg_lineage.lineage.profiles import PROFILES, current_state_event
from iceberg_lineage.lineage.shaping import shaped as shape
from iceberg_lineage.lineage.serde import to_json
from tests.consumers.tables import doc, linked_run, size, snapshot_event, stats, table
from tests.support.olschema import validate_event

DATAZONE = Settings().updated({"consumer.profile": "datazone"})
DATAPLEX = Settings().updated({"consumer.profile": "dataplex"})


def links(d: dict) -> int:
    """Input -> output links of an event document: every input with every output."""
    return len(d.get("inputs") or ()) * len(d.get("outputs") or ())


class Capture(Transport):
    """A transport that keeps every event it is given (what the consumer would receive)."""

    kind = "capture"

    def __init__(self) -> None:
        self.sent: list[dict] = []

    def emit(self, event):  # type: ignore[override]
        self.sent.append(json.loads(to_json(event)))


def test_every_profile_is_declared_once_and_settable_three_ways(tmp_path, monkeypatch):
    assert tuple(PROFILES) == PROFILE_NAMES
    monkeypatch.chdir(tmp_path)
    assert load_settings(env={}).consumer.profile == "generic"
    (tmp_path / "iceberg-lineage.yml").write_text("consumer:\n  profile: marquez\n")
    assert load_settings(env={}).consumer.profile == "marquez"
    env = {"ICEBERG_LINEAGE__CONSUMER__PROFILE": "datahub"}
    assert load_settings(env=env).consumer.profile == "datahub"
    assert load_settings({"consumer.profile": "datazone"}, env=env).consumer.profile == "datazone"  # the flag wins
    with pytest.raises(ConfigError, match="consumer.profile must be one of generic, marquez"):
        load_settings(env={"ICEBERG_LINEAGE__CONSUMER__PROFILE": "purview"})


def test_generic_and_other_unlimited_profiles_send_the_built_event_itself():
    event = snapshot_event(50)
    for name in ("generic", "marquez"):  # openmetadata adds a parent (tests/consumers/test_start_and_parents.py)
        assert shape(event, Settings().updated({"consumer.profile": name})).events == (event,)


def test_datahub_each_snapshot_gets_a_checks_run_with_the_input_metrics_facet():
    event = snapshot_event(3)
    datahub = Settings().updated({"consumer.profile": "datahub"})
    sent = [doc(e) for e in shape(event, datahub).events]
    assert sent[0] == doc(event) and len(sent) == 3
    start, check = sent[1:]
    assert check["job"]["name"] == "mart.orders.checks" and check["eventType"] == "COMPLETE"
    assert (start["eventType"], start["run"], start["job"], start["eventTime"]) == (
        "START", check["run"], check["job"], check["eventTime"])
    assert start["inputs"] == [{"namespace": check["inputs"][0]["namespace"], "name": check["inputs"][0]["name"],
                                "facets": {"symlinks": check["inputs"][0]["facets"]["symlinks"]}, "inputFacets": {}}]
    without = Settings().updated({"consumer.profile": "datahub", "events.start_events": False})
    assert [doc(e) for e in shape(event, without).events] == [sent[0], check]
    assert check["job"]["facets"]["jobType"]["jobType"] == "CHECK" and check["outputs"] == []
    [table] = check["inputs"]
    built = sent[0]["outputs"][0]
    assert (table["namespace"], table["name"]) == (built["namespace"], built["name"])
    assert table["facets"]["version"]["datasetVersion"] == "8000000000000000001"
    metrics = table["inputFacets"]["dataQualityMetrics"]
    assert metrics["_schemaURL"].endswith("/1-0-3/DataQualityMetricsInputDatasetFacet.json"
                                          "#/$defs/DataQualityMetricsInputDatasetFacet")
    assert (metrics["rowCount"], metrics["bytes"], metrics["fileCount"]) == (10, 4096, 1)
    assert metrics["columnMetrics"]["c0002"] == {"count": 10, "nullCount": 1, "min": -2, "max": 2, "quantiles": {}}
    for e in sent:
        validate_event(json.dumps(e))
    assert doc(shape(event, datahub).events[2]) == check  # re-sent: the same run
    assert len(shape(shape(event, datahub).events[2], datahub).events) == 1  # a checks run gets none
    assert len(shape(linked_run(2, 1, RunState.START), datahub).events) == 1


@pytest.mark.parametrize("profile", ["datazone", "dataplex"])
def test_run_events_only_the_current_state_is_the_current_snapshots_run(profile):
    loaded = table(5)
    settings = Settings().updated({"consumer.profile": profile})
    state = doc(current_state_event(loaded, stats(loaded), settings))
    history = doc(current_state_event(loaded, stats(loaded), Settings()))
    assert "dataset" in history and "eventType" not in history  # generic: a DatasetEvent
    assert state["eventType"] == "COMPLETE" and state["schemaURL"].endswith("#/$defs/RunEvent")
    from iceberg_lineage.lineage.events import snapshot_run_event

    assert state["run"]["runId"] == doc(snapshot_run_event(loaded, stats(loaded), settings))["run"]["runId"]
    validate_event(json.dumps(state))


def test_events_cli_takes_the_profile_flag_over_the_environment(tmp_path, monkeypatch):
    from iceberg_lineage.cli import main
    from tests.support.fixture_tables import FIXTURES, fixture_relocation

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ICEBERG_LINEAGE__CONSUMER__PROFILE", "generic")
    name = "impala_v1_trino_puffin_stats"
    path = [str(FIXTURES / name)] + [f"--relocate={o}={n}" for o, n in fixture_relocation(name).items()]
    runner = CliRunner()
    got = runner.invoke(main, ["events", "--metadata", *path, "--dataset-events", "--profile", "datazone"])
    assert got.exit_code == 0, got.output
    lines = [json.loads(line) for line in got.stdout.splitlines()]
    assert [d.get("eventType") for d in lines] == ["START", "COMPLETE"]  # the current snapshot's run
    got = runner.invoke(main, ["events", "--metadata", *path, "--dataset-events"])
    assert "dataset" in json.loads(got.stdout.splitlines()[0])
    got = runner.invoke(main, ["events", "--metadata", *path, "--profile", "nope"])
    assert got.exit_code == 2


def test_datazone_every_event_of_a_3000_column_table_fits_300000_bytes_and_is_valid(tmp_path, caplog):
    event = snapshot_event(3000, doc="a column")
    assert size(event) > 700_000  # far over, as built
    capture = Capture()
    from iceberg_lineage.delivery.delivery import Delivery

    delivery = Delivery(OpenLineageClient(transport=capture),
                        Settings().updated({"consumer.profile": "datazone", "spool.path": str(tmp_path / "spool")}))
    with caplog.at_level(logging.WARNING, logger="iceberg_lineage.lineage.shaping"):
        assert delivery.emit(event).status == "delivered"
    [sent] = capture.sent
    text = json.dumps(sent, sort_keys=True)
    assert len(text.encode()) <= 300_000
    validate_event(text)
    facets = sent["outputs"][0]["facets"]
    assert len(facets["schema"]["fields"]) == 3000 and "description" in facets["schema"]["fields"][0]
    assert len(facets["icebergTableStatistics"]["columnsOmitted"]) == 3000
    assert "trimmed (columns, column_detail)" in caplog.text
    # the same event under the generic profile: only the 1 MB default, already applied when it was built
    assert shape(event, Settings()).events == (event,)


def test_dataplex_250_links_go_as_three_events_of_at_most_100_then_the_terminal_one():
    event = linked_run(250, 1)
    parts = [doc(e) for e in shape(event, DATAPLEX).events]
    assert [p["eventType"] for p in parts] == ["RUNNING", "RUNNING", "COMPLETE"]
    assert [links(p) for p in parts] == [100, 100, 50]
    assert {p["run"]["runId"] for p in parts} == {str(event.run.runId)}
    sent = {i["name"] for p in parts for i in p["inputs"]}
    assert sent == {i.name for i in event.inputs}  # cumulative: nothing lost
    for p in parts:
        validate_event(json.dumps(p))
    wide = [doc(e) for e in shape(linked_run(25, 10), DATAPLEX).events]  # 250 links the other way round
    assert [links(p) for p in wide] == [100, 100, 50]
    assert {(i["name"], o["name"]) for p in wide for i in p["inputs"] for o in p["outputs"]} == \
        {(f"warehouse/in/t{i:04d}", f"warehouse/out/t{o:04d}") for i in range(25) for o in range(10)}
    start = [doc(e)["eventType"] for e in shape(linked_run(250, 1, RunState.START), DATAPLEX).events]
    assert start == ["START", "RUNNING", "RUNNING"]


def test_dataplex_run_cap_1000_links_the_rest_is_left_out_with_a_note():
    got = shape(linked_run(1250, 1), DATAPLEX)
    parts = [doc(e) for e in got.events]
    assert sum(links(p) for p in parts) == 1000 and len(parts) == 10 and parts[-1]["eventType"] == "COMPLETE"
    [note] = got.notes
    assert "1250 input->output links, at most 1000 are sent; 250 left out" in note
    assert "warehouse/in/t1000" in note


def test_dataplex_names_over_4000_characters_are_left_out_with_a_note():
    event = linked_run(2, 1)
    event.inputs[1].name = "warehouse/" + "x" * 4_000
    got = shape(event, DATAPLEX)
    [sent] = [doc(e) for e in got.events]
    assert [i["name"] for i in sent["inputs"]] == ["warehouse/in/t0000"]
    fqn = len("s3://lake") + 1 + len(event.inputs[1].name)  # namespace/name
    assert f"input left out: its name is {fqn} characters, over 4000" in got.notes[0] and fqn == 4020


def test_events_max_links_applies_under_any_profile():
    parts = shape(linked_run(30, 1), Settings().updated({"events.max_links": 10})).events
    assert [links(doc(p)) for p in parts] == [10, 10, 10]


def test_atlan_job_namespace_is_the_connection_name():
    with pytest.raises(ConfigError, match="consumer.connection"):
        load_settings({"consumer.profile": "atlan"}, env={})
    settings = load_settings({"consumer.profile": "atlan", "consumer.connection": "default/iceberg/1764590400"},
                             env={})
    [sent] = [doc(e) for e in shape(snapshot_event(3), settings).events]
    assert sent["job"]["namespace"] == "default/iceberg/1764590400"
    assert sent["job"]["name"] == "mart.orders.spark"
    validate_event(json.dumps(sent))


@pytest.mark.parametrize("profile", ["datazone", "dataplex"])
def test_scanner_current_mode_sends_run_events_under_run_only_profiles(profile, sql_catalog, tmp_path):
    from iceberg_lineage.scan.driver import ScanOptions, scan
    from iceberg_lineage.state.store import StateStore
    from tests.support.scan import Recorder, spec_of, write_table

    table = write_table(sql_catalog, "db.a", 2)
    with StateStore(tmp_path / "state.db") as state:
        sink = Recorder()
        scan(ScanOptions(catalogs=(spec_of(sql_catalog),), mode="current"),
             Settings().updated({"consumer.profile": profile}),
             state, sink)
    start, event = sink.parsed
    assert (start["eventType"], start["run"]["runId"]) == ("START", event["run"]["runId"])
    validate_event(json.dumps(start))
    assert event["eventType"] == "COMPLETE" and "dataset" not in event
    assert event["outputs"][0]["facets"]["version"]["datasetVersion"] == str(table.current_snapshot().snapshot_id)
    validate_event(json.dumps(event))
    with StateStore(tmp_path / "history.db") as state:  # the current snapshot's own run, as --mode history sends it
        history = Recorder()
        scan(ScanOptions(catalogs=(spec_of(sql_catalog),)), Settings(), state, history)
    assert history.parsed[-1]["run"]["runId"] == event["run"]["runId"]
    assert history.parsed[-1]["job"] == event["job"]


def test_the_delivery_path_sends_a_split_run_in_order_and_reports_one_result(tmp_path):
    from iceberg_lineage.delivery.delivery import Delivery

    capture = Capture()
    delivery = Delivery(OpenLineageClient(transport=capture),
                        Settings().updated({"consumer.profile": "dataplex", "spool.path": str(tmp_path / "spool")}))
    [result] = delivery.emit_many([linked_run(250, 1)])
    assert result.status == "delivered"
    assert [(e["eventType"], links(e)) for e in capture.sent] == [("RUNNING", 100), ("RUNNING", 100), ("COMPLETE", 50)]
    assert delivery.stats.delivered == 3


def test_profile_flags_on_scan_and_run():
    from iceberg_lineage.cli import main

    runner = CliRunner()
    for command in ("scan", "run", "events"):
        got = runner.invoke(main, [command, "--help"])
        assert "--profile [generic|marquez|datahub|openmetadata|datazone|dataplex|atlan]" in got.output
    assert runner.invoke(main, ["scan", "--profile", "purview"]).exit_code == 2


@pytest.mark.parametrize("profile", ["datahub", "dataplex", "openmetadata", "datazone"])
def test_shaping_never_changes_the_event_it_is_given(profile):
    event = linked_run(150, 2) if profile == "dataplex" else snapshot_event(3000 if profile == "datazone" else 3)
    before = to_json(event)
    got = shape(event, Settings().updated({"consumer.profile": profile}))
    assert to_json(event) == before
    assert got.events and all(type(e).__name__ == "RunEvent" for e in got.events)  # objects, not JSON or dicts
    assert [to_json(e) for e in got.events] != [before]  # each of these profiles changes something
