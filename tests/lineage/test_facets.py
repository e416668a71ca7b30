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


def test_statistics_schema_url_is_the_json_schema_at_the_release_tag():
    """``_schemaURL`` must fetch the schema itself (raw JSON at the release's tag), never an HTML page on a moving
    branch, and the shipped schema's ``$id`` must be that very address."""
    from iceberg_lineage._version import __version__
    from iceberg_lineage.lineage.facets import statistics_schema
    from iceberg_lineage.lineage.facets.statistics import SCHEMA_ID, IcebergTableStatisticsDatasetFacet

    raw = (f"https://raw.githubusercontent.com/iceberg-lineage/iceberg-lineage/v{__version__}"
           "/iceberg_lineage/schemas/IcebergTableStatisticsDatasetFacet.json")
    facet = IcebergTableStatisticsDatasetFacet(snapshotId=1, depth="summary", staged=False, available=True)
    assert SCHEMA_ID == raw
    assert facet._schemaURL == f"{raw}#/$defs/IcebergTableStatisticsDatasetFacet"
    assert statistics_schema()["$id"] == raw


def test_processing_engine_of_a_snapshot_names_this_adapter_version():
    from iceberg_lineage._version import __version__
    from iceberg_lineage.lineage.facets import processing_engine_facet

    facet = processing_engine_facet({"engine-name": "spark", "engine-version": "3.5.1"})
    assert (facet.name, facet.version, facet.openlineageAdapterVersion) == ("spark", "3.5.1", __version__)
