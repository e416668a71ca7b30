"""The proxy's test fixtures. ``stack``: SeaweedFS (the session's real REST catalog) <- a recorder <- one proxy for the
module (a subprocess) <- the clients. ``tapped``: the same with a recording tap that keeps every report posted to
``/metrics``, and a proxy the test starts (and restarts) with its own timings. Events go to a real local lineage
server."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.support.lineage_server import LineageServer
from tests.support.olschema import validate_event
from tests.support.proxy import Proxy, ProxyStack, Recorder, own_properties, proxy_stack, start_proxy, wait_until
from tests.support.seaweed import Seaweed


@pytest.fixture(scope="module")
def stack(seaweed, tmp_path_factory) -> ProxyStack:
    with proxy_stack(seaweed, tmp_path_factory.mktemp("proxy"), ProxyStack) as running:
        yield running


@dataclass
class TappedProxy:
    seaweed: Seaweed
    tap: Recorder  # keeps every report Java posts to /metrics
    lineage: LineageServer
    home: object
    proxy: Proxy | None = None

    def start(self, *args: str, wait_s: float = 2.0, idle_s: float = 300.0) -> Proxy:
        self.proxy = start_proxy(self.tap.url, self.home, self.lineage.url, *own_properties(self.seaweed),
                                 "--run-idle-timeout", str(idle_s), *args,
                                 ICEBERG_LINEAGE__PROXY__REPORT_WAIT_S=str(wait_s))
        return self.proxy

    def events(self, condition=None, timeout: float = 60.0) -> list[dict]:
        """The events accepted so far (once ``condition(events)`` holds), each checked against the schemas."""
        if condition is not None:
            wait_until(lambda: condition(self.lineage.accepted_events()), timeout)
        self.lineage.wait_idle()
        events = self.lineage.accepted_events()
        for event in events:
            validate_event(event)
        return events


@pytest.fixture
def tapped(seaweed, tmp_path):
    """A tap and a lineage server; the test starts (and restarts) the proxy with its own timings."""
    lineage = LineageServer()
    made = TappedProxy(seaweed, Recorder(seaweed.uri).start(), lineage, tmp_path / "proxy")
    try:
        yield made
    finally:
        if made.proxy is not None:
            made.proxy.stop()
        lineage.stop()


def run_of(events: list[dict], run_id: str) -> list[dict]:
    return [e for e in events if e["run"]["runId"] == run_id]
