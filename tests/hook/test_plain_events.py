"""The hook builds a commit's events in plain form and writes JSON Lines with its own serialiser: what it delivers is
byte for byte what it delivered when it built openlineage-python objects and openlineage-python's client prepared
and wrote them, START and COMPLETE, whatever the client's configuration adds (tags, environment variables)."""
from __future__ import annotations

import datetime as dt
import json

import pytest
from openlineage.client import OpenLineageClient
from openlineage.client.transport.file import FileConfig, FileTransport
from tests.support.hook import SCHEMA, rows

from iceberg_lineage.delivery.emitter import EMITTERS, Emitter
from iceberg_lineage.hook import reporter as hook
from iceberg_lineage.lineage import events as ev
from iceberg_lineage.lineage.captures import Commit

CAPTURED_AT = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)

CONFIGS = {
    "no configuration": None,
    "tags": {"tags": {"job": {"team": "lake"}, "run": {"env": "test", "iceberg-lineage.hook": "mine"}}},
    "environment": {"facets": {"environment_variables": ["LAKE_STAGE"]}},
}


def file_client(path, config):
    return OpenLineageClient(transport=FileTransport(FileConfig(log_file_path=str(path), append=True)), config=config)


@pytest.mark.parametrize("config", CONFIGS.values(), ids=CONFIGS.keys())
@pytest.mark.parametrize("starts", ["true", "false"])
@pytest.mark.parametrize("job_name", [None, "nightly"])
def test_delivered_json_is_what_objects_gave(sql_catalog, tmp_path, monkeypatch, config, starts, job_name):
    monkeypatch.setenv("LAKE_STAGE", "prod")
    monkeypatch.setenv("ICEBERG_LINEAGE__EVENTS__START_EVENTS", starts)
    monkeypatch.setattr(ev, "_now", lambda: CAPTURED_AT)  # the statistics' captureDate
    captured = []
    submit = Emitter.submit
    monkeypatch.setattr(Emitter, "submit", lambda self, item: (captured.append(item), submit(self, item)))
    hook.observe(sql_catalog, client=file_client(tmp_path / "hook.jsonl", config), job_name=job_name)
    table = sql_catalog.create_table("db.t", SCHEMA)
    table.append(rows(1, 2, 3))
    table.overwrite(rows(9), overwrite_filter="id == 1")  # two snapshots in one commit
    table.delete("id == 2")
    assert EMITTERS.flush_all(30)
    delivered = (tmp_path / "hook.jsonl").read_text().splitlines()

    # the same captures built as objects, prepared and written by openlineage-python's own client and transport
    commits = [item for item in captured if isinstance(item.record, Commit) and item.record.snapshot_ids]
    assert len(commits) == 3
    as_objects = ev.snapshot_run_event
    monkeypatch.setattr(ev, "snapshot_run_event", lambda *a, **k: as_objects(*a, **{**k, "plain": False}))
    reference = file_client(tmp_path / "objects.jsonl", config)
    for item in commits:
        for event in item.events():
            assert not isinstance(event, dict)
            reference.emit(event)
    expected = (tmp_path / "objects.jsonl").read_text().splitlines()

    per_commit = 2 if starts == "true" else 1
    assert len(expected) == 4 * per_commit  # the overwrite made two snapshots
    assert delivered[-len(expected):] == expected  # after the CREATE run, byte for byte
    kinds = [json.loads(line)["eventType"] for line in expected]
    assert kinds == (["START", "COMPLETE"] if starts == "true" else ["COMPLETE"]) * 4
    last = json.loads(expected[-1])
    assert last["job"]["name"] == job_name or (job_name is None and last["job"]["name"] == "db.t.pyiceberg")
    run_tags = {t["key"]: t["value"] for t in last["run"]["facets"]["tags"]["tags"]}
    assert run_tags["iceberg-lineage.hook"] == ("mine" if config == CONFIGS["tags"] else "observe")
    assert ("environmentVariables" in last["run"]["facets"]) == (config == CONFIGS["environment"])
