"""The bridge for the proxy tests: SeaweedFS (the session's real REST catalog) <- a recorder <- the proxy (a
subprocess) <- the clients; events go to a real local HTTP lineage server."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.support.lineage_server import LineageServer
from tests.support.proxy import Proxy, Recorder, own_properties, start_proxy
from tests.support.seaweed import Seaweed


@dataclass
class Bridge:
    seaweed: Seaweed
    recorder: Recorder
    proxy: Proxy
    lineage: LineageServer

    def own_properties(self) -> list[str]:
        return own_properties(self.seaweed)


@pytest.fixture(scope="module")
def bridge(seaweed, tmp_path_factory) -> Bridge:
    lineage = LineageServer()
    recorder = Recorder(seaweed.uri).start()
    proxy = start_proxy(recorder.url, tmp_path_factory.mktemp("proxy"), lineage.url, *own_properties(seaweed))
    try:
        yield Bridge(seaweed, recorder, proxy, lineage)
    finally:
        proxy.stop()
        lineage.stop()
