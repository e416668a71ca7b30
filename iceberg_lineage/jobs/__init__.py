"""Entry point: job statistics and failure rates from OpenLineage run events (``iceberg-lineage jobs``, and
``jobs(...)`` in a notebook). Any producer's events: ours, OpenLineage Spark's, any file transport's JSON Lines.

    report = read_jobs("events.jsonl", since="7d", max_failure_rate="5%")
    report.flagged        # the jobs failing more often than that
"""
from iceberg_lineage.jobs.aggregate import JobsAggregator, jobs_of_events
from iceberg_lineage.jobs.model import BadLine, JobsReport, JobStats, LastFailure, TimeBin
from iceberg_lineage.jobs.options import parse_rate
from iceberg_lineage.jobs.sketch import RELATIVE_ERROR
from iceberg_lineage.jobs.source import read_jobs
from iceberg_lineage.times import parse_since

__all__ = [
    "RELATIVE_ERROR",
    "BadLine",
    "JobStats",
    "JobsAggregator",
    "JobsReport",
    "LastFailure",
    "TimeBin",
    "jobs_of_events",
    "parse_rate",
    "parse_since",
    "read_jobs",
]
