"""Every executor gives the same events as a serial run: per-table work is a pure function of picklable input."""
from __future__ import annotations

import datetime as dt

import pytest

from iceberg_lineage.stats.parallel import manifest_pool, open_executor
from iceberg_lineage.errors import ConfigError
from tests.support.scan import run_scan, write_table

CAPTURE = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)


@pytest.fixture
def tables(sql_catalog):
    for i in range(4):
        write_table(sql_catalog, f"db.t{i}", 2 + i)
    sql_catalog.create_namespace(("db", "sub"))
    write_table(sql_catalog, "db.sub.n", 3)
    return sql_catalog


def events_with(catalog, tmp_path, name: str, **options) -> list[str]:
    summary, sink = run_scan(catalog, tmp_path / name / "state.db", capture_time=CAPTURE, **options)
    assert summary.exit_code == 0 and summary.snapshots_emitted == 17
    return sorted(sink.events)


def test_threads_processes_and_dask_emit_the_same_events(tables, tmp_path):
    serial = events_with(tables, tmp_path, "serial", workers=1)
    assert events_with(tables, tmp_path, "threads", executor="threads", workers=4) == serial
    assert events_with(tables, tmp_path, "processes", executor="processes", workers=2) == serial
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        assert events_with(tables, tmp_path, "dask", executor="dask", dask_scheduler=cluster.scheduler_address) == serial


def test_executor_arguments_are_checked():
    with pytest.raises(ConfigError):
        with open_executor("fibers"):
            pass
    with pytest.raises(ConfigError):
        with open_executor("threads", dask_scheduler="tcp://127.0.0.1:1"):
            pass
    with pytest.raises(ConfigError):
        with open_executor("threads", workers=0):
            pass


def test_manifest_pool_is_one_bounded_pool_per_process():
    assert manifest_pool() is manifest_pool()
    with open_executor("threads", workers=2) as tables_pool:
        assert tables_pool is not manifest_pool()
