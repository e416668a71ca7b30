"""PyIceberg's RestCatalog through the proxy, against SeaweedFS: every committed snapshot gets exactly one
schema-valid COMPLETE with the scanner's runId and job name, every catalog operation its lifecycle event, every
answer is the upstream's, and a scanner run over the catalog afterwards sends no other runId."""
from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import time

import pyarrow as pa
import pytest
from pyiceberg.expressions import EqualTo
from pyiceberg.types import StringType

from iceberg_lineage.lineage.events import lifecycle_run_id, snapshot_run_id
from iceberg_lineage.lineage.facets import ms_to_datetime
from tests.support.olschema import validate_event
from tests.support.proxy import RecordedAnswer, mark_client, scanner_env

ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": pa.array(["a", "b", "c"])})


def wait_for(lineage, count: int, timeout: float = 30.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while len(lineage.accepted) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    lineage.wait_idle()
    return lineage.accepted_events()


def lifecycle_events(events: list[dict], kind: str) -> list[dict]:
    return [e for e in events
            if e["outputs"] and e["outputs"][0]["facets"].get("lifecycleStateChange", {}).get("lifecycleStateChange") == kind
            and e["job"]["name"].endswith(".catalog")]


@pytest.fixture(scope="module")
def story(stack):
    """One table through a whole life (create, append, overwrite, delete, schema change, rename), another created
    and dropped; the answers the client got and the metadata of every table along the way."""
    seen: list[RecordedAnswer] = []
    catalog = stack.seaweed.catalog("through_proxy", uri=stack.proxy.uri)
    mark_client(catalog, seen)
    catalog.create_namespace_if_not_exists("bridge")
    table = catalog.create_table("bridge.life", ROWS.schema)
    table.append(ROWS)
    table.overwrite(pa.table({"id": pa.array([9], pa.int64()), "v": pa.array(["z"])}))
    table.delete(EqualTo("id", 9))
    table.append(ROWS)
    with table.update_schema() as update:
        update.add_column("note", StringType())
    direct = stack.seaweed.catalog("direct")
    before_rename = direct.load_table("bridge.life").metadata
    catalog.rename_table("bridge.life", "bridge.life2")
    short = catalog.create_table("bridge.short", ROWS.schema)
    short.append(ROWS)
    short_md = direct.load_table("bridge.short")
    catalog.create_namespace_if_not_exists("bridge_reg")
    catalog.register_table("bridge_reg.copy", short_md.metadata_location)
    staged = catalog.create_table_transaction("bridge_reg.staged", ROWS.schema)  # stage-create, then assert-create
    staged.append(ROWS)
    staged.commit_transaction()
    staged_md = direct.load_table("bridge_reg.staged").metadata
    catalog.drop_table("bridge.short")
    snapshots = len(before_rename.snapshots) + len(short_md.metadata.snapshots) + len(staged_md.snapshots)
    # each snapshot's START and COMPLETE, 4 CREATE (a register, a staged create), 1 ALTER, 1 RENAME, 1 DROP, and the
    # checks run of the added column: each of these a START and a COMPLETE too
    events = wait_for(stack.lineage, 2 * snapshots + 2 * 8)
    return catalog, seen, before_rename, short_md, events, staged_md


def test_every_snapshot_has_exactly_one_complete_with_the_scanners_run_id(story):
    _, _, life, short, events, staged = story
    for event in events:
        validate_event(event)
    commits = [e for e in events if e["job"]["name"].rsplit(".", 1)[-1] == "commit"]
    complete = [e for e in commits if e["eventType"] != "START"]
    starts = {e["run"]["runId"]: e for e in commits if e["eventType"] == "START"}
    assert sorted(starts) == sorted(e["run"]["runId"] for e in complete)  # each run's START, once
    expected = {str(snapshot_run_id(str(md.table_uuid), s.snapshot_id, s.timestamp_ms)): (name, s.snapshot_id)
                for md, name in ((life, "bridge.life.commit"), (short.metadata, "bridge.short.commit"),
                                 (staged, "bridge_reg.staged.commit"))
                for s in md.snapshots}
    # life: append, overwrite (delete + append), delete, append; short: append; staged: append
    assert len(expected) == 7
    assert sorted(e["run"]["runId"] for e in complete) == sorted(expected)
    for event in complete:
        name, snapshot_id = expected[event["run"]["runId"]]
        assert event["eventType"] == "COMPLETE"
        assert event["job"] == {**event["job"], "namespace": "iceberg-lineage", "name": name}
        assert event["outputs"][0]["facets"]["version"]["datasetVersion"] == str(snapshot_id)


def test_lifecycle_events_use_the_scanners_run_ids(story, stack):
    _, _, life, short, events, _ = story
    creates, alters = lifecycle_events(events, "CREATE"), lifecycle_events(events, "ALTER")
    lifecycle = [e for e in events if e["job"]["name"].endswith(".catalog")]
    assert sorted((e["run"]["runId"], e["eventType"]) for e in lifecycle) == sorted(
        (e["run"]["runId"], kind) for e in lifecycle if e["eventType"] == "COMPLETE" for kind in ("START", "COMPLETE"))
    renames, drops = lifecycle_events(events, "RENAME"), lifecycle_events(events, "DROP")
    assert sorted(e["job"]["name"] for e in creates) == ["bridge.life.catalog", "bridge.short.catalog",
                                                         "bridge_reg.copy.catalog", "bridge_reg.staged.catalog"]
    assert len({e["run"]["runId"] for e in creates}) == 4
    assert [e["job"]["name"] for e in alters] == ["bridge.life.catalog"]
    added = alters[0]["outputs"][0]["facets"]["icebergTableStatistics"]["schemaChange"]
    assert [f["name"] for f in added["added"]] == ["note"]
    assert [e["job"]["name"] for e in renames] == ["bridge.life2.catalog"]
    rename = renames[0]["outputs"][0]
    assert rename["facets"]["symlinks"]["identifiers"][0] == {
        "namespace": stack.proxy.uri, "name": "bridge.life2", "type": "TABLE"}
    previous = rename["facets"]["lifecycleStateChange"]["previousIdentifier"]
    assert previous["name"] == rename["name"]  # the location did not move
    assert renames[0]["run"]["runId"] == str(lifecycle_run_id(
        str(life.table_uuid), "RENAME", direct_location(stack, "bridge.life2"),
        ms_to_datetime(life.last_updated_ms)))
    assert [e["job"]["name"] for e in drops] == ["bridge.short.catalog"]
    assert drops[0]["run"]["runId"] == str(lifecycle_run_id(
        str(short.metadata.table_uuid), "DROP", short.metadata_location, ms_to_datetime(short.metadata.last_updated_ms)))


def test_a_schema_change_through_the_proxy_is_a_checks_run_and_an_alert(story, stack):
    """The default ``schema`` rule warns on an added column: one ``<ns>.<table>.checks`` run carrying the failed
    assertion (the table as its input, never an output), and one alert line in the proxy's log."""
    _, _, life, _, events, _ = story
    start, check = [e for e in events if e["job"]["name"] == "bridge.life.checks"]
    assert (start["eventType"], start["run"]["runId"]) == ("START", check["run"]["runId"])
    validate_event(start)
    validate_event(check)
    assert check["eventType"] == "COMPLETE" and check["outputs"] == []
    [table] = check["inputs"]
    [assertion] = table["inputFacets"]["dataQualityAssertions"]["assertions"]
    assert (assertion["assertion"], assertion["column"], assertion["success"], assertion["severity"]) == (
        "schema", "note", False, "warn")
    alerts = [line for line in stack.proxy.output().splitlines() if "schema alert: bridge.life:" in line]
    assert len(alerts) == 1 and "field note (string) added" in alerts[0]


def direct_location(stack, name: str) -> str:
    return stack.seaweed.catalog("direct").load_table(name).metadata_location


def test_every_answer_is_the_upstreams(story, stack):
    _, seen, *_ = story
    got = [x for x in seen if not x.path.startswith("/v1/config")]
    upstream = [x for x in stack.recorder.exchanges if not x.path.startswith("/v1/config")]
    assert len(got) >= 12
    assert [(x.method, x.path, x.status) for x in got] == [(x.method, x.path, x.status) for x in upstream]
    assert [x.body for x in got] == [x.body for x in upstream]


def test_a_scanner_afterwards_sends_no_other_run_id(story, stack, tmp_path):
    events = story[4]
    sw = stack.seaweed
    env = {**scanner_env(sw, tmp_path, None, stack.proxy.uri), "OPENLINEAGE_DISABLED": "true"}
    scan = subprocess.run([sys.executable, "-m", "iceberg_lineage.cli", "scan", "--catalog", "sw", "--namespace",
                           "bridge", "--dry-run", "--depth", "summary", "--no-progress"],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert scan.returncode == 0, scan.stderr
    printed = [json.loads(line) for line in scan.stdout.splitlines() if line.strip()]
    scanned = [e for e in printed if e["job"]["name"] != "iceberg-lineage.scan"]  # not the scan's own run
    assert len(scanned) == 2 * 5 and len(printed) == 2 * 5 + 2  # stack.life2's snapshots, START and COMPLETE each
    ours = {e["run"]["runId"]: e for e in events}
    for event in (e for e in scanned if e["eventType"] != "START"):  # a START names no output
        mine = ours[event["run"]["runId"]]
        assert event["outputs"][0]["namespace"] == mine["outputs"][0]["namespace"]
        assert event["outputs"][0]["name"] == mine["outputs"][0]["name"]
        assert event["outputs"][0]["facets"]["symlinks"] == {
            **mine["outputs"][0]["facets"]["symlinks"],
            "identifiers": [{"namespace": stack.proxy.uri, "name": "bridge.life2", "type": "TABLE"}]}


def event_ms(text: str) -> int:
    return round(dt.datetime.fromisoformat(text).timestamp() * 1000)


def test_a_commit_run_lasts_as_long_as_the_catalog_took(story):
    """A commit's run starts at its snapshot's time (the client stamps the snapshot as its commit begins) and ends
    once the catalog answered, as the proxy measured it: before any later commit began. A commit here adds at most
    two snapshots (the overwrite: a delete and an append), so the snapshot two places on is a later commit's."""
    _, _, life, _, events, _ = story
    by_run: dict[str, dict[str, str]] = {}
    for event in events:
        if event["job"]["name"] == "bridge.life.commit":
            by_run.setdefault(event["run"]["runId"], {})[event["eventType"]] = event["eventTime"]
    snapshots = sorted(life.snapshots, key=lambda s: s.timestamp_ms)
    durations = []
    for i, snapshot in enumerate(snapshots):
        times = by_run[str(snapshot_run_id(str(life.table_uuid), snapshot.snapshot_id, snapshot.timestamp_ms))]
        start, end = (event_ms(times[kind]) for kind in ("START", "COMPLETE"))
        assert start == snapshot.timestamp_ms <= end
        if i + 2 < len(snapshots):
            assert end <= snapshots[i + 2].timestamp_ms
        durations.append(end - start)
    assert len(durations) == 5 and sum(durations) > 0
