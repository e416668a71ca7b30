"""The state store's table rows: a recorded :class:`TrackedTable` reads back as it was written, a row recorded
without a current snapshot keeps the one recorded before, and a dropped table is no longer found by name."""
from __future__ import annotations

from iceberg_lineage.state.store import EmittedSnapshot, StateStore, TrackedTable

ORDERS = TrackedTable("uuid-1", "lake", ("db", "orders"), "/w/orders", "/w/orders/metadata/1.json", 11)


def test_a_recorded_table_reads_back_with_its_snapshots(tmp_path):
    emitted = (EmittedSnapshot(11, 1, 1000, "scan", "run-11"), EmittedSnapshot(10, 0, 900, "hook", None))
    with StateStore(tmp_path / "state.db") as state:
        state.record(ORDERS, emitted)
    with StateStore(tmp_path / "state.db", readonly=True) as state:
        assert state.get("uuid-1") == ORDERS
        assert state.find("lake", ("db", "orders")) == ORDERS and list(state.tables("lake")) == [ORDERS]
        assert state.emitted("uuid-1") == [emitted[1], emitted[0]]  # in commit order
        assert (state.watermark("uuid-1").emitted, state.watermark("uuid-1").last_sequence_number) == ({10, 11}, 1)


def test_no_current_snapshot_keeps_the_recorded_one_and_a_drop_hides_the_name(tmp_path):
    later = TrackedTable("uuid-1", "lake", ("db", "orders"), "/w/orders", "/w/orders/metadata/2.json")
    with StateStore(tmp_path / "state.db") as state:
        state.record(ORDERS)
        state.record(later)
        assert state.get("uuid-1") == TrackedTable("uuid-1", "lake", ("db", "orders"), "/w/orders",
                                                   "/w/orders/metadata/2.json", 11, False)
        state.mark_dropped("uuid-1")
        assert state.find("lake", ("db", "orders")) is None and list(state.tables("lake")) == []
        assert state.get("uuid-1").dropped is True
        state.record(later)  # seen again under its name: live again
        assert state.find("lake", ("db", "orders")).dropped is False


def test_a_batch_writes_its_records_together_at_its_end_even_when_it_raises(tmp_path):
    """Issue 32: one transaction per batch of tables, written after their events were sent."""
    customers = TrackedTable("uuid-2", "lake", ("db", "customers"), "/w/customers", "/w/customers/metadata/1.json")
    emitted = (EmittedSnapshot(11, 1, 1000, "scan", "run-11"),)
    with StateStore(tmp_path / "state.db") as state:
        with state.batch():
            state.record(ORDERS, emitted)
            state.record(customers)
            assert state.get("uuid-1") is None  # not written yet
            with StateStore(tmp_path / "state.db", readonly=True) as reader:
                assert list(reader.tables("lake")) == []
        assert sorted(state.tables("lake"), key=lambda t: t.identity) == [ORDERS, customers]
        assert state.emitted("uuid-1") == list(emitted)
        later = TrackedTable("uuid-2", "lake", ("db", "customers"), "/w/customers", "/w/customers/metadata/2.json")
        try:
            with state.batch():
                state.record(later)
                raise KeyboardInterrupt
        except KeyboardInterrupt:
            pass
        assert state.get("uuid-2") == later  # delivered before the interruption: recorded


def test_a_batch_with_limits_writes_as_it_goes(tmp_path, monkeypatch):
    """A whole scan's batch (``tables``, ``seconds``): written at every ``tables``-th record, at the first record
    ``seconds`` after its last write, and at its end; a batch inside it is part of it."""
    import iceberg_lineage.state.store as store

    clock = [100.0]
    monkeypatch.setattr(store.time, "monotonic", lambda: clock[0])
    tables = [TrackedTable(f"uuid-{i}", "lake", ("db", f"t{i}"), f"/w/t{i}", f"/w/t{i}/metadata/1.json")
              for i in range(6)]

    def written() -> list[str]:
        with StateStore(tmp_path / "state.db", readonly=True) as reader:
            return sorted(t.identity for t in reader.tables("lake"))

    with StateStore(tmp_path / "state.db") as state:
        with state.batch(tables=2, seconds=5.0):
            state.record(tables[0])
            assert written() == []
            with state.batch():
                state.record(tables[1])  # the second: both written
            assert written() == ["uuid-0", "uuid-1"]
            state.record(tables[2])
            clock[0] += 4.9
            state.record(tables[3])  # the second since the write: written
            assert written() == ["uuid-0", "uuid-1", "uuid-2", "uuid-3"]
            state.record(tables[4])
            assert written() == ["uuid-0", "uuid-1", "uuid-2", "uuid-3"]
        assert written() == [f"uuid-{i}" for i in range(5)]  # the rest at its end
        with state.batch(tables=10, seconds=5.0):
            state.record(tables[5])
            assert "uuid-5" not in written()
            clock[0] += 5.0
            state.record(tables[0])  # 5 s after the batch began: written
            assert "uuid-5" in written()
