"""A file transport is written through :class:`JsonLinesTransport`: the same lines as openlineage-python's own
``FileTransport`` for every kind of event, one file per event when not appending, its errors when it cannot write."""
from __future__ import annotations

import pytest
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import DatasetEvent, StaticDataset
from openlineage.client.transport.file import FileConfig, FileTransport
from tests.consumers.tables import linked_run, snapshot_event
from tests.support.delivery import run_pairs

from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.delivery import Delivery
from iceberg_lineage.delivery.jsonlines import JsonLinesTransport
from iceberg_lineage.delivery.pipeline import configured, configured_dict
from iceberg_lineage.delivery.transports import StoredEvent, transports_of
from iceberg_lineage.lineage.facets import PRODUCER


def events():
    dataset = DatasetEvent(eventTime="2026-12-01T12:00:00.000Z", producer=PRODUCER,
                           dataset=StaticDataset(namespace="s3://lake", name="t", facets={}))
    stored = StoredEvent({"eventType": "COMPLETE", "run": {"runId": "r", "facets": {}}, "nothing": None})
    return [*run_pairs(1), snapshot_event(3), linked_run(2, 2), dataset, stored]


def test_lines_are_openlineage_file_transport_lines(tmp_path):
    ours = configured(FileTransport(FileConfig(log_file_path=str(tmp_path / "ours.jsonl"), append=True)))
    assert any(isinstance(t, JsonLinesTransport) for t in transports_of(ours))
    theirs = FileTransport(FileConfig(log_file_path=str(tmp_path / "theirs.jsonl"), append=True))
    for event in events():
        ours.emit(event)
        theirs.emit(event)
    lines = (tmp_path / "ours.jsonl").read_text().splitlines()
    assert lines == (tmp_path / "theirs.jsonl").read_text().splitlines() and len(lines) == 6
    assert '"nothing"' not in lines[-1]  # nulls dropped, as Serde does


def test_a_file_in_a_composite_is_written_the_same_way():
    child = configured_dict({"type": "composite", "transports": [{"type": "file", "log_file_path": "x"}]})
    assert child["transports"][0]["transport"]["type"].endswith("JsonLinesTransport")  # tapped: a fan-out target


def test_one_file_per_event_and_debug_indentation_are_kept(tmp_path):
    per_event = configured(FileTransport(FileConfig(log_file_path=str(tmp_path / "ev"))))
    debug = configured(FileTransport(FileConfig(log_file_path=str(tmp_path / "dbg"), append=True, debug_mode=True)))
    for event in run_pairs(1):
        per_event.emit(event)
        debug.emit(event)
    assert len(list(tmp_path.glob("ev-*.json"))) == 2
    assert (tmp_path / "dbg").read_text().startswith('{\n  "eventTime"')


def test_an_unwritable_file_fails_as_openlineage_says_and_is_spooled(tmp_path):
    (tmp_path / "dir").mkdir()  # a directory: cannot be opened as a file
    config = FileConfig(log_file_path=str(tmp_path / "dir"), append=True)
    event = run_pairs(1)[0]
    with pytest.raises(RuntimeError) as theirs:
        FileTransport(config).emit(event)
    with pytest.raises(RuntimeError) as ours:
        configured(FileTransport(config), tap=False).emit(event)
    assert str(ours.value) == str(theirs.value) == f"Failed to write to log file `{tmp_path / 'dir'}`: " + str(
        theirs.value.__cause__)
    assert type(ours.value.__cause__) is type(theirs.value.__cause__) is IsADirectoryError
    delivery = Delivery(OpenLineageClient(transport=FileTransport(config)),
                        Settings().updated({"spool.path": str(tmp_path / "spool")}))
    assert delivery.emit(event).status == "spooled"
