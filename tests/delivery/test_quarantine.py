"""A poisoned event cannot block the spool forever, and nothing overtakes it (hardening issue, item 4): rejections
are counted per event, the events of its run and datasets stay behind it, and after ``spool.max_rejections`` it
moves to the quarantine. Old spool files are migrated in place."""
from __future__ import annotations

import datetime as dt
import json
import sqlite3
from uuid import uuid4

import pytest
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.serde import Serde

from iceberg_lineage.delivery.delivery import Delivery
from iceberg_lineage.delivery.replay import ReplayResult, replay
from iceberg_lineage.delivery.spool import DB_NAME, Spool
from tests.support.delivery import Answer, free_port, http_client, key

ONCE = {"total": 0}

#: The spool's schema before this change (user_version 0), as released.
OLD_DDL = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT,
    event_type TEXT,
    enqueued_at TEXT NOT NULL,
    size INTEGER NOT NULL,
    body TEXT NOT NULL
)
"""


def event(state: RunState, run_id: str, inputs: tuple[str, ...] = (), outputs: tuple[str, ...] = ()) -> RunEvent:
    return RunEvent(
        eventType=state,
        eventTime=dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.timezone.utc).isoformat(),
        run=Run(runId=run_id),
        job=Job(namespace="iceberg-lineage-tests", name="db.orders.spark"),
        producer="https://github.com/example/iceberg-lineage/tests",
        inputs=[InputDataset(namespace="s3://lake", name=n) for n in inputs],
        outputs=[OutputDataset(namespace="s3://lake", name=n) for n in outputs],
    )


def spool_down(settings, events) -> None:
    """Spool ``events`` as a down server leaves them (no rejection counted)."""
    delivery = Delivery(http_client(f"http://127.0.0.1:{free_port()}", **ONCE), settings)
    assert {r.status for r in delivery.emit_many(events)} == {"spooled"}
    delivery.close()


def rows(settings):
    with Spool(settings.spool.path) as spool:
        return spool.read(0, 1000), spool.quarantined()


def test_a_rejected_event_holds_back_its_run_and_datasets_until_quarantined(serve, settings):
    a, b, c, d = (str(uuid4()) for _ in range(4))
    events = [
        event(RunState.START, a, outputs=("orders",)),   # poisoned
        event(RunState.COMPLETE, a, outputs=("orders",)),  # same run: behind it
        event(RunState.START, b, outputs=("customers",)),
        event(RunState.COMPLETE, b, outputs=("customers",)),
        event(RunState.COMPLETE, c, inputs=("orders",), outputs=("report",)),  # same dataset: behind it
        event(RunState.COMPLETE, d, inputs=("report",)),  # shares a dataset with c, which is held: behind it too
        event(RunState.COMPLETE, str(uuid4()), outputs=("other",)),
    ]
    keys = [key(Serde.to_json(e)) for e in events]
    spool_down(settings, events)
    poison = keys[0]
    server = serve(script=lambda n, body: Answer(400 if key(body) == poison else 200))
    client = http_client(server.url, **ONCE)

    first = replay(settings.spool.path, client)

    assert first == ReplayResult(3, 4, "HTTPError: HTTP 400", 0)
    assert [key(b) for b in server.accepted] == [keys[2], keys[3], keys[6]]
    waiting, quarantined = rows(settings)
    assert [(r.run_id, r.event_type) for r in waiting] == [keys[0], keys[1], keys[4], keys[5]]
    assert [r.attempts for r in waiting] == [1, 0, 0, 0] and waiting[0].last_error == "HTTPError: HTTP 400"
    assert waiting[0].datasets == (("s3://lake", "orders"),) and not quarantined

    for n in range(2, 5):  # rejected 2, 3, 4 times: still blocking
        assert replay(settings.spool.path, client) == ReplayResult(0, 4, "HTTPError: HTTP 400", 0)
    assert rows(settings)[0][0].attempts == 4
    fifth = replay(settings.spool.path, client)  # the default spool.max_rejections is 5

    assert fifth == ReplayResult(3, 0, "HTTPError: HTTP 400", 1)
    assert [key(b) for b in server.accepted] == [keys[2], keys[3], keys[6], keys[1], keys[4], keys[5]]
    assert sum(key(b) == poison for b in server.received) == 5
    waiting, quarantined = rows(settings)
    assert waiting == [] and [(q.seq, q.run_id, q.event_type, q.attempts) for q in quarantined] == [
        (1, *poison, 5)
    ]
    assert quarantined[0].destination == f"http {server.url}"


@pytest.mark.parametrize("status", [408, 429])
def test_a_transient_4xx_stops_the_replay_and_counts_no_rejection(serve, settings, status):
    events = [event(RunState.START, str(uuid4())) for _ in range(3)]
    spool_down(settings, events)
    server = serve(script=lambda n, _body: Answer(status))

    result = replay(settings.spool.path, http_client(server.url, **ONCE), max_rejections=1)

    assert result.delivered == 0 and result.remaining == 3 and result.quarantined == 0
    assert len(server.received) == 1
    assert [r.attempts for r in rows(settings)[0]] == [0, 0, 0]


def test_the_rejection_by_the_first_send_counts(serve, settings):
    server = serve(script=lambda n, _body: Answer(400))
    url = server.url
    two = settings.updated({"spool.max_rejections": 2})
    delivery = Delivery(http_client(url, **ONCE), two)

    assert delivery.emit(event(RunState.START, str(uuid4()))).status == "spooled"
    (row,), _ = rows(settings)
    assert (row.attempts, row.last_error, row.destination) == (1, "HTTPError: HTTP 400", f"http {url}")

    assert replay(settings.spool.path, http_client(url, **ONCE), max_rejections=2) == ReplayResult(
        0, 0, "HTTPError: HTTP 400", 1
    )
    one = settings.updated({"spool.max_rejections": 1})
    assert Delivery(http_client(url, **ONCE), one).emit(event(RunState.START, str(uuid4()))).status == "spooled"
    waiting, quarantined = rows(settings)
    assert waiting == [] and [q.attempts for q in quarantined] == [2, 1]
    assert len(server.received) == 3


def test_retry_puts_quarantined_events_back_at_their_place_and_drop_deletes_one(serve, settings):
    runs = [str(uuid4()) for _ in range(4)]
    spool_down(settings, [event(RunState.START, r) for r in runs])
    with Spool(settings.spool.path) as spool:
        assert spool.reject(1, "HTTPError: HTTP 400", max_rejections=1)
        assert spool.reject(3, "HTTPError: HTTP 400", max_rejections=1)
        assert not spool.reject(4, "HTTPError: HTTP 413", max_rejections=2)
        assert (spool.count(), spool.quarantine_count()) == (2, 2)
        assert spool.drop(3) and not spool.drop(3) and not spool.drop(2)  # 2 waits in the queue: not droppable
        assert spool.retry_quarantined() == 1
        assert [(r.seq, r.attempts) for r in spool.read(0, 10)] == [(1, 0), (2, 0), (4, 1)]
        assert spool.quarantine_count() == 0
    server = serve()
    assert replay(settings.spool.path, http_client(server.url, **ONCE)) == ReplayResult(3, 0)
    assert [json.loads(b)["run"]["runId"] for b in server.accepted] == [runs[0], runs[1], runs[3]]


def test_an_old_spool_file_is_migrated_in_place_and_still_replays(serve, settings, tmp_path):
    events = [event(RunState.START, str(uuid4()), outputs=("orders",)), event(RunState.COMPLETE, str(uuid4()))]
    bodies = [Serde.to_json(e) for e in events]
    directory = tmp_path / "spool"
    directory.mkdir()
    old = sqlite3.connect(directory / DB_NAME, isolation_level=None)
    old.execute("PRAGMA journal_mode=WAL")
    old.execute(OLD_DDL)
    for body in bodies:
        doc = json.loads(body)
        old.execute("INSERT INTO events (run_id, event_type, enqueued_at, size, body) VALUES (?, ?, ?, ?, ?)",
                    (doc["run"]["runId"], doc["eventType"], "2026-11-29T12:00:00+00:00", len(body), body))
    old.close()

    waiting, quarantined = rows(settings)

    assert [r.body for r in waiting] == bodies and quarantined == []
    assert waiting[0].datasets == (("s3://lake", "orders"),) and waiting[1].datasets == ()
    assert [(r.attempts, r.last_error, r.destination) for r in waiting] == [(0, None, None)] * 2
    db = sqlite3.connect(directory / DB_NAME)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 1
    db.close()
    Spool(directory).close()  # opening a migrated spool again changes nothing
    server = serve()
    assert replay(settings.spool.path, http_client(server.url, **ONCE)) == ReplayResult(2, 0)
    assert [b.decode() for b in server.accepted] == bodies


def test_a_dataset_event_is_keyed_by_its_dataset(settings):
    from openlineage.client.event_v2 import DatasetEvent, StaticDataset

    doc = DatasetEvent(eventTime="2026-11-29T12:00:00+00:00", producer="https://example.com/t",
                       dataset=StaticDataset(namespace="s3://lake", name="orders"))
    with Spool(settings.spool.path) as spool:
        spool.append(Serde.to_json(doc), None, None)
        (row,) = spool.read()
    assert row.datasets == (("s3://lake", "orders"),)


def test_an_undecodable_spooled_row_is_quarantined_and_the_rest_delivered_in_order(serve, settings, caplog):
    """Issue 31 6b: a first row that is not JSON, or is 100,000-deep JSON, or JSON but not an object, used to stop
    every replay (JSONDecodeError, RecursionError)."""
    later = [event(RunState.START, str(uuid4())), event(RunState.COMPLETE, str(uuid4()))]
    bad = ["not json {", "[" * 100_000 + "]" * 100_000, '"a string"']
    with Spool(settings.spool.path) as spool:
        for body in bad:
            assert spool.append(body)
        for e in later:
            assert spool.append(Serde.to_json(e), str(e.run.runId), e.eventType.value)
    server = serve()

    with caplog.at_level("WARNING", logger="iceberg_lineage.delivery.replay"):
        result = replay(settings.spool.path, http_client(server.url))

    assert result == ReplayResult(2, 0, None, 3)
    assert [key(b) for b in server.accepted] == [key(Serde.to_json(e)) for e in later]
    with Spool(settings.spool.path) as spool:
        kept = spool.quarantined()
    assert [q.body for q in kept] == bad and {q.last_error for q in kept} == {"undecodable: not a JSON object"}
    assert [r.getMessage() for r in caplog.records] == [
        f"spooled event {seq} is not a JSON object: moved to the quarantine, the rest goes on" for seq in (1, 2, 3)]
