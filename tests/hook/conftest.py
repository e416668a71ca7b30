"""Fixtures of the hook tests: observed SQLite catalogs whose events go to a real HTTP server or a real file."""
from __future__ import annotations

import pytest
from tests.support.hook import Collector, FileSink

from iceberg_lineage.delivery.emitter import EMITTERS


@pytest.fixture(autouse=True)
def _fresh_emitters():
    """Every test starts without queued events, emitters or a default client (its file is relative to cwd)."""
    EMITTERS.shutdown()
    yield
    EMITTERS.shutdown()


@pytest.fixture
def collector():
    """A real OpenLineage HTTP endpoint on 127.0.0.1 and an HttpTransport client pointed at it."""
    server = Collector()
    yield server
    server.stop()


@pytest.fixture
def sink(tmp_path) -> FileSink:
    """A client with openlineage-python's file transport (JSON Lines) and a reader of that file."""
    return FileSink(tmp_path / "events.jsonl")
