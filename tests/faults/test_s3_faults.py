"""S3 that throttles and errors: the walker's reads retry and succeed; a table whose files stay unreachable fails
alone, with a typed error naming the table and the file."""
from __future__ import annotations

import pytest
from tests.support.faults import (
    BUCKET,
    S3Proxy,
    first_gets_fail,
    prefix_always_fails,
    s3_properties,
    small_rows,
)
from pyiceberg.catalog.sql import SqlCatalog

from iceberg_lineage.config import Settings
from iceberg_lineage.read.catalogs import CatalogSpec
from iceberg_lineage.scan.driver import ScanOptions, scan
from iceberg_lineage.scan.sinks import event_sink
from iceberg_lineage.read.source import open_table
from iceberg_lineage.state.store import StateStore
from iceberg_lineage.stats import table_history

TABLES = ("good1", "bad", "good2")
COMMITS = 3

IO_SETTINGS = {
    "pyarrow-default-retry": {},
    "pyarrow-patient-retry": {"s3.retry-strategy-impl": "tests.support.faults.PatientS3RetryStrategy"},
    "fsspec": {"py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO"},
}


@pytest.fixture(scope="module")
def s3_catalog(moto_s3, tmp_path_factory):
    """Three tables of three snapshots each, written by PyIceberg straight to moto (no faults on the way in)."""
    root = tmp_path_factory.mktemp("s3cat")
    props = {"uri": f"sqlite:///{root}/catalog.db", "warehouse": f"s3://{BUCKET}/wh", **s3_properties(moto_s3)}
    catalog = SqlCatalog("s3cat", **props)
    catalog.create_namespace("db")
    for name in TABLES:
        table = catalog.create_table(f"db.{name}", schema=small_rows(0).schema)
        for i in range(COMMITS):
            table.append(small_rows(10 * i))
    return props


@pytest.mark.parametrize("io", sorted(IO_SETTINGS))
def test_walker_retries_throttling_and_errors(io, moto_s3, s3_catalog):
    """The first two GETs of every object answer 503 SlowDown then 500; the walk still sees everything."""
    catalog = SqlCatalog("s3cat", **s3_catalog)
    location = catalog.load_table("db.good1").metadata_location
    expected = table_history(open_table(location, properties={**s3_properties(moto_s3), **IO_SETTINGS[io]}))
    proxy = S3Proxy(moto_s3, first_gets_fail(2))
    try:
        history = table_history(open_table(location, properties={**s3_properties(proxy.url), **IO_SETTINGS[io]}))
    finally:
        proxy.stop()
    assert [s.to_json() for s in history.snapshots] == [s.to_json() for s in expected.snapshots]
    assert len(history.snapshots) == COMMITS and history.snapshots[-1].records == 3 * COMMITS
    read = {p for p in proxy.gets if p.startswith(f"/{BUCKET}/wh/db/good1/metadata/")}
    assert len(read) >= 1 + COMMITS + COMMITS  # metadata.json, manifest lists, manifests
    assert {proxy.faults[p] for p in read} == {2}
    assert all(proxy.gets[p] >= 3 for p in read)


def test_unreachable_table_fails_alone(moto_s3, s3_catalog, tmp_path):
    """Every manifest of db.bad answers 500 for good: db.bad fails naming its file, the other tables are emitted."""
    proxy = S3Proxy(moto_s3, prefix_always_fails("wh/db/bad/metadata/", ".avro"))
    events: list[str] = []

    def sink(text: str) -> str:
        events.append(text)
        return "delivered"

    spec = CatalogSpec.of("s3cat", {"type": "sql", **s3_catalog, **s3_properties(proxy.url)})
    try:
        with StateStore(tmp_path / "state.db") as state:
            summary = scan(ScanOptions(catalogs=(spec,), workers=2), Settings(), state, event_sink(sink))
            recorded = {t.identifier: len(state.emitted(t.identity)) for t in state.tables("s3cat")}
    finally:
        proxy.stop()
    assert (summary.failed, summary.updated, summary.snapshots_emitted, summary.exit_code) == (1, 2, 2 * COMMITS, 1)
    failure, = summary.failures
    assert (failure.catalog, failure.table, failure.kind) == ("s3cat", "db.bad", "manifest")
    assert failure.file.startswith(f"s3://{BUCKET}/wh/db/bad/metadata/") and failure.file.endswith(".avro")
    assert failure.one_line().startswith("s3cat.db.bad: ")
    assert recorded == {("db", "good1"): COMMITS, ("db", "good2"): COMMITS}
    assert len(events) == 2 * 2 * COMMITS  # two tables' runs, START and COMPLETE each
    assert sum(proxy.faults.values()) >= 1
