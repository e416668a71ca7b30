"""What the proxy reports of requests whose answers carry no metadata, and of snapshots the hook owns.

- ``transactions/commit`` (204): the snapshot from the request applied to the metadata last relayed for the table,
  or to one load with the proxy's own credentials, gives the very event a table commit's answer gives.
- A snapshot committed under the hook (tagged) through the proxy: recorded as the hook's, nothing sent.
"""
from __future__ import annotations

import json

import pyarrow as pa
from openlineage.client import OpenLineageClient
from openlineage.client.transport.file import FileConfig, FileTransport

import iceberg_lineage
from iceberg_lineage.config import Settings
from iceberg_lineage.lineage.events import snapshot_run_id
from iceberg_lineage.lineage.serde import to_json
from iceberg_lineage.lineage.tags import RUN_ID_PROPERTY
from iceberg_lineage.proxy.capture import Capture
from iceberg_lineage.proxy.interpreter import Interpreter
from iceberg_lineage.proxy.routes import Route
from iceberg_lineage.proxy.tables import LoadResult
from iceberg_lineage.state.proxy_snapshots import ProxiedSnapshot, ProxySnapshots
from tests.proxy.reports import events_of, interpreter
from tests.support.olschema import validate_event
from tests.support.proxy import wait_until

ROWS = pa.table({"id": pa.array([1, 2], pa.int64())})
PUBLIC = "http://proxy.example:8181"


def raw(table) -> LoadResult:
    return LoadResult(table.metadata_location,
                      json.loads(table.metadata.model_dump_json(by_alias=True, exclude_none=True)))


def reporter(seaweed, depth: str = "summary") -> Interpreter:
    own = {"credential": seaweed.credential, "warehouse": "s3://warehouse/", **seaweed.s3_properties()}
    return interpreter(Settings(), upstream=seaweed.uri, public_uri=PUBLIC, io_properties=own, depth=depth)


def comparable(event) -> dict:
    doc = json.loads(to_json(event))
    doc["outputs"][0]["facets"]["dataQualityMetrics"].pop("captureDate")
    return doc


def test_a_transaction_commit_reports_what_a_table_commit_reports(seaweed):
    direct = seaweed.catalog("tx")
    direct.create_namespace_if_not_exists("tx")
    direct.create_table("tx.t", ROWS.schema).append(ROWS)
    before = raw(direct.load_table("tx.t"))
    direct.load_table("tx.t").append(ROWS)
    after = raw(direct.load_table("tx.t"))
    (new,) = [s for s in after.metadata["snapshots"] if s not in before.metadata["snapshots"]]
    updates = [{"action": "add-snapshot", "snapshot": new},
               {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": new["snapshot-id"]}]
    change = {"requirements": [{"type": "assert-ref-snapshot-id", "ref": "main",
                                "snapshot-id": before.metadata["current-snapshot-id"]}], "updates": updates}
    commit = reporter(seaweed)
    by_commit = events_of(commit.build(Capture(
        Route("commit", "warehouse", ("tx",), "t"), 200, request=json.dumps(change).encode(),
        response=json.dumps({"metadata-location": after.metadata_location, "metadata": after.metadata}).encode())))
    transaction = json.dumps({"table-changes": [{"identifier": {"namespace": ["tx"], "name": "t"}, **change}]}).encode()
    warm, cold = reporter(seaweed), reporter(seaweed)
    warm.tables.put("warehouse", ("tx", "t"), before)
    by_warm = events_of(warm.build(Capture(Route("transaction", "warehouse"), 204, request=transaction)))
    by_cold = events_of(cold.build(Capture(Route("transaction", "warehouse"), 204, request=transaction)))
    run_id = str(snapshot_run_id(after.metadata["table-uuid"], new["snapshot-id"], new["timestamp-ms"]))
    assert [e.run.runId for e in by_commit + by_warm + by_cold] == [run_id] * 6
    assert [e.eventType.value for e in by_commit + by_warm + by_cold] == ["START", "COMPLETE"] * 3
    assert to_json(by_commit[0]) == to_json(by_warm[0]) == to_json(by_cold[0])  # the START: identical
    by_commit, by_warm, by_cold = by_commit[1:], by_warm[1:], by_cold[1:]
    validate_event(to_json(by_commit[0]))
    assert comparable(by_warm[0]) == comparable(by_commit[0]) == comparable(by_cold[0])
    assert by_commit[0].outputs[0].facets["symlinks"].identifiers[0].namespace == PUBLIC


def test_hook_tagged_snapshots_are_recorded_as_the_hooks_and_not_sent(stack, tmp_path):
    client = OpenLineageClient(transport=FileTransport(FileConfig(log_file_path=str(tmp_path / "hook.jsonl"))))
    catalog = iceberg_lineage.observe(stack.seaweed.catalog("hooked", uri=stack.proxy.uri), client=client)
    catalog.create_namespace_if_not_exists("hooked")
    table = catalog.create_table("hooked.t", ROWS.schema)
    table.append(ROWS)
    snapshot = stack.seaweed.catalog("direct").load_table("hooked.t").metadata.snapshots[0]
    run_id = snapshot.summary[RUN_ID_PROPERTY]
    identity = str(stack.seaweed.catalog("direct").load_table("hooked.t").metadata.table_uuid)
    state = ProxySnapshots(stack.proxy.state_path)
    try:
        rows = wait_until(lambda: state.snapshots(identity))
    finally:
        state.close()
    assert rows == [ProxiedSnapshot(identity, snapshot.snapshot_id, "hook", run_id, "hook")]
    assert run_id == str(snapshot_run_id(identity, snapshot.snapshot_id, snapshot.timestamp_ms))
    stack.lineage.wait_idle()
    sent = [e for e in stack.lineage.accepted_events() if e["job"]["name"].startswith("hooked.t.")]
    # the CREATE run (START, COMPLETE); the snapshot is the hook's
    assert [e["job"]["name"] for e in sent] == ["hooked.t.catalog"] * 2


def test_deeper_depths_read_storage_with_the_proxys_own_properties_only(seaweed):
    direct = seaweed.catalog("deep")
    direct.create_namespace_if_not_exists("deep")
    direct.create_table("deep.t", ROWS.schema)
    direct.load_table("deep.t").append(ROWS)
    after = raw(direct.load_table("deep.t"))
    (new,) = after.metadata["snapshots"]
    change = {"requirements": [], "updates": [{"action": "add-snapshot", "snapshot": new}]}
    # the answer vends storage credentials that do not work: the proxy must not use them
    answer = {"metadata-location": after.metadata_location, "metadata": after.metadata,
              "config": {"s3.access-key-id": "vended", "s3.secret-access-key": "vended-wrong-secret"}}
    deep = reporter(seaweed, depth="entries")
    (start, event) = events_of(deep.build(Capture(Route("commit", "warehouse", ("deep",), "t"), 200,
                                                  request=json.dumps(change).encode(),
                                                  response=json.dumps(answer).encode())))
    assert start.eventType.value == "START"
    validate_event(to_json(event))
    facets = json.loads(to_json(event))["outputs"][0]["facets"]
    assert facets["icebergTableStatistics"]["depth"] == "entries"
    assert facets["dataQualityMetrics"]["columnMetrics"]["id"] == {"count": 2, "nullCount": 0, "min": 1, "max": 2,
                                                                   "quantiles": {}}
