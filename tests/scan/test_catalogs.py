"""Which catalogs a scan walks: PyIceberg's configuration; the embedded default under ./warehouse only by name."""
from __future__ import annotations

import pytest

from iceberg_lineage.errors import ConfigError
from iceberg_lineage.read.catalogs import DEFAULT_CATALOG, configured_catalogs
from iceberg_lineage.scan.discovery import TableFilter


def test_no_configuration_is_an_error_and_the_embedded_default_is_asked_for_by_name(tmp_path):
    with pytest.raises(ConfigError, match="no PyIceberg catalog is configured: looked for "
                                          f"{tmp_path}/home/.pyiceberg.yaml, {tmp_path}/.pyiceberg.yaml"):
        configured_catalogs()
    assert not (tmp_path / "warehouse").exists()
    [spec] = configured_catalogs([DEFAULT_CATALOG])
    props = dict(spec.properties)
    assert spec.name == DEFAULT_CATALOG and props["type"] == "sql"
    assert props["uri"] == f"sqlite:///{tmp_path}/warehouse/catalog.db"
    assert (tmp_path / "warehouse").is_dir()
    with pytest.raises(ConfigError, match="no PyIceberg catalog named glue; none is configured"):
        configured_catalogs(["glue"])


def test_configured_catalogs_from_yaml_and_environment(tmp_path, monkeypatch):
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / ".pyiceberg.yaml").write_text(
        "catalog:\n  lake:\n    uri: sqlite:////x/lake.db\n    s3:\n      endpoint: http://s3\n")
    monkeypatch.setenv("PYICEBERG_CATALOG__OPS__URI", "sqlite:////x/ops.db")
    specs = {s.name: dict(s.properties) for s in configured_catalogs()}
    assert specs == {"lake": {"uri": "sqlite:////x/lake.db", "s3.endpoint": "http://s3"},
                     "ops": {"uri": "sqlite:////x/ops.db"}}
    assert [s.name for s in configured_catalogs(["OPS"])] == ["ops"]
    with pytest.raises(ConfigError, match="nope"):
        configured_catalogs(["nope"])


def test_table_filter():
    f = TableFilter(namespaces=("db.inner",), include=("*.t*",), exclude=("*.tmp_*",))
    assert f.wants("c", ("db", "inner", "t1")) and f.wants("c", ("db", "inner", "deep", "t2"))
    assert not f.wants("c", ("db", "t1"))  # outside the namespace
    assert not f.wants("c", ("db", "inner", "tmp_x"))
    assert not f.wants("c", ("db", "inner", "orders"))
    assert TableFilter(include=("c.db.*",)).wants("c", ("db", "x"))  # catalog-qualified globs work too
