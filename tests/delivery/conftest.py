"""Fixtures of the delivery tests: scripted HTTP servers and a spool in tmp_path."""
from __future__ import annotations

import pytest
from tests.support.delivery import LineageServer, Script, always_ok, free_port

from iceberg_lineage.config import Settings


@pytest.fixture
def serve():
    """``serve(port=None, script=always_ok) -> LineageServer``; servers stop at the end of the test."""
    servers: list[LineageServer] = []

    def start(port: int | None = None, script: Script = always_ok) -> LineageServer:
        server = LineageServer(port or free_port(), script)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings().updated({"spool.path": str(tmp_path / "spool")})
