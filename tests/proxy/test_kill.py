"""Two worker processes, SIGKILLed (all at once) while a client commits and their events queue behind a slow
lineage server; a scanner catch-up run afterwards: no snapshot is lost, and a snapshot reported twice has the same
runId both times."""
from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections import defaultdict

import pyarrow as pa

from iceberg_lineage.lineage.events import snapshot_run_id
from tests.support.lineage_server import Answer, LineageServer
from tests.support.olschema import validate_event
from tests.support.proxy import own_properties, scanner_env, start_proxy, wait_until


def test_sigkill_mid_traffic_then_a_scanner_catch_up_loses_no_snapshot(seaweed, tmp_path):
    slow = LineageServer(script=lambda n, body: Answer(delay=0.3))
    proxy = start_proxy(seaweed.uri, tmp_path / "proxy", slow.url, "--workers", "2", *own_properties(seaweed))
    try:
        assert len(wait_until(lambda: len(proxy.processes()) == 3 and proxy.processes())) == 3  # parent + 2 workers
        catalog = seaweed.catalog("killed", uri=proxy.uri)
        catalog.create_namespace_if_not_exists("killed")
        table = catalog.create_table("killed.t", pa.schema([("id", pa.int64())]))
        table.append(pa.table({"id": [-1]}))
        # a scan before the traffic: its state holds the first snapshot (issue 32: only what the scanner itself
        # delivered or spooled counts, never what the bridge captured)
        assert catch_up(seaweed, tmp_path, slow, proxy.uri)["snapshots"]["emitted"] == 1
        stopped = threading.Event()

        def commit_until_it_fails() -> None:
            n = 0
            while not stopped.is_set():
                try:
                    table.append(pa.table({"id": [n]}))
                except Exception:  # noqa: BLE001 - the proxy was killed under it
                    return
                n += 1

        before = len(slow.requests)
        writer = threading.Thread(target=commit_until_it_fails)
        writer.start()
        wait_until(lambda: len(slow.requests) >= before + 3)
        proxy.kill()
        stopped.set()
        writer.join(30)
        assert wait_until(lambda: not proxy.processes(), timeout=10) is True
    finally:
        proxy.stop()
    metadata = seaweed.catalog("direct").load_table("killed.t").metadata
    assert len(metadata.snapshots) >= 3
    slow.script = lambda n, body: Answer()
    # the catch-up sends every snapshot but the one the first scan sent, those whose captures died with the bridge too
    assert catch_up(seaweed, tmp_path, slow, proxy.uri)["snapshots"]["emitted"] == len(metadata.snapshots) - 1
    slow.wait_idle()
    events = slow.accepted_events()
    for event in events:
        validate_event(event)
    expected = {str(snapshot_run_id(str(metadata.table_uuid), s.snapshot_id, s.timestamp_ms)): str(s.snapshot_id)
                for s in metadata.snapshots}
    versions: dict[str, set[str]] = defaultdict(set)
    for event in events:
        if event["job"]["name"] == "killed.t.commit" and event["eventType"] != "START":  # a START has no version
            versions[event["run"]["runId"]].add(event["outputs"][0]["facets"]["version"]["datasetVersion"])
    assert {run: {version} for run, version in expected.items()} == dict(versions)
    slow.stop()


def catch_up(seaweed, tmp_path, lineage: LineageServer, public_uri: str) -> dict:
    """A scan of the namespace on the upstream directly, with the same state each time; its JSON summary."""
    scan = subprocess.run(
        [sys.executable, "-m", "iceberg_lineage.cli", "scan", "--catalog", "sw", "--namespace", "killed",
         "--depth", "summary", "--no-progress", "--format", "json"],
        cwd=tmp_path, env=scanner_env(seaweed, tmp_path / "scanner", lineage.url, public_uri),
        capture_output=True, text=True, timeout=120)
    assert scan.returncode == 0, scan.stderr
    return json.loads(scan.stderr.strip().splitlines()[-1])
