"""Entry point: job statistics and failure rates from OpenLineage run events (``iceberg-lineage jobs``, and
``jobs(...)`` in a notebook). Any producer's events: ours, OpenLineage Spark's, any file transport's JSON Lines.

    report = read_jobs("events.jsonl", since="7d", max_failure_rate="5%")
    report.flagged        # the jobs failing more often than that

The names are imported from their submodules at first use: the CLI's other commands import this package for the
``jobs`` options without paying for the reader.
"""
from __future__ import annotations

from iceberg_lineage.lazy import lazy_exports

#: Each public name and the module it comes from.
_EXPORTS = {
    "JobsAggregator": "iceberg_lineage.jobs.aggregate",
    "jobs_of_events": "iceberg_lineage.jobs.aggregate",
    "BadLine": "iceberg_lineage.jobs.model",
    "JobsReport": "iceberg_lineage.jobs.model",
    "JobStats": "iceberg_lineage.jobs.model",
    "LastFailure": "iceberg_lineage.jobs.model",
    "TimeBin": "iceberg_lineage.jobs.model",
    "parse_rate": "iceberg_lineage.jobs.options",
    "RELATIVE_ERROR": "iceberg_lineage.jobs.sketch",
    "read_jobs": "iceberg_lineage.jobs.source",
    "parse_since": "iceberg_lineage.times",
}


__getattr__ = lazy_exports(__name__, _EXPORTS, globals())


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
