"""A rescan skips the tables whose listed metadata location is the one they were fully emitted at, without loading
them (issue 32, section 1); a table is marked fully emitted only when every snapshot there was delivered or spooled.
After each way a scan can fall short (a stop, a refusal, another mode, a replaced, re-created or renamed table), the
next scan sends exactly what is missing, counted at a real local HTTP server, and loads only the tables it must."""
from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from sqlalchemy import event
from tests.support.delivery import FAST, Answer, LineageServer, http_client
from tests.support.rescan import in_order, scan_to, snapshots_sent
from tests.support.scan import lifecycle, spec_of, write_table

from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.delivery import Delivery
from iceberg_lineage.delivery.replay import ReplayResult, replay
from iceberg_lineage.errors import ConfigError
from iceberg_lineage.read.catalogs import CatalogSpec
from iceberg_lineage.scan.driver import ScanOptions, scan
from iceberg_lineage.scan.sinks import delivery_sink, event_sink
from iceberg_lineage.state.store import StateStore


class Loads:
    """The table loads the scan makes: through the catalog (PyIceberg's ``SqlCatalog.load_table`` selects the row of
    one table by its name), counted on the very catalog object the scan uses, and at the metadata location the
    listing gave (a table task reads the file there, without the catalog)."""

    def __init__(self, spec: CatalogSpec, monkeypatch: pytest.MonkeyPatch) -> None:
        import iceberg_lineage.scan.task as task

        self._lock = threading.Lock()
        self.count = 0
        event.listen(spec.load().engine, "before_cursor_execute", self._seen)
        read = task._read_listed

        def counted(*args: Any) -> Any:
            self._add()
            return read(*args)

        monkeypatch.setattr(task, "_read_listed", counted)

    def _seen(self, _conn, _cursor, statement: str, *_args: Any) -> None:
        if "iceberg_tables.table_name = " in statement:
            self._add()

    def _add(self) -> None:
        with self._lock:
            self.count += 1

    def take(self) -> int:
        with self._lock:
            n, self.count = self.count, 0
        return n


def test_a_rescan_loads_only_the_changed_table(sql_catalog, state_path, tmp_path, monkeypatch):
    tables = {name: write_table(sql_catalog, f"db.{name}", 2) for name in ("a", "b", "c")}
    loads = Loads(spec_of(sql_catalog), monkeypatch)
    with LineageServer() as server:
        first = scan_to(server, sql_catalog, state_path, tmp_path)
        assert sorted(snapshots_sent(server)) == sorted(s for t in tables.values() for s in in_order(t))
        assert (first.updated, loads.take()) == (3, 3)

        again = scan_to(server, sql_catalog, state_path, tmp_path)
        assert (snapshots_sent(server), again.unchanged, again.tables_scanned, loads.take()) == ([], 3, 3, 0)

        write_table(sql_catalog, "db.b", 1, start=100)
        third = scan_to(server, sql_catalog, state_path, tmp_path)
        assert snapshots_sent(server) == in_order(tables["b"])[-1:]
        assert (third.updated, third.unchanged, loads.take()) == (1, 2, 1)


def test_a_stop_mid_table_leaves_it_unmarked_and_the_next_scan_sends_the_rest(
        sql_catalog, state_path, tmp_path, monkeypatch
):
    table = write_table(sql_catalog, "db.t", 4)
    order = in_order(table)
    loads = Loads(spec_of(sql_catalog), monkeypatch)
    # the first snapshot's START and COMPLETE and the second's START are taken; then the server fails and the spool
    # (1 byte) cannot take the event: the scan stops inside the table
    with LineageServer(script=lambda n, _body: Answer(200 if n < 3 else 500)) as failing:
        stopped = scan_to(failing, sql_catalog, state_path, tmp_path, {"spool.max_bytes": 1})
        assert snapshots_sent(failing)[:1] == order[:1]
    assert stopped.failed == 1 and stopped.snapshots_emitted == 1
    loads.take()
    with LineageServer() as server:
        retry = scan_to(server, sql_catalog, state_path, tmp_path)
        assert snapshots_sent(server) == order[1:] and loads.take() == 1
        assert retry.snapshots_emitted == 3 and retry.exit_code == 0
        assert scan_to(server, sql_catalog, state_path, tmp_path).unchanged == 1
        assert (snapshots_sent(server), loads.take()) == ([], 0)


def test_past_the_delivery_deadline_the_spooled_rest_counts_and_replay_sends_it(
        sql_catalog, state_path, tmp_path, monkeypatch
):
    table = write_table(sql_catalog, "db.t", 3)
    order = in_order(table)
    loads = Loads(spec_of(sql_catalog), monkeypatch)
    settings = {"scan.delivery_deadline_s": 0.5, "delivery.breaker_cooldown_s": 0}
    # the first snapshot's START and COMPLETE are answered; then the server goes silent past the deadline
    with LineageServer(script=lambda n, _body: Answer(200, delay=0 if n < 2 else 3600)) as silent:
        late = scan_to(silent, sql_catalog, state_path, tmp_path, settings, timeout=30)
        assert [json.loads(b)["eventType"] for b in silent.accepted] == ["START", "COMPLETE"]
        assert snapshots_sent(silent)[:1] == order[:1]
    assert late.delivery.deadline_passed and late.snapshots_emitted == 3
    loads.take()
    with LineageServer() as server:
        again = scan_to(server, sql_catalog, state_path, tmp_path)
        assert (server.received, again.unchanged, loads.take()) == ([], 1, 0)  # spooled is sent: nothing missing
        assert replay(tmp_path / "spool", http_client(server.url, **FAST)) == ReplayResult(4, 0)
        assert snapshots_sent(server) == order[1:]


def test_rejected_events_count_as_sent_and_are_not_sent_again(sql_catalog, state_path, tmp_path, monkeypatch):
    write_table(sql_catalog, "db.t", 2)
    loads = Loads(spec_of(sql_catalog), monkeypatch)
    with LineageServer(script=lambda _n, _body: Answer(400)) as refusing:
        refused = scan_to(refusing, sql_catalog, state_path, tmp_path)
    assert refused.events_rejected >= 1 and refused.exit_code == 1
    loads.take()
    with LineageServer() as server:
        again = scan_to(server, sql_catalog, state_path, tmp_path)
        assert (server.received, again.unchanged, again.exit_code, loads.take()) == ([], 1, 0, 0)


def test_current_mode_then_history_sends_the_whole_history(sql_catalog, state_path, tmp_path, monkeypatch):
    table = write_table(sql_catalog, "db.t", 3)
    loads = Loads(spec_of(sql_catalog), monkeypatch)
    with LineageServer() as server:
        scan_to(server, sql_catalog, state_path, tmp_path, mode="current")
        [dataset_event] = server.events()
        server.clear()
        assert dataset_event["dataset"]["facets"]["version"]["datasetVersion"] == str(in_order(table)[-1])
        assert loads.take() == 1
        history = scan_to(server, sql_catalog, state_path, tmp_path)
        assert snapshots_sent(server) == in_order(table) and history.snapshots_emitted == 3 and loads.take() == 1
        for mode in ("history", "current"):  # each mode has its own mark, at the same location
            assert scan_to(server, sql_catalog, state_path, tmp_path, mode=mode).unchanged == 1
            assert (server.received, loads.take()) == ([], 0)


def test_since_leaves_the_table_unmarked(sql_catalog, state_path, tmp_path):
    table = write_table(sql_catalog, "db.t", 3)
    order = in_order(table)
    newest = table.refresh().snapshot_by_id(order[-1]).timestamp_ms
    with LineageServer() as server:
        scan_to(server, sql_catalog, state_path, tmp_path, since_ms=newest)
        assert snapshots_sent(server) == order[-1:]
        scan_to(server, sql_catalog, state_path, tmp_path)
        assert snapshots_sent(server) == order[:-1]


def test_a_table_replaced_by_register_table_is_loaded_and_its_history_sent(
        sql_catalog, state_path, tmp_path, monkeypatch
):
    from pyiceberg.catalog.sql import SqlCatalog

    write_table(sql_catalog, "db.t", 2)
    # another catalog in the same database: its tables are not listed by ours
    elsewhere = SqlCatalog("elsewhere", **sql_catalog.properties)
    other = write_table(elsewhere, "db.other", 3)
    loads = Loads(spec_of(sql_catalog), monkeypatch)
    with LineageServer() as server:
        scan_to(server, sql_catalog, state_path, tmp_path)
        server.clear()
        sql_catalog.drop_table("db.t")
        sql_catalog.register_table("db.t", other.metadata_location)
        loads.take()
        scan_to(server, sql_catalog, state_path, tmp_path)
        assert snapshots_sent(server) == in_order(other) and loads.take() == 1
        assert scan_to(server, sql_catalog, state_path, tmp_path).unchanged == 1
        assert (server.received, loads.take()) == ([], 0)


def test_a_table_dropped_and_created_again_under_its_name_is_sent_once(sql_catalog, state_path, tmp_path, monkeypatch):
    write_table(sql_catalog, "db.t", 2)
    loads = Loads(spec_of(sql_catalog), monkeypatch)
    with LineageServer() as server:
        scan_to(server, sql_catalog, state_path, tmp_path)
        server.clear()
        sql_catalog.drop_table("db.t")
        again = write_table(sql_catalog, "db.t", 1, start=500)
        loads.take()
        scan_to(server, sql_catalog, state_path, tmp_path)
        assert snapshots_sent(server) == in_order(again) and loads.take() == 1
        assert scan_to(server, sql_catalog, state_path, tmp_path).unchanged == 1
        assert (server.received, loads.take()) == ([], 0)


def test_a_renamed_table_gets_its_rename_then_is_skipped_under_its_new_name(
        sql_catalog, state_path, tmp_path, monkeypatch
):
    write_table(sql_catalog, "db.old", 2)
    loads = Loads(spec_of(sql_catalog), monkeypatch)
    with LineageServer() as server:
        scan_to(server, sql_catalog, state_path, tmp_path)
        server.clear()
        sql_catalog.rename_table("db.old", "db.new")
        loads.take()
        renamed = scan_to(server, sql_catalog, state_path, tmp_path)
        assert [lifecycle(e) for e in server.events() if e["eventType"] != "START"] == ["RENAME"]
        # two loads: the table's task, and the RENAME event's own load of the table under its new name
        assert (renamed.renames, renamed.snapshots_emitted, loads.take()) == (1, 0, 2)
        server.clear()
        assert scan_to(server, sql_catalog, state_path, tmp_path).unchanged == 1
        assert (server.received, loads.take()) == ([], 0)


def test_a_new_destination_forgets_the_marks(sql_catalog, state_path, tmp_path):
    from iceberg_lineage.scan.destination import check_destination
    from iceberg_lineage.scan.discovery import TableFilter

    table = write_table(sql_catalog, "db.t", 2)
    with LineageServer() as server:
        scan_to(server, sql_catalog, state_path, tmp_path)
        server.clear()
        with StateStore(state_path) as state:
            check_destination(state, ["test"], TableFilter(), "http http://a", accept=True)
            check_destination(state, ["test"], TableFilter(), "http http://b", accept=True)
        scan_to(server, sql_catalog, state_path, tmp_path)
        assert snapshots_sent(server) == in_order(table)


def test_a_table_under_two_names_is_sent_once_when_one_name_is_skipped(sql_catalog, state_path, tmp_path):
    table = write_table(sql_catalog, "db.main_name", 2)
    sql_catalog.register_table(("db", "alias"), table.metadata_location)
    with LineageServer() as server:
        first = scan_to(server, sql_catalog, state_path, tmp_path)
        assert sorted(snapshots_sent(server)) == sorted(in_order(table)) and first.renames == 0
        for _ in range(2):
            again = scan_to(server, sql_catalog, state_path, tmp_path)
            assert (server.received, again.renames, again.drops, again.unchanged) == ([], 0, 0, 2)


def test_another_catalog_implementation_is_loaded_every_time(sql_catalog, state_path, tmp_path, monkeypatch):
    write_table(sql_catalog, "db.a", 1)
    write_table(sql_catalog, "db.b", 2)
    # a subclass of SqlCatalog may keep its tables elsewhere: its listing gives no location
    spec = CatalogSpec.of("test", {"py-catalog-impl": "tests.faults.stuck_catalog.StuckCatalog",
                                   **sql_catalog.properties})
    loads = Loads(spec, monkeypatch)
    with LineageServer() as server:
        for sent in (3, 0):
            settings = Settings().updated({"spool.path": str(tmp_path / "spool")})
            delivery = Delivery(http_client(server.url, **FAST), settings)
            with StateStore(state_path) as state:
                summary = scan(ScanOptions(catalogs=(spec,)), settings, state, delivery_sink(delivery))
            delivery.close()
            assert (len(snapshots_sent(server)), summary.exit_code, loads.take()) == (sent, 0, 2)


RESCAN_PROBE = """
import json, sys
from pathlib import Path
from iceberg_lineage.config import Settings
from iceberg_lineage.read.catalogs import CatalogSpec
from iceberg_lineage.scan.driver import ScanOptions, scan
from iceberg_lineage.scan.sinks import event_sink
from iceberg_lineage.state.store import StateStore

sent = []
with StateStore(Path(sys.argv[2])) as state:
    summary = scan(ScanOptions(catalogs=(CatalogSpec.of(sys.argv[3], json.loads(sys.argv[1])),), executor="processes"),
                   Settings(), state, event_sink(lambda text: sent.append(text) or "delivered"))
loaded = sorted(m for m in sys.modules if m in ("iceberg_lineage.scan.task", "iceberg_lineage.scan.lifecycle",
                                                "openlineage.client", "concurrent.futures.process"))
print(json.dumps([summary.unchanged, summary.tables_scanned, len(sent), loaded]))
"""


def test_a_rescan_with_nothing_changed_starts_no_worker_and_imports_nothing_of_loading(
        sql_catalog, state_path, tmp_path, monkeypatch
):
    """The executor (here a process pool) opens at the first table to load, and the table task, lifecycle events and
    openlineage-python are imported where they are used: a rescan that skips every table needs none of them. Seen
    in a fresh process; the same probe after a commit loads the changed table, so it does see the pool and the task."""
    import subprocess
    import sys

    for name in ("a", "b"):
        write_table(sql_catalog, f"db.{name}", 2)
    with StateStore(state_path) as state:
        first = scan(ScanOptions(catalogs=(spec_of(sql_catalog),)), Settings(), state,
                     event_sink(lambda text: "delivered"))
    assert (first.updated, first.snapshots_emitted) == (2, 4)

    def probe() -> list:
        out = subprocess.run([sys.executable, "-c", RESCAN_PROBE, json.dumps({"type": "sql", **sql_catalog.properties}),
                              str(state_path), sql_catalog.name], capture_output=True, text=True, timeout=120, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    assert probe() == [2, 2, 0, []]
    write_table(sql_catalog, "db.b", 1, start=100)
    # the driver builds a task and opens the pool; the worker process builds the events
    assert probe() == [1, 2, 2, ["concurrent.futures.process", "iceberg_lineage.scan.task"]]


def test_a_wrong_executor_option_fails_before_any_table_is_listed():
    with pytest.raises(ConfigError, match="--workers must be at least 1"):
        ScanOptions(catalogs=(), workers=0)
    with pytest.raises(ConfigError, match="--dask-scheduler needs --executor dask"):
        ScanOptions(catalogs=(), dask_scheduler="tcp://127.0.0.1:1")
