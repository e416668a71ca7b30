"""The bridge the live engines (Flink, Trino: issue 30) write through, one per test session: the session's SeaweedFS
<- a recorder (it keeps every report posted to ``/metrics``) <- ``iceberg-lineage proxy`` <- the engines; the proxy's
events go to a local lineage server.

Flink's jobs and Trino's server take minutes, so they start as the session starts (:func:`_live_engines_early`)
when a collected test needs them, and run while other tests do.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.engines import missing
from tests.support.iceberg_java import run_cli
from tests.support.olschema import validate_event
from tests.support.proxy import ProxyStack, proxy_stack, scanner_env, wait_until

#: The fixtures that start an engine, by the component they need.
ENGINE_RUNS = {"flink": "flink_run", "trino": "trino_run"}


class LiveBridge(ProxyStack):

    def completes(self, run_ids: set[str]) -> dict[str, dict]:
        """The bridge's COMPLETE of each run (once all came), each checked against the schemas."""
        wait_until(lambda: run_ids <= {e["run"]["runId"] for e in self.lineage.accepted_events()
                                       if e["eventType"] == "COMPLETE"}, 120)
        self.lineage.wait_idle()
        found = {}
        for event in self.lineage.accepted_events():
            validate_event(event)
            if event["eventType"] == "COMPLETE" and event["run"]["runId"] in run_ids:
                found[event["run"]["runId"]] = event
        return found

    def reports(self, report_type: str, namespace: str) -> list[dict]:
        """The reports of one type (``scan-report``, ``commit-report``) posted through the bridge on the tables of a
        namespace (engines name them with or without their catalog: ``ice.ns.t``, ``ns.t``)."""
        return [r for r in map(json.loads, self.recorder.reports) if r.get("report-type") == report_type
                and namespace in r["table-name"].split(".")]

    def scanned(self, identifier: str, home: Path) -> list[dict]:
        """The scanner's COMPLETEs of every snapshot (``events --all-snapshots``), on SeaweedFS directly and naming
        the table as the bridge does (``naming.rest_uri``: the bridge's URI)."""
        env = scanner_env(self.seaweed, home, None, self.proxy.uri)
        printed = run_cli("events", "--catalog", "sw", "--table", identifier, "--all-snapshots", env=env).stdout
        events = [json.loads(line) for line in printed.splitlines()]
        for event in events:
            validate_event(event)
        return [e for e in events if e["eventType"] == "COMPLETE"]


def dataset_names(event: dict) -> tuple:
    """An event's output as named: namespace, name and symlinks."""
    [output] = event["outputs"]
    return output["namespace"], output["name"], output["facets"].get("symlinks", {}).get("identifiers")


@pytest.fixture(scope="session")
def live_bridge(seaweed, tmp_path_factory) -> LiveBridge:
    with proxy_stack(seaweed, tmp_path_factory.mktemp("live-proxy"), LiveBridge) as running:
        yield running


@pytest.fixture(scope="session", autouse=True)
def _live_engines_early(request) -> None:
    """Start each engine run a collected test needs as the session starts (an engine that is not provisioned is
    left to its tests, which skip or fail)."""
    needed = {name for item in request.session.items for name in item.fixturenames}
    for component, fixture in ENGINE_RUNS.items():
        if fixture in needed and missing(component) is None and missing("seaweedfs") is None:
            request.getfixturevalue(fixture)


def check_named_runs(bridge: LiveBridge, identifier: str, spark_event: dict, home: Path) -> list[dict]:
    """The bridge's COMPLETE of each snapshot, in commit order: each has the runId the scanner computes, and both
    name the table as Spark's table through the same bridge is named (its location's path, the catalog symlink)."""
    scanned = bridge.scanned(identifier, home)
    bridged = bridge.completes({e["run"]["runId"] for e in scanned})
    location = bridge.seaweed.catalog("direct").load_table(identifier).location()
    namespace, _, symlinks = dataset_names(spark_event)
    [symlink] = symlinks
    expected = (namespace, location.removeprefix(f"{namespace}/").rstrip("/"), [{**symlink, "name": identifier}])
    for event in scanned:
        assert dataset_names(event) == dataset_names(bridged[event["run"]["runId"]]) == expected
    return [bridged[e["run"]["runId"]] for e in scanned]
