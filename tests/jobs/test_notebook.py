"""``jobs(...)`` in a notebook: an HTML table with failures coloured and every value escaped, a plot of runs over
time by state, and ``session.jobs()`` over the events an attached session sent."""
from __future__ import annotations

import json

import pyarrow as pa
from openlineage.client import OpenLineageClient
from openlineage.client.transport.file import FileConfig, FileTransport

from iceberg_lineage.notebook import JobsReport, attach, jobs
from tests.jobs.eventlog import run_event

HOSTILE = "<script>alert(1)</script>"


def test_html_escapes_a_hostile_job_and_colours_failures(tmp_path):
    path = tmp_path / "events.jsonl"
    events = [run_event("START", "r1", HOSTILE, 0), run_event("FAIL", "r1", HOSTILE, 3, error='<img src=x onerror="y">'),
              run_event("START", "r2", "ok&fine", 10), run_event("COMPLETE", "r2", "ok&fine", 12),
              run_event("START", "r3", "ok&fine", 20)]
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    report = jobs(path, max_failure_rate="5%")
    html = report._repr_html_()
    assert "<script" not in html and "<img" not in html
    assert "ns/&lt;script&gt;alert(1)&lt;/script&gt;" in html and "ok&amp;fine" in html
    assert "&lt;img src=x onerror=&quot;y&quot;&gt;" in html
    assert html.count("<tr>") == 1 + 2
    # the flagged job's name, its failed count and its 100 % failure rate are red; the healthy job has no red cell
    hostile_row, fine_row = html.split("<tr>")[2:]
    assert hostile_row.count("color:#c33") == 3 and "⚑" in hostile_row
    assert "color:#c33" not in fine_row

    figure = report.plot()
    bars = [patch for ax in figure.axes for patch in ax.patches]
    assert sum(round(bar.get_height()) for bar in bars) == 3  # 1 failed, 1 completed, 1 open
    assert [text.get_text() for text in figure.axes[0].get_legend().get_texts()] == ["completed", "failed", "open"]


def test_session_jobs_counts_what_the_session_sent(sql_catalog, tmp_path):
    client = OpenLineageClient(transport=FileTransport(FileConfig(log_file_path=str(tmp_path / "s.jsonl"))))
    session = attach(sql_catalog, client=client)
    schema = pa.schema([pa.field("id", pa.int64())])
    table = sql_catalog.create_table("db.t", schema=schema)
    table.append(pa.table({"id": [1, 2]}, schema=schema))
    table.append(pa.table({"id": [3]}, schema=schema))
    report = session.jobs()
    assert isinstance(report, JobsReport) and report.sources == ("session",)
    (job,) = [j for j in report.jobs if j.name == "db.t.pyiceberg"]
    sent = [e for e in session.events if e.job == "db.t.pyiceberg"]
    assert (job.completed, job.failed, job.open) == (sum(e.event_type == "COMPLETE" for e in sent), 0, 0) == (3, 0, 0)
    assert job.rows_written == 3 and job.failure_rate == 0.0
    assert "db.t.pyiceberg" in report._repr_html_()
