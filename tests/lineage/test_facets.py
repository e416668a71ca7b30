"""The facet builders take their names from one place: commit metrics from scan_reporters' map."""
from __future__ import annotations

import attr

from iceberg_lineage.lineage.facets import CommitMetrics, commit_report_facet
from scan_reporters.commit_metrics import java_name
from scan_reporters.reports import COMMIT_METRICS


def test_every_commit_report_metric_has_its_summary_key_in_scan_reporters():
    measured = {"totalDuration", "attempts"}
    from_summary = {java_name(s.name): s.summary_key for s in COMMIT_METRICS if s.summary_key}
    assert {a.name for a in attr.fields(CommitMetrics)} - measured <= set(from_summary)
    assert java_name("added-dvs") == "addedDVs" and java_name("total-files-size-bytes") == "totalFilesSizeInBytes"


def test_commit_report_reads_the_summary_keys_and_leaves_the_rest_out():
    summary = {"operation": "delete", "deleted-data-files": "2", "total-files-size": "10", "added-dvs": "x",
               "manifests-created": "1", "engine-name": "spark"}
    facet = commit_report_facet(5, 3, summary, duration_ms=7)
    metrics = {k: v for k, v in attr.asdict(facet.commitMetrics).items() if v is not None}
    assert metrics == {"totalDuration": 7, "removedDataFiles": 2, "totalFilesSizeInBytes": 10}
    assert (facet.operation, facet.metadata) == ("delete", {"engine-name": "spark"})
