"""Shared test fixtures: the real tables written by other engines (copied into tests/fixtures), made readable
from their new place, and PyIceberg SQLite catalogs with a local warehouse."""
from __future__ import annotations

import os

import pytest

from tests.support.userstate import USER_STATE, XDG_STATE

#: Session-wide real engines (Spark with Iceberg Java...), reusable by every suite.
pytest_plugins = ["tests.support.engines", "tests.support.seaweed", "tests.support.sail", "tests.support.kafka", "tests.support.iceberg_rest",
                  "tests.support.live_bridge", "tests.support.trino", "tests.support.flink",
                  "tests.support.marquez"]


@pytest.fixture
def sql_catalog(tmp_path):
    """A PyIceberg SqlCatalog on SQLite with a real local warehouse."""
    from pyiceberg.catalog.sql import SqlCatalog

    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    catalog = SqlCatalog("test", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{warehouse}")
    catalog.create_namespace("db")
    return catalog


@pytest.fixture(autouse=True)
def _isolated_cwd_env(monkeypatch, tmp_path):
    """Tests never read the developer's configuration nor write into the source tree or the user's state folder: HOME
    and XDG_STATE_HOME point into the test's folder (processes the test starts inherit both)."""
    for name in list(os.environ):
        if name.startswith(("OPENLINEAGE", "ICEBERG_LINEAGE", "PYICEBERG_")):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / XDG_STATE))
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def state_path(tmp_path):
    """Where a scan keeps its watermarks in a test."""
    return tmp_path / "state" / "state.db"


@pytest.fixture
def user_state(tmp_path):
    """The per-user state folder under the test's XDG_STATE_HOME: the default home of state, spool and events."""
    return tmp_path / USER_STATE
