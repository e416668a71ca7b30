"""A tag marks ownership, not delivery: the hook's snapshots that never got out are re-sent by the scanner, as the
very run the hook would have sent (issue 12, item 1)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from tests.support.delivery import FAST, http_client
from tests.support.hook import SCHEMA, outputs, rows, version
from tests.support.lineage_server import Answer, LineageServer, always_ok, free_port
from tests.support.scan import run_scan, spec_of

import iceberg_lineage
from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.delivery import Delivery
from iceberg_lineage.delivery.emitter import EMITTERS
from iceberg_lineage.hook import reporter as hook
from iceberg_lineage.lineage.events import snapshot_run_id
from iceberg_lineage.lineage.tags import OWNERSHIP_PROPERTY, RUN_ID_PROPERTY, Ownership, ownership
from iceberg_lineage.scan.driver import ScanOptions, scan
from iceberg_lineage.scan.sinks import delivery_sink
from iceberg_lineage.state.store import StateStore
from tests.support.userstate import USER_STATE

#: The default state.path (the per-user state folder of the test): the hook's ledger and the scanner's state.
SHARED_STATE = USER_STATE / "state.db"


def summaries(table) -> dict[int, dict[str, str]]:
    doc = json.loads(open(table.metadata_location.removeprefix("file://")).read())
    return {s["snapshot-id"]: {k: v for k, v in s["summary"].items() if k.startswith("iceberg-lineage.")}
            for s in doc["snapshots"]}


def expected_run_ids(table) -> set[str]:
    """The per-snapshot runIds of every snapshot of the table, as the scanner computes them."""
    uuid = str(table.metadata.table_uuid)
    return {str(snapshot_run_id(uuid, s.snapshot_id, s.timestamp_ms)) for s in table.metadata.snapshots}


def scan_into(server: LineageServer, catalog, state_path, tmp_path):
    """A real scan delivering to ``server`` with the given state."""
    settings = Settings().updated({"spool.path": str(tmp_path / "scan-spool")})
    delivery = Delivery(http_client(server.url, **FAST), settings)
    try:
        with StateStore(state_path) as state:
            return scan(ScanOptions(catalogs=(spec_of(catalog),)), settings, state, delivery_sink(delivery))
    finally:
        delivery.close()


def test_tags_carry_ownership_and_the_ledger_confirms_delivery(sql_catalog, collector, tmp_path):
    hook.observe(sql_catalog, client=collector.client)
    table = sql_catalog.create_table("db.t", SCHEMA)
    table.append(rows(1))
    with iceberg_lineage.run("nightly") as opened:
        table.append(rows(2))
    collector.events()
    own, in_run = [s.snapshot_id for s in table.metadata.snapshots]
    own_run = str(snapshot_run_id(str(table.metadata.table_uuid), own, table.metadata.snapshots[0].timestamp_ms))
    assert summaries(table) == {  # two keys: PyIceberg deep-copies every key of every snapshot ~19 times a commit
        own: {"iceberg-lineage.run-id": own_run, "iceberg-lineage.ownership":
              '{"owner":"snapshot","job-namespace":"iceberg-lineage","job":"db.t.pyiceberg"}'},
        in_run: {"iceberg-lineage.run-id": opened.run_id, "iceberg-lineage.ownership":
                 '{"owner":"context","job-namespace":"iceberg-lineage","job":"nightly"}'},
    }
    with StateStore(tmp_path / SHARED_STATE) as state:
        assert state.hook_delivered(str(table.metadata.table_uuid)) == {own, in_run}

    summary, sink = run_scan(sql_catalog, tmp_path / SHARED_STATE)
    assert sink.events == [] and (summary.snapshots_by_hooks, summary.snapshots_resent) == (2, 0)


def test_without_a_shared_ledger_the_scan_resends_the_owners_events(sql_catalog, sink, tmp_path, monkeypatch):
    monkeypatch.setenv("ICEBERG_LINEAGE__HOOK__LEDGER", "false")
    hook.observe(sql_catalog, client=sink.client)
    table = sql_catalog.create_table("db.t", SCHEMA)
    table.append(rows(1))
    with iceberg_lineage.run("nightly") as opened:
        table.append(rows(2))
    hooked = sink.events()
    own, in_run = [s.snapshot_id for s in table.metadata.snapshots]

    summary, scanned = run_scan(sql_catalog, tmp_path / "state.db")
    assert (summary.snapshots_emitted, summary.snapshots_by_hooks, summary.snapshots_resent) == (0, 0, 2)
    start, complete, other = scanned.parsed
    own_run = str(snapshot_run_id(str(table.metadata.table_uuid), own, table.metadata.snapshots[0].timestamp_ms))

    def key(e):
        return e["run"]["runId"], e["job"]["name"], e["eventType"], e["eventTime"]

    # the identical per-snapshot run: same runId, job and eventType as the hook's, and START time; the scanner does
    # not know how long the commit took: its COMPLETE is at the commit's start (an instant run)
    own_events = [e for e in hooked if e["run"]["runId"] == own_run]
    assert [key(e)[:3] for e in (start, complete)] == [key(e)[:3] for e in own_events]
    assert start["eventTime"] == complete["eventTime"] == own_events[0]["eventTime"] <= own_events[1]["eventTime"]
    assert [e["eventType"] for e in (start, complete)] == ["START", "COMPLETE"]
    assert version(outputs(complete)[0]) == own
    # inside a context: an OTHER event of the context's run, with the output at that version
    assert (other["eventType"], other["run"]["runId"], other["job"]["name"]) == ("OTHER", opened.run_id, "nightly")
    assert version(outputs(other)[0]) == in_run
    again, scanned = run_scan(sql_catalog, tmp_path / "state.db")
    assert scanned.events == [] and again.snapshots_resent == 0



LEGACY_TAG = {"iceberg-lineage.job": "nightly", "iceberg-lineage.job-namespace": "iceberg-lineage",
              "iceberg-lineage.owner": "context"}


def test_the_scanner_reads_the_legacy_four_key_tag_as_the_new_one(sql_catalog, tmp_path):
    """Tables tagged by earlier versions (four keys) keep their owners: the scan re-sends the same events for a
    legacy tag and for the two-key tag of the same ownership, and reads neither as a pre-ledger tag."""
    run_id = "0190f3a2-0000-7000-8000-000000000001"
    owner = Ownership(run_id, "iceberg-lineage", "nightly", "context")
    legacy = sql_catalog.create_table("db.legacy", SCHEMA)
    legacy.append(rows(1), snapshot_properties={RUN_ID_PROPERTY: run_id, **LEGACY_TAG})
    current = sql_catalog.create_table("db.current", SCHEMA)
    current.append(rows(1), snapshot_properties=owner.properties())
    assert [ownership(t.current_snapshot().summary) for t in (legacy, current)] == [owner, owner]

    summary, scanned = run_scan(sql_catalog, tmp_path / "state.db")
    assert (summary.snapshots_emitted, summary.snapshots_by_hooks, summary.snapshots_resent) == (0, 0, 2)
    assert sorted((e["eventType"], e["run"]["runId"], e["job"]["name"], e["outputs"][0]["name"].rsplit("/")[-1])
                  for e in scanned.parsed) == [("OTHER", run_id, "nightly", "current"),
                                                ("OTHER", run_id, "nightly", "legacy")]


def test_a_damaged_tag_counts_as_written_before_the_ledger():
    """A tag whose ownership is not a JSON object of strings is read like an incomplete legacy tag: no owner."""
    for text in ("", "not json", "[1, 2]", '{"owner": "snapshot", "job": 3, "job-namespace": "n"}',
                 '{"owner": "nobody", "job": "j", "job-namespace": "n"}', '{"owner": "snapshot", "job": "j"}'):
        assert ownership({RUN_ID_PROPERTY: "r", OWNERSHIP_PROPERTY: text}) is None, text
    assert ownership({RUN_ID_PROPERTY: "r"}) is None
    assert ownership({OWNERSHIP_PROPERTY: '{"owner":"snapshot","job-namespace":"n","job":"j"}'}) is None
    assert ownership({RUN_ID_PROPERTY: "r", OWNERSHIP_PROPERTY: '{"owner":"snapshot","job-namespace":"n",'
                      '"job":"j"}'}) == Ownership("r", "n", "j", "snapshot")


WRITER = """
import os, sys
import pyarrow as pa
from openlineage.client import OpenLineageClient
from openlineage.client.transport.http import HttpConfig, HttpTransport
from pyiceberg.catalog.sql import SqlCatalog
from iceberg_lineage.hook import observe

catalog = SqlCatalog("test", uri=os.environ["LAKE_URI"], warehouse=os.environ["LAKE_WAREHOUSE"])
client = OpenLineageClient(transport=HttpTransport(HttpConfig.from_dict({"url": os.environ["SERVER"], "timeout": 30})))
table = observe(catalog, client=client).load_table("db.t")
for i in range(int(sys.argv[1])):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])
    table.append(pa.table({"id": [i], "v": [str(i)]}, schema=schema))
print("committed", flush=True)
sys.stdin.read()  # until killed
"""


def test_a_writer_killed_while_the_server_is_slow_loses_nothing(sql_catalog, tmp_path):
    commits = 6
    table = sql_catalog.create_table("db.t", SCHEMA)  # created unobserved: every runId below is a snapshot's
    (tmp_path / "writer.py").write_text(WRITER)
    state_path = tmp_path / "shared" / "state.db"
    with LineageServer(script=lambda n, body: Answer(delay=0.3)) as server:
        env = {**os.environ, "SERVER": server.url, "LAKE_URI": sql_catalog.properties["uri"],
               "LAKE_WAREHOUSE": sql_catalog.properties["warehouse"], "ICEBERG_LINEAGE__STATE__PATH": str(state_path)}
        writer = subprocess.Popen([sys.executable, "writer.py", str(commits)], cwd=tmp_path, env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert writer.stdout.readline() == "committed\n"
            deadline = time.monotonic() + 60
            while len(server.accepted) < 5 and time.monotonic() < deadline:  # two snapshots' START and COMPLETE
                time.sleep(0.02)
        finally:
            writer.send_signal(signal.SIGKILL)
            writer.wait()
        server.wait_idle()
        before = {e["run"]["runId"] for e in server.accepted_events()}
        table = table.refresh()
        identity = str(table.metadata.table_uuid)
        with StateStore(state_path) as state:
            confirmed = len(state.hook_delivered(identity))
        assert len(table.metadata.snapshots) == commits
        assert 2 <= confirmed < commits and len(before) < commits  # fewer delivered than committed

        server.script = always_ok
        summary = scan_into(server, sql_catalog, state_path, tmp_path)
        assert (summary.snapshots_by_hooks, summary.snapshots_resent, summary.exit_code) == (
            confirmed, commits - confirmed, 0)
        delivered = server.accepted_events()
    expected = expected_run_ids(table)
    assert {e["run"]["runId"] for e in delivered} == expected  # every snapshot's, and none it should not have
    assert {(e["job"]["name"], e["eventType"]) for e in delivered} == {
        ("db.t.pyiceberg", "START"), ("db.t.pyiceberg", "COMPLETE")}
    complete = {e["run"]["runId"] for e in delivered if e["eventType"] == "COMPLETE"}
    assert complete == expected


def test_a_spool_that_cannot_be_written_while_the_server_is_down_loses_nothing(sql_catalog, tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("not a directory")
    monkeypatch.setenv("ICEBERG_LINEAGE__SPOOL__PATH", str(tmp_path / "a-file" / "spool"))
    port = free_port()
    hook.observe(sql_catalog, client=http_client(f"http://127.0.0.1:{port}", timeout=1, **FAST))
    table = sql_catalog.create_table("db.t", SCHEMA)
    for i in range(3):
        table.append(rows(i))
    assert EMITTERS.flush_all(30)
    identity = str(table.metadata.table_uuid)
    with StateStore(tmp_path / SHARED_STATE) as state:
        assert state.hook_delivered(identity) == frozenset()  # neither delivered nor spooled: nothing confirmed
    assert not (tmp_path / USER_STATE / "spool").exists()

    with LineageServer(port=port) as server:
        summary = scan_into(server, sql_catalog, tmp_path / SHARED_STATE, tmp_path)
        delivered = server.accepted_events()
    assert (summary.snapshots_by_hooks, summary.snapshots_resent, summary.exit_code) == (0, 3, 0)
    assert [(e["eventType"], e["run"]["runId"]) for e in delivered if e["eventType"] == "COMPLETE"] == [
        ("COMPLETE", str(snapshot_run_id(identity, s.snapshot_id, s.timestamp_ms))) for s in table.metadata.snapshots]
    assert sorted(version(outputs(e)[0]) for e in delivered if e["eventType"] == "COMPLETE") == sorted(
        s.snapshot_id for s in table.metadata.snapshots)
