"""Settings precedence as the events layer relies on it: explicit > CLI flag > environment > YAML > default."""
from __future__ import annotations

from pathlib import Path

import pytest

from iceberg_lineage.config import Settings, load_settings
from iceberg_lineage.errors import ConfigError


@pytest.fixture
def yaml_file(tmp_path) -> Path:
    path = tmp_path / "iceberg-lineage.yml"
    path.write_text("naming:\n  primary: table\njob:\n  namespace: from-yaml\ncolumn_stats:\n  mode: counts\n")
    return path


def test_defaults_without_any_source(tmp_path):
    assert load_settings(env={}, cwd=tmp_path) == Settings()


def test_yaml_then_env_then_flags_then_explicit(yaml_file, tmp_path):
    assert load_settings(env={}, cwd=tmp_path).job_namespace == "from-yaml"
    env = {"ICEBERG_LINEAGE__JOB__NAMESPACE": "from-env"}
    settings = load_settings(env=env, cwd=tmp_path)
    assert (settings.job_namespace, settings.naming_primary) == ("from-env", "table")
    flags = {"job.namespace": "from-flag", "column_stats.mode": None}  # None: flag not given
    settings = load_settings(flags, env=env, cwd=tmp_path)
    assert (settings.job_namespace, settings.column_stats_mode) == ("from-flag", "counts")
    settings = load_settings(flags, {"job.namespace": "explicit"}, env=env, cwd=tmp_path)
    assert settings.job_namespace == "explicit"


def test_config_env_var_points_at_the_file(yaml_file, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    settings = load_settings(env={"ICEBERG_LINEAGE_CONFIG": str(yaml_file)}, cwd=other)
    assert settings.naming_primary == "table" and settings.source_file == str(yaml_file)
    with pytest.raises(ConfigError):
        load_settings(env={"ICEBERG_LINEAGE_CONFIG": str(tmp_path / "missing.yml")}, cwd=other)


def test_bad_values_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="naming.primary"):
        load_settings({"naming.primary": "catalog"}, env={}, cwd=tmp_path)
    with pytest.raises(ConfigError, match="unknown"):
        load_settings(env={"ICEBERG_LINEAGE__NAMING__STYLE": "x"}, cwd=tmp_path)
