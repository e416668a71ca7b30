"""``iceberg-lineage config``: every setting with its value and its source, secrets masked; exit 2 on a broken file."""
from __future__ import annotations

import json

from click.testing import CliRunner

from iceberg_lineage.cli.config import config_command
from iceberg_lineage.config import KEYS

SECRET = "https://hooks.example/T000/XXXXsecret"


def run(tmp_path, monkeypatch, *args: str):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("ICEBERG_LINEAGE_CONFIG", "OPENLINEAGE_URL", "OPENLINEAGE_CONFIG", "PYICEBERG_HOME"):
        monkeypatch.delenv(name, raising=False)
    return CliRunner().invoke(config_command, list(args))


def test_each_setting_has_its_value_and_source(tmp_path, monkeypatch, user_state):
    path = tmp_path / "iceberg-lineage.yml"
    path.write_text(f"alerts:\n  webhook: {SECRET}\nspool:\n  max_bytes: 1000\n")
    monkeypatch.setenv("ICEBERG_LINEAGE__JOB__NAMESPACE", "from-env")
    result = run(tmp_path, monkeypatch, "--format", "json", "--profile", "datahub")
    assert result.exit_code == 0, result.output
    assert SECRET not in result.output
    report = json.loads(result.output)
    rows = {r["key"]: (r["value"], r["source"]) for r in report["settings"]}
    assert list(rows) == list(KEYS)  # every declared setting, in declaration order
    assert rows["alerts.webhook"] == ("***", f"file {path}")
    assert rows["spool.max_bytes"] == (1000, f"file {path}")
    assert rows["job.namespace"] == ("from-env", "env ICEBERG_LINEAGE__JOB__NAMESPACE")
    assert rows["consumer.profile"] == ("datahub", "flag")
    assert rows["events.max_bytes"] == (1_000_000, "default")
    assert rows["column_stats.exclude"] == ([], "default")
    assert (report["state"], report["spool"]) == (str(user_state / "state.db"), str(user_state / "spool"))
    assert report["transport"].startswith(f"file {user_state / 'events.jsonl'}")
    assert not user_state.exists()  # showing the configuration creates nothing


def test_text_format_lines_up_key_value_source(tmp_path, monkeypatch):
    result = run(tmp_path, monkeypatch, "--format", "text")
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("spool.max_rejections"))
    assert line.split() == ["spool.max_rejections", "5", "default"]


def test_a_broken_configuration_is_one_line_and_exit_2(tmp_path, monkeypatch):
    (tmp_path / "iceberg-lineage.yml").write_text(f"alerts:\n  webhook_retries: {SECRET}\n")
    result = run(tmp_path, monkeypatch)
    assert result.exit_code == 2
    assert SECRET not in result.output and len(result.output.strip().splitlines()) == 1
    assert "alerts.webhook_retries must be an integer, at least 0" in result.output
