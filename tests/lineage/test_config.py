"""Settings: precedence (explicit > CLI flag > environment > YAML > default), the errors, and everything derived from
the one declaration of each setting (file key, environment variable, parsing, validation, the reference)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from iceberg_lineage.config import (
    REFERENCE_PATH, ColumnSelection, Origin, Settings, load_settings, reference_markdown, resolve,
)
from iceberg_lineage.config.declare import POSITIVE, Section, reference, section, setting
from iceberg_lineage.config.yamlfile import MAX_YAML_DEPTH
from iceberg_lineage.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def yaml_file(tmp_path) -> Path:
    path = tmp_path / "iceberg-lineage.yml"
    path.write_text("naming:\n  primary: table\njob:\n  namespace: from-yaml\ncolumn_stats:\n  mode: counts\n")
    return path


def test_defaults_without_any_source(tmp_path):
    assert load_settings(env={}, cwd=tmp_path) == Settings()
    assert resolve(env={}, cwd=tmp_path)[1] == {}


def test_yaml_then_env_then_flags_then_explicit(yaml_file, tmp_path):
    assert load_settings(env={}, cwd=tmp_path).job.namespace == "from-yaml"
    env = {"ICEBERG_LINEAGE__JOB__NAMESPACE": "from-env"}
    settings = load_settings(env=env, cwd=tmp_path)
    assert (settings.job.namespace, settings.naming.primary) == ("from-env", "table")
    flags = {"job.namespace": "from-flag", "column_stats.mode": None}  # None: flag not given
    settings, origins = resolve(flags, env=env, cwd=tmp_path)
    assert (settings.job.namespace, settings.column_stats.mode) == ("from-flag", "counts")
    in_file = Origin("file", str(yaml_file))
    assert origins == {"naming.primary": in_file, "column_stats.mode": in_file, "job.namespace": Origin("flag")}
    settings = load_settings(flags, {"job.namespace": "explicit"}, env=env, cwd=tmp_path)
    assert settings.job.namespace == "explicit"


def test_config_env_var_points_at_the_file(yaml_file, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    settings, origins = resolve(env={"ICEBERG_LINEAGE_CONFIG": str(yaml_file)}, cwd=other)
    assert settings.naming.primary == "table" and origins["naming.primary"] == Origin("file", str(yaml_file))
    with pytest.raises(ConfigError):
        load_settings(env={"ICEBERG_LINEAGE_CONFIG": str(tmp_path / "missing.yml")}, cwd=other)


def test_values_are_parsed_by_their_declared_type(tmp_path):
    env = {"ICEBERG_LINEAGE__COLUMN_STATS__EXCLUDE": "a.*, b", "ICEBERG_LINEAGE__HOOK__LEDGER": "off",
           "ICEBERG_LINEAGE__SPOOL__MAX_BYTES": "null", "ICEBERG_LINEAGE__SCAN__TABLE_TIMEOUT_S": "2.5",
           "ICEBERG_LINEAGE__NAMING__REST_URI": "http://bridge:8181/",
           "ICEBERG_LINEAGE__PROXY__IO_PROPERTIES": "{a: 1}"}
    s = load_settings(env=env, cwd=tmp_path)
    assert (s.column_stats.exclude, s.hook.ledger, s.spool.max_bytes, s.scan.table_timeout_s) == (("a.*", "b"), False,
                                                                                                   None, 2.5)
    assert (s.naming.rest_uri, dict(s.proxy.io_properties)) == ("http://bridge:8181", {"a": "1"})


@pytest.mark.parametrize(("key", "value", "expects"), [
    ("naming.primary", "catalog", "naming.primary must be one of location, table"),
    ("spool.max_bytes", 0, "spool.max_bytes must be an integer or null, above 0"),
    ("spool.max_rejections", "many", "spool.max_rejections must be an integer, at least 1"),
    ("scan.table_timeout_s", "inf", "scan.table_timeout_s must be a finite number, above 0"),
    ("proxy.port", 70000, "proxy.port must be an integer, at least 0 and at most 65535"),
    ("hook.ledger", "maybe", "hook.ledger must be a boolean"),
    ("column_stats.max_columns", 2.5, "column_stats.max_columns must be an integer, at least 0"),
])
def test_bad_values_name_the_key_and_the_type_never_the_value(tmp_path, key, value, expects):
    with pytest.raises(ConfigError) as err:
        load_settings({key: value}, env={}, cwd=tmp_path)
    assert str(err.value) == expects
    with pytest.raises(ConfigError, match="unknown configuration key naming.style"):
        load_settings(env={"ICEBERG_LINEAGE__NAMING__STYLE": "x"}, cwd=tmp_path)


def file_error(tmp_path: Path, text: str) -> str:
    """The error of loading settings from an ``iceberg-lineage.yml`` holding ``text``, without the file's name."""
    path = tmp_path / "iceberg-lineage.yml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_settings(env={}, cwd=tmp_path)
    assert err.value.file == str(path)
    return err.value.reason


def test_a_secret_in_the_wrong_key_is_not_printed(tmp_path):
    secret = "https://hooks.example/T000/B000/XXXXsecret"
    reason = file_error(tmp_path, f"alerts:\n  webhook_timeout_s: {secret}\n")
    assert reason == "alerts.webhook_timeout_s must be a finite number, above 0"
    env = {"ICEBERG_LINEAGE__ALERTS__WEBHOOK_RETRIES": secret}
    with pytest.raises(ConfigError) as err:
        load_settings(env=env, cwd=tmp_path / "none")
    assert str(err.value) == ("ICEBERG_LINEAGE__ALERTS__WEBHOOK_RETRIES: alerts.webhook_retries must be an integer, "
                              "at least 0")
    assert "webhook=" not in repr(load_settings(env={"ICEBERG_LINEAGE__ALERTS__WEBHOOK": secret}, cwd=tmp_path / "x"))


def test_a_yaml_syntax_error_gives_line_and_column_not_the_text(tmp_path):
    assert file_error(tmp_path, "naming:\n  primary: table\njob: [secret-text\n") == "not valid YAML at line 4, column 1"


def test_unknown_and_misshapen_file_keys(tmp_path):
    assert file_error(tmp_path, "naming: location\n") == "naming must be a mapping of settings"
    assert file_error(tmp_path, "spool:\n  paht: x\n  path: y\n") == "unknown configuration keys: spool.paht"


def test_the_configuration_file_goes_through_the_bounded_reader(tmp_path):
    text = "checks:\n  - tables: &t 'x.*'\n    rules: {}\n  - tables: *t\n    rules: {}\n"
    assert file_error(tmp_path, text) == "YAML anchors and aliases are not accepted (line 2, column 13)"
    assert file_error(tmp_path, "scan:\n  table_timeout_s: .inf\n") == "a number is not finite (.inf or .nan)"
    with pytest.raises(ConfigError) as err:
        load_settings(env={"ICEBERG_LINEAGE__CHECKS": "[" * 1000 + "]" * 1000}, cwd=tmp_path / "none")
    assert str(err.value) == f"ICEBERG_LINEAGE__CHECKS: YAML nested deeper than {MAX_YAML_DEPTH} levels (line 1)"


def test_sections_validate_when_built_directly():
    with pytest.raises(ConfigError, match="column_stats.mode must be one of none, counts, bounds"):
        ColumnSelection(mode="all")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="consumer.profile atlan needs consumer.connection"):
        Settings().updated({"consumer.profile": "atlan"})
    assert Settings().updated({"spool.path": "x", "proxy.port": "0"}).proxy.uri == "http://127.0.0.1:0"


@dataclass(frozen=True)
class ThrowawaySection(Section):
    answer: int = setting(42, "A setting added by one edit.", check=POSITIVE)


@dataclass(frozen=True)
class WithThrowaway(Settings):
    throwaway: ThrowawaySection = section(ThrowawaySection, "A section that exists only in this test.")


def test_adding_a_setting_is_one_edit(tmp_path):
    (tmp_path / "iceberg-lineage.yml").write_text("throwaway:\n  answer: 7\n")
    settings, origins = resolve(env={}, cwd=tmp_path, root=WithThrowaway)
    assert settings.throwaway.answer == 7 and origins["throwaway.answer"].kind == "file"
    env = {"ICEBERG_LINEAGE__THROWAWAY__ANSWER": "8"}
    assert resolve(env=env, cwd=tmp_path, root=WithThrowaway)[0].throwaway.answer == 8
    with pytest.raises(ConfigError) as err:
        resolve(env={"ICEBERG_LINEAGE__THROWAWAY__ANSWER": "0"}, cwd=tmp_path, root=WithThrowaway)
    assert str(err.value) == "ICEBERG_LINEAGE__THROWAWAY__ANSWER: throwaway.answer must be an integer, above 0"
    row = ("| `throwaway.answer` | `ICEBERG_LINEAGE__THROWAWAY__ANSWER` | an integer, above 0 | `42` "
           "| A setting added by one edit. |")
    assert row in reference(WithThrowaway).splitlines()
    assert row not in reference(Settings).splitlines()


def test_the_checked_in_reference_is_the_generated_one():
    assert (ROOT / REFERENCE_PATH).read_text() == reference_markdown(), "run: python -m iceberg_lineage.config"
