"""The ``checks:`` configuration: table globs, merging, the default set, settings and their errors."""
from __future__ import annotations

import pytest

from iceberg_lineage.config import load_settings
from iceberg_lineage.errors import ConfigError
from iceberg_lineage.quality.rules import DEFAULT_RULES, checks_config, duration_s, make_rule, size_bytes


def test_default_set():
    got = {r.kind: (dict(r.params), r.severity) for r in DEFAULT_RULES.rules}
    assert got == {
        "row_count": ({"max_drop_pct": 50}, "warn"),
        "small_files": ({"size": "32MB", "max_ratio": 0.5}, "warn"),
        "delete_ratio": ({"max": 0.2}, "warn"),
        "equality_deletes": ({"max_files_ratio": 0.1}, "warn"),
        "snapshots": ({"max": 1000}, "warn"),
        "manifests": ({"max": 1000}, "warn"),
        "schema": ({}, "warn"),
    }
    schema = DEFAULT_RULES.get("schema").settings
    assert {k: schema[k] for k in ("added", "removed", "type_changed", "promoted", "renamed")} == {
        "added": "warn", "removed": "error", "type_changed": "error", "promoted": "warn", "renamed": "warn"}
    assert DEFAULT_RULES.depth() == "entries"  # small_files reads the entries


def test_globs_merge_and_fall_back_to_the_default_set():
    config = checks_config([
        {"tables": "mart.*", "rules": {"freshness": {"max_age": "6h", "severity": "error"}, "snapshots": {"max": 5}}},
        {"tables": ["mart.orders", "raw.*"], "rules": {"snapshots": {"max": 9}}},
    ])
    orders = config.rules_for("mart.orders")
    assert [r.kind for r in orders.rules] == ["freshness", "snapshots"]
    assert orders.get("snapshots").settings["max"] == 9 and orders.get("freshness").settings["max_age"] == 21600
    assert orders.depth() == "summary"
    assert [r.kind for r in config.rules_for("raw.events").rules] == ["snapshots"]
    assert config.rules_for("other.t") is DEFAULT_RULES


def test_quantities():
    assert (size_bytes("32MB"), size_bytes("1.5 KB"), size_bytes(100), size_bytes("2GB")) == (
        32 * 2**20, 1536, 100, 2 * 2**30)
    assert (duration_s("6h"), duration_s("30m"), duration_s("2d"), duration_s(90)) == (21600, 1800, 172800, 90)


@pytest.mark.parametrize(("kind", "config", "message"), [
    ("nope", {}, "unknown rule 'nope'"),
    ("snapshots", {}, "snapshots needs max"),
    ("snapshots", {"max": 5, "min": 1}, "unknown settings of snapshots: min"),
    ("snapshots", {"max": -1}, "snapshots.max: not a non-negative integer: -1"),
    ("small_files", {"size": "32 parsecs", "max_ratio": 1}, "small_files.size: not a size: '32 parsecs'"),
    ("row_count", {"severity": "fatal"}, "row_count.severity must be one of error, warn, not 'fatal'"),
    ("schema", {"added": "loud"}, "schema.added: must be one of error, warn, ignore, not 'loud'"),
])
def test_bad_rules_are_configuration_errors(kind, config, message):
    with pytest.raises(ConfigError) as err:
        make_rule(kind, config)
    assert message in str(err.value)


def test_checks_and_alerts_keys(tmp_path, monkeypatch):
    (tmp_path / "iceberg-lineage.yml").write_text(
        "checks:\n  - tables: 'mart.*'\n    rules:\n      snapshots: {max: 3}\n"
        "alerts:\n  webhook: http://127.0.0.1:9/hook\n  webhook_timeout_s: 0.5\n  webhook_retries: 0\n")
    settings = load_settings(cwd=tmp_path)
    assert settings.checks == [{"tables": "mart.*", "rules": {"snapshots": {"max": 3}}}]
    assert (settings.alerts.webhook, settings.alerts.webhook_timeout_s, settings.alerts.webhook_retries) == (
        "http://127.0.0.1:9/hook", 0.5, 0)
    monkeypatch.setenv("ICEBERG_LINEAGE__CHECKS", "[{tables: 'x.*', rules: {manifests: {max: 2}}}]")
    assert load_settings(cwd=tmp_path).checks == [{"tables": "x.*", "rules": {"manifests": {"max": 2}}}]
    with pytest.raises(ConfigError, match="alerts.webhook_timeout_s must be a finite number, above 0"):
        load_settings({"alerts.webhook_timeout_s": 0}, cwd=tmp_path)
