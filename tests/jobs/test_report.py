"""The jobs report of a generated log gives exactly the counts, rates, written totals and last failures it was
generated with, whatever the order of its lines, with duplicates and bad lines in it; plain or gzip."""
from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from iceberg_lineage.jobs import RELATIVE_ERROR, JobsAggregator, jobs_of_events, read_jobs
from tests.jobs.eventlog import T0, generated_log, run_event

RATES = {"ingest": 1 / 20, "transform": 4 / 10, "export": 0.0, "solo": 1.0}


@pytest.fixture(scope="module")
def log():
    return generated_log()


def exact_percentile(values, p):
    return float(np.percentile(values, p, method="inverted_cdf"))  # nearest rank


def test_counts_rates_and_failures_are_exact(log):
    lines, truth = log
    runs = {}
    for line in lines:
        event = json.loads(line)
        runs.setdefault(event["run"]["runId"], []).append(event["eventType"])
    assert any(types.index("START") > 0 and types[0] != "RUNNING" for types in runs.values())  # out of order
    assert sum(len(types) - len(set(types)) for types in runs.values()) > 5  # duplicates

    report = jobs_of_events(lines, max_failure_rate="5%")
    by_name = {job.name: job for job in report.jobs}
    assert sorted(by_name) == sorted(truth)
    for name, t in truth.items():
        job = by_name[name]
        assert (job.completed, job.failed, job.aborted, job.open) == (t.completed, t.failed, t.aborted, t.open)
        assert job.failure_rate == RATES[name] == t.rate
        assert (job.rows_written, job.bytes_written) == (t.rows, t.bytes)
        assert job.timed_runs == len(t.durations)
        for p, estimate in ((50, job.duration_p50_s), (95, job.duration_p95_s)):
            exact = exact_percentile(t.durations, p)
            assert abs(estimate - exact) <= RELATIVE_ERROR * exact * (1 + 1e-9), (name, p, estimate, exact)
        if t.last_failure is None:
            assert job.last_failure is None
        else:
            time, message = t.last_failure
            assert (job.last_failure.time.isoformat().replace("+00:00", "Z")[:23], job.last_failure.message) == (
                time[:23], message)
    assert by_name["ingest"].outputs == (("s3://lake", "out/ingest"),)
    assert by_name["ingest"].inputs == (("s3://lake", "raw/ingest"),)
    assert by_name["export"].rows_written is None and by_name["export"].bytes_written is None
    # 5% is not above 5%: ingest stays unflagged; transform (40%) and solo (100%) are flagged
    assert [job.name for job in report.flagged] == ["solo", "transform"]
    assert report.duplicates == sum(len(types) - len(set(types) - {"RUNNING"}) - types.count("RUNNING")
                                    for types in runs.values())
    assert report.events == len(lines) and report.bad_lines == 0
    assert sum(b.completed + b.failed + b.aborted + b.open for b in report.timeline) == sum(
        j.runs for j in report.jobs) == len(runs)


def test_the_order_of_lines_does_not_matter(log):
    lines, _ = log
    forward = jobs_of_events(lines).to_json()
    backward = jobs_of_events(reversed(lines)).to_json()
    assert forward["jobs"] == backward["jobs"] and forward["duplicates"] == backward["duplicates"]


def test_files_plain_and_gzip_with_bad_lines(log, tmp_path):
    lines, truth = log
    plain = tmp_path / "events.jsonl"
    plain.write_text("\n".join(["not json", *lines[:100], "", "[1, 2]", '{"eventType": "START"}']) + "\n")
    packed = tmp_path / "more.jsonl.gz"
    with gzip.open(packed, "wt") as f:
        f.write("\n".join([*lines[100:], '{"eventType": "COMPLETE", "run": {"runId": "r"}, "job": {"namespace": "n", '
                           '"name": "j"}, "eventTime": "yesterday"}']) + "\n")
    report = read_jobs([plain, packed])
    assert [(b.file, b.line, b.reason) for b in report.bad_line_samples] == [
        (str(plain), 1, "not JSON (Expecting value at column 1)"),
        (str(plain), 103, "not a JSON object"),
        (str(plain), 104, "run event without a string eventType and run.runId"),
        (str(packed), len(lines) - 99, "eventTime 'yesterday' is not ISO 8601"),
    ]
    assert report.bad_lines == 4
    assert report.to_json()["jobs"] == jobs_of_events(lines).to_json()["jobs"]


def test_since_and_job_globs(log):
    lines, truth = log
    assert [j.name for j in jobs_of_events(lines, job=["tr*", "ns/solo"]).jobs] == ["solo", "transform"]
    assert jobs_of_events(lines, job="nope").jobs == ()
    # ingest's runs start every 60 s from T0 + 60 s; from T0 + 20.5 min on only its last runs are counted
    late = jobs_of_events(lines, job="ingest", since=T0.replace(minute=20, second=30))
    (ingest,) = late.jobs
    assert ingest.runs == 22 - 20 and late.ignored > 0


def test_unknown_stays_unknown_and_dataset_events_are_ignored():
    dataset_event = {"eventTime": "2026-03-01T00:00:00Z", "dataset": {"namespace": "n", "name": "t"}}
    report = jobs_of_events([dataset_event, run_event("COMPLETE", "r1", "j", 0)])
    (job,) = report.jobs
    assert (job.completed, job.rows_written, job.bytes_written, job.duration_p50_s, job.timed_runs) == (
        1, None, None, None, 0)
    assert report.ignored == 1 and report.max_failure_rate is None and report.flagged == ()


def test_memory_holds_open_runs_and_a_window_of_finished_ones():
    """Finished runs are forgotten: the aggregator keeps the open ones and at most ``recent_runs`` finished."""
    aggregator = JobsAggregator(recent_runs=100)
    for n in range(1000):
        aggregator.add(run_event("START", f"r{n}", f"job{n % 3}", n))
        if n % 10:
            aggregator.add(run_event("COMPLETE", f"r{n}", f"job{n % 3}", n + 1))
    assert len(aggregator._open) == 100
    assert len(aggregator._recent) + len(aggregator._recent_old) <= 100
    report = aggregator.report()
    assert sum(j.open for j in report.jobs) == 100 and sum(j.completed for j in report.jobs) == 900
    assert [j.duration_p95_s for j in report.jobs] == [pytest.approx(1.0, rel=RELATIVE_ERROR)] * 3


def test_the_timeline_stays_within_its_bins():
    """Ten days of runs, one every 10 minutes: the bins widen along the ladder to 3 h (240 hourly bins would be
    more than 200) and lose no run."""
    events = [run_event("COMPLETE" if n % 7 else "FAIL", f"r{n}", "j", 600 * n) for n in range(1440)]
    timeline = jobs_of_events(events).timeline
    assert len(timeline) == 10 * 24 / 3 and {b.width_s for b in timeline} == {3 * 3600}
    assert (sum(b.completed for b in timeline), sum(b.failed for b in timeline)) == (1440 - 206, 206)
    assert timeline[0].start == T0 and timeline[1].start == T0.replace(hour=3)
