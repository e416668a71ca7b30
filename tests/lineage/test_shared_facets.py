"""A table's snapshot runs built together (:func:`snapshot_runs`: facets shared by its snapshots, objects serialised
once) are byte for byte the runs built one by one, each with its own facets, on every fixture table."""
from __future__ import annotations

import datetime as dt

import pytest

from tests.support.fixture_tables import FIXTURE_TABLES, fixture_table
from iceberg_lineage.config import Settings
from iceberg_lineage.lineage import facets as fb
from iceberg_lineage.lineage.events import snapshot_run_event, snapshot_runs, with_start
from iceberg_lineage.lineage.serde import serialised_once, to_json
from iceberg_lineage.stats import table_history

CAPTURE = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize("depth", ["summary", "entries"])
@pytest.mark.parametrize("name", FIXTURE_TABLES)
def test_shared_facets_give_the_events_built_one_by_one(name, depth):
    table = fixture_table(name)
    settings = Settings()
    ids = [s.snapshot_id for s in table.metadata.snapshots]
    with serialised_once():
        together = {sid: [to_json(e) for e in built]
                    for sid, built in snapshot_runs(table, ids, settings, depth=depth, capture_time=CAPTURE).items()}
    alone = {}
    for stats in table_history(table, depth=depth, columns=settings.column_stats, snapshot_ids=ids):
        event = snapshot_run_event(table, stats, settings, capture_time=CAPTURE)
        alone[stats.snapshot_id] = [to_json(e) for e in with_start(event, settings, fb.ms_to_datetime(stats.timestamp_ms))]
    assert together == alone and len(together) == len(ids)


def _summaries():
    found = [dict(s.summary) for name in FIXTURE_TABLES for s in fixture_table(name).metadata.snapshots]
    hostile = {"operation": "append", "added-records": "12x", "added-data-files": " 3", "deleted-data-files": "-1",
               "total-records": "1e3", "added-files-size": "99999999999999999999", "removed-dvs": "7"}
    return [*found, hostile]


def test_commit_counters_are_scan_reporters_metrics():
    """The commit report's counters, read from the summary keys once mapped, are those of scan_reporters'
    ``commit_metrics_from_summary`` (every summary of every fixture table, and unparsable values)."""
    from scan_reporters.commit_metrics import commit_metrics_from_summary, java_name

    from iceberg_lineage.lineage.facets import CommitMetrics
    from iceberg_lineage.lineage.facets.reports import commit_report_facet

    summaries = _summaries()
    assert len(summaries) > 20
    for summary in summaries:
        counters = {java_name(n): v for n, v in commit_metrics_from_summary(summary).values().items()}
        expected = CommitMetrics(**{n: v for n, v in counters.items() if hasattr(CommitMetrics(), n)})
        assert commit_report_facet(1, 2, summary).commitMetrics == expected


@pytest.mark.parametrize("name", FIXTURE_TABLES)
def test_manifests_read_here_or_on_the_pool_give_the_same_events(name):
    """A scan reads a local table's manifests in its own thread, a remote one's on the manifest pool: the same
    events either way, entries and columns included."""
    from iceberg_lineage.stats.parallel import manifest_pool

    table = fixture_table(name)
    ids = [s.snapshot_id for s in table.metadata.snapshots]
    runs = [{sid: [to_json(e) for e in built] for sid, built in snapshot_runs(
        table, ids, Settings(), depth="entries", capture_time=CAPTURE, executor=executor).items()}
        for executor in (None, manifest_pool())]
    assert runs[0] == runs[1] and len(runs[0]) == len(ids)
