"""Every executor gives the same events as a serial run: per-table work is a pure function of picklable input."""
from __future__ import annotations

import datetime as dt
import os

import pytest

from iceberg_lineage.stats.parallel import EXECUTORS, manifest_pool, open_executor
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


def test_the_factory_hands_out_one_pool_per_purpose():
    """The manifest threads and the split processes are separate pools with one owner."""
    assert EXECUTORS.manifest_threads() is manifest_pool()
    assert EXECUTORS.split_processes() is EXECUTORS.split_processes()
    assert EXECUTORS.split_processes() is not manifest_pool()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX only")
def test_a_forked_child_gets_its_own_pools():
    """The parent's pool threads do not exist in a forked child: the child must get new pools, and they must work."""
    parent = manifest_pool()
    assert parent.submit(lambda: 1).result(timeout=10) == 1  # the parent's pool has running threads
    pid = os.fork()
    if pid == 0:  # the child: report through the exit code, never return into pytest
        ok = False
        try:
            ok = manifest_pool() is not parent and manifest_pool().submit(lambda: 2).result(timeout=10) == 2
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert manifest_pool() is parent


def test_tables_in_batches_on_processes_emit_the_same_events(tables, tmp_path, monkeypatch):
    """Issue 32: processes and Dask take several tables per task; 5 tables in batches of 2 are 3 tasks."""
    import iceberg_lineage.scan.driver as driver

    serial = events_with(tables, tmp_path, "serial", workers=1)
    monkeypatch.setattr(driver, "TABLES_PER_TASK", 2)
    assert events_with(tables, tmp_path, "processes", executor="processes", workers=2) == serial


def _where() -> tuple[str, str | None]:
    return os.getcwd(), os.environ.get("ICEBERG_LINEAGE_TEST_MARK")


def test_process_workers_start_in_the_drivers_folder_and_environment(tmp_path, monkeypatch):
    """Workers forked from a server started earlier still see the driver's folder and environment as they are now,
    as spawned ones did."""
    for n in ("1", "2"):
        folder = tmp_path / n
        folder.mkdir()
        monkeypatch.chdir(folder)
        monkeypatch.setenv("ICEBERG_LINEAGE_TEST_MARK", n)
        with open_executor("processes", workers=1) as pool:
            assert pool.submit(_where).result() == (str(folder), n)


class _Cycle:
    """An object in a reference cycle: only the garbage collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_a_scan_keeps_older_objects_out_of_full_collections_and_hands_them_back(tables, tmp_path):
    """While a scan runs, what was alive before it is frozen (``gc.freeze``): full collections skip it. At the end it
    is unfrozen, even when the scan fails: a cycle that was garbage before the scan is freed by the next collection,
    which a frozen one never is."""
    import gc
    import weakref

    frozen_during: list[int] = []

    def sink(texts):
        frozen_during.append(gc.get_freeze_count())
        return ["delivered"] * len(texts)

    def failing(texts):
        raise RuntimeError("the sink broke")

    gc.disable()
    try:
        garbage = _Cycle()
        ref = weakref.ref(garbage)
        del garbage
        assert gc.get_freeze_count() == 0
        summary, _ = run_scan(tables, tmp_path / "state.db", sink)
        with pytest.raises(RuntimeError, match="the sink broke"):
            run_scan(tables, tmp_path / "again.db", failing)
        assert summary.snapshots_emitted == 17 and min(frozen_during) > 10_000
        assert gc.get_freeze_count() == 0 and ref() is not None
    finally:
        gc.enable()
    gc.collect()
    assert ref() is None


def test_a_scan_leaves_objects_the_process_froze_itself_frozen(tables, tmp_path):
    import gc

    gc.freeze()
    try:
        before = gc.get_freeze_count()
        summary, _ = run_scan(tables, tmp_path / "state.db")
        assert summary.snapshots_emitted == 17 and gc.get_freeze_count() > before // 2 > 0  # some die meanwhile
    finally:
        gc.unfreeze()
