"""Fixtures of the hook tests: observed SQLite catalogs whose events go to a real HTTP server or a real file."""
from __future__ import annotations

import os

import pytest
from tests.support.hook import SCHEMA, Collector, FileSink, rows

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


@pytest.fixture
def lake(tmp_path):
    """Catalog ``lake``: db.a with two snapshots, empty db.b; and the environment of a script that opens it
    (``LAKE_URI``, ``LAKE_WAREHOUSE``), without the developer's OpenLineage, iceberg-lineage or PyIceberg settings."""
    from pyiceberg.catalog.sql import SqlCatalog

    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    props = {"uri": f"sqlite:///{tmp_path}/lake.db", "warehouse": f"file://{warehouse}"}
    catalog = SqlCatalog("lake", **props)
    catalog.create_namespace("db")
    a = catalog.create_table("db.a", SCHEMA)
    a.append(rows(1, 2))
    a.append(rows(3))
    catalog.create_table("db.b", SCHEMA)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENLINEAGE", "ICEBERG_LINEAGE", "PYICEBERG"))}
    env.update(LAKE_URI=props["uri"], LAKE_WAREHOUSE=props["warehouse"])
    return catalog, env
