"""``iceberg-lineage jobs``: exit codes 0 / 1 (a job above --max-failure-rate) / 2 (usage), the default events file,
bad lines named on stderr, the JSON keys, and hostile job names shown, never obeyed, in the text table."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from iceberg_lineage.cli import main
from tests.jobs.eventlog import generated_log, run_event
from tests.support.userstate import USER_STATE


def jobs(*args: str):
    return CliRunner().invoke(main, ["jobs", *args])


@pytest.fixture
def default_file(tmp_path) -> Path:
    """The generated log where the embedded file transport writes (the test runs in tmp_path)."""
    lines, _ = generated_log()
    path = tmp_path / USER_STATE / "events.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(lines) + "\n{broken\n")
    return path


def test_exit_codes_and_the_default_file(default_file):
    flagged = jobs("--max-failure-rate", "5%", "--format", "json")
    assert flagged.exit_code == 1, flagged.output
    doc = json.loads(flagged.stdout)
    assert doc["flagged"] == ["ns/solo", "ns/transform"] and doc["sources"] == [str(default_file)]
    assert flagged.stderr.splitlines() == [
        f"iceberg-lineage: jobs: {default_file}:{doc['events'] + 1}: not JSON (Expecting property name enclosed in "
        "double quotes at column 2)",
        "iceberg-lineage: jobs: 1 bad line(s) skipped"]
    assert set(doc) == {"sources", "since", "max_failure_rate", "events", "ignored", "duplicates", "bad_lines",
                        "bad_line_samples", "flagged", "jobs", "timeline"}
    transform = next(j for j in doc["jobs"] if j["name"] == "transform")
    assert set(transform) == {
        "namespace", "name", "runs", "completed", "failed", "aborted", "open", "failure_rate", "flagged",
        "timed_runs", "duration_p50_s", "duration_p95_s", "rows_written", "bytes_written", "inputs", "outputs",
        "tables_truncated", "first_event", "last_event", "last_failure"}
    assert (transform["failure_rate"], transform["rows_written"], transform["bytes_written"]) == (0.4, 30, None)
    assert transform["last_failure"]["message"].startswith("job transform run")

    assert jobs("--max-failure-rate", "0.4", "--format", "json").exit_code == 1  # solo: 100 %
    assert jobs("--max-failure-rate", "100%", "--format", "json").exit_code == 0
    assert jobs("--format", "json").exit_code == 0  # nothing is flagged without a threshold
    assert jobs("--job", "transform", "--max-failure-rate", "40%", "--format", "json").exit_code == 0


@pytest.mark.parametrize("args, message", [
    (("--max-failure-rate", "5"), "expected a percentage such as 5% or a fraction"),
    (("--max-failure-rate", "120%"), "expected a percentage"),
    (("--since", "last week"), "expected a duration such as 7d"),
    (("--format", "yaml"), "'yaml' is not one of"),
    (("--events", "missing.jsonl"), "missing.jsonl: no events file"),
    ((), f"/{USER_STATE / 'events.jsonl'}: no events file (no events were written here yet; give --events FILE)"),
])
def test_usage_errors_exit_2(args, message):
    result = jobs(*args)
    assert result.exit_code == 2 and message in result.stderr, result.output


def test_since_keeps_recent_events(tmp_path):
    path = tmp_path / "e.jsonl"
    path.write_text("\n".join(json.dumps(run_event("COMPLETE", f"r{n}", "j", n * 86400)) for n in range(10)) + "\n")
    doc = json.loads(jobs("--events", str(path), "--since", "2026-03-08", "--format", "json").stdout)
    assert (doc["jobs"][0]["completed"], doc["ignored"], doc["since"]) == (3, 7, "2026-03-08T00:00:00.000Z")


def test_text_table_shows_hostile_names_as_text(tmp_path):
    hostile = "evil\x1b]0;pwned\x07[/bold][red]job"
    path = tmp_path / "e.jsonl"
    events = [run_event("START", "r1", hostile, 0), run_event("FAIL", "r1", hostile, 2, error="boom\x1b[2J"),
              run_event("COMPLETE", "r2", "fine", 1)]
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    result = CliRunner().invoke(main, ["jobs", "--events", str(path), "--format", "text", "--max-failure-rate", "5%"],
                                terminal_width=250)
    assert result.exit_code == 1
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "evil\\x1b]0;pwned\\x07[/bold][red]job" in result.stdout.replace("\n", "")
    assert "boom\\x1b[2J" in result.stdout
    assert "2 job(s), 3 run event(s)" in result.stdout and "1 above 5.0 % failures" in result.stdout


def test_flagged_jobs_are_highlighted_on_a_terminal(default_file):
    result = CliRunner().invoke(main, ["jobs", "--format", "text", "--max-failure-rate", "5%"],
                                env={"FORCE_COLOR": "1", "COLUMNS": "250"})
    assert result.exit_code == 1
    rows = {line.split("ns/")[1].split()[0].split("\x1b")[0]: line for line in result.stdout.splitlines()
            if "ns/" in line and "last failure" not in line}
    assert sorted(rows) == ["export", "ingest", "solo", "transform"]
    assert "\x1b[1;31mns/solo" in rows["solo"] and "\x1b[1;31mns/transform" in rows["transform"]  # bold red rows
    assert "\x1b[31m1\x1b[0m" in rows["ingest"] and "1;31" not in rows["ingest"]  # a failure in red, not flagged
    assert "\x1b" not in rows["export"]
