"""Where each table's events went, as the state records it (schema version 4, issue 28): described without a secret,
the same for the same configuration, migrated into older state files, and forgotten with the watermarks when the
user accepts a new destination."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from openlineage.client import OpenLineageClient
from openlineage.client.transport.file import FileConfig, FileTransport
from tests.state.test_ledger import old_state

from iceberg_lineage.scan.destination import destination_of
from iceberg_lineage.state.store import EmittedSnapshot, StateStore, TrackedTable

SECRETS = ("s3cr3t-pass", "tok-123456", "hdr-987654")


def transport_of(config: dict):
    return OpenLineageClient(config={"transport": config}).transport


def test_an_http_destination_keeps_no_secret():
    transport = transport_of({
        "type": "http", "url": f"https://lineage:{SECRETS[0]}@ol.example.com:8443/base/?api_key={SECRETS[1]}",
        "endpoint": "v1/lineage", "custom_headers": {"X-Token": SECRETS[2]},
        "auth": {"type": "api_key", "apiKey": SECRETS[1]}})
    described = destination_of(transport)
    assert described == "http https://ol.example.com:8443/base/v1/lineage"
    assert not any(secret in described for secret in SECRETS)


def test_a_file_destination_is_absolute(tmp_path):
    transport = FileTransport(FileConfig(log_file_path="out/events.jsonl", append=True))
    assert destination_of(transport) == f"file {tmp_path / 'out' / 'events.jsonl'}"  # the test runs in tmp_path


def test_a_composite_reads_the_same_in_any_order(tmp_path):
    targets = {"a": {"type": "http", "url": "http://a.example"},
               "b": {"type": "file", "log_file_path": "b.jsonl", "append": True}}
    one = transport_of({"type": "composite", "transports": targets})
    other = transport_of({"type": "composite", "transports": dict(reversed(targets.items()))})
    expected = f"composite[file {tmp_path / 'b.jsonl'}, http http://a.example/api/v1/lineage]"
    assert destination_of(one) == destination_of(other) == expected


def test_an_old_state_file_gains_the_destination_column(tmp_path):
    path = tmp_path / "state.db"
    old_state(path)
    with StateStore(path, readonly=True) as state:  # a dry run reads it as unknown, and changes nothing
        assert [(t.identity, went) for t, went in state.destinations()] == [("uuid-1", None)]
    with StateStore(path) as state:
        assert [(t.identity, went) for t, went in state.destinations()] == [("uuid-1", None)]
        state.send_to("http http://a/api/v1/lineage", ["uuid-1"])
    columns = [row[1] for row in sqlite3.connect(path).execute("PRAGMA table_info(tables)")]
    # version 5 added two, version 6 one
    assert columns[-4:] == ["destination", "history_complete_at", "current_complete_at", "etag"]
    assert sqlite3.connect(path).execute("SELECT destination FROM tables").fetchall() == [
        ("http http://a/api/v1/lineage",)]


def test_a_new_destination_forgets_what_went_to_the_old_one(tmp_path):
    def table(identity: str) -> TrackedTable:
        return TrackedTable(identity, "lake", ("db", identity), f"/w/{identity}", None, current_snapshot_id=7)

    with StateStore(Path(tmp_path) / "state.db") as state:
        state.send_to("http http://old/api/v1/lineage", [])
        for identity in ("moved", "kept"):
            state.record(table(identity), (EmittedSnapshot(7, 1, 1000, "scan", "r"),))
            state.record_delivered(identity, {8: "h"})
        state.send_to("file /new/events.jsonl", ["moved", "kept"], reset=["moved"])

        assert dict((t.identity, went) for t, went in state.destinations()) == {
            "moved": "file /new/events.jsonl", "kept": "file /new/events.jsonl"}
        moved, kept = state.watermark("moved"), state.watermark("kept")
        assert (moved.emitted, moved.hook_delivered, moved.current_snapshot_id) == (frozenset(), frozenset(), None)
        assert (kept.emitted, kept.hook_delivered, kept.current_snapshot_id) == ({7}, {8}, 7)
        state.record(table("new"))  # a table recorded later takes this run's destination
        assert dict((t.identity, went) for t, went in state.destinations())["new"] == "file /new/events.jsonl"
