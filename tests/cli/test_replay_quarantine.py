"""``iceberg-lineage replay``: the quarantine (``--list``, ``--retry-quarantined``, ``--drop``), exit codes 0/1/2,
and a spool that is not one (hardening issue, items 4 and 19)."""
from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from iceberg_lineage.cli import main
from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.delivery import Delivery
from iceberg_lineage.delivery.spool import DB_NAME, Spool
from tests.support.delivery import Answer, LineageServer, free_port, http_client, key, run_event

SPOOL = "spool"


@pytest.fixture
def server():
    with LineageServer(0, lambda n, _body: Answer(400)) as s:
        yield s


def use(monkeypatch, url: str) -> None:
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__TYPE", "http")
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__URL", url)
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__RETRY", '{"total": 0}')


def replay(*args: str):
    return CliRunner().invoke(main, ["replay", "--spool", SPOOL, *args])


def quarantine_one_and_queue_one(server) -> list:
    """One event quarantined at its first send (spool.max_rejections=1), one waiting behind a down server."""
    poisoned, waiting = run_event(), run_event()
    settings = Settings().updated({"spool.path": SPOOL, "spool.max_rejections": 1})
    assert Delivery(http_client(server.url, total=0), settings).emit(poisoned).status == "spooled"
    down = Delivery(http_client(f"http://127.0.0.1:{free_port()}", total=0), settings)
    assert down.emit(waiting).status == "spooled"
    return [poisoned, waiting]


def test_list_shows_the_quarantine_as_json_and_text(server, monkeypatch):
    poisoned, _ = quarantine_one_and_queue_one(server)
    use(monkeypatch, server.url)

    as_json = replay("--list", "--format", "json")
    as_text = replay("--list", "--format", "text")

    assert as_json.exit_code == 1, as_json.output  # something waits and something is quarantined
    doc = json.loads(as_json.stdout)
    assert doc["waiting"] == 1 and doc["spool"] == os.path.abspath(SPOOL)
    (entry,) = doc["quarantined"]
    assert {k: entry[k] for k in ("seq", "run_id", "event_type", "attempts", "last_error", "destination")} == {
        "seq": 1, "run_id": poisoned.run.runId, "event_type": "START", "attempts": 1,
        "last_error": "HTTPError: HTTP 400", "destination": f"http {server.url}",
    }
    assert entry["datasets"] == [] and entry["enqueued_at"] and entry["quarantined_at"]
    assert as_text.exit_code == 1
    assert poisoned.run.runId in as_text.stdout and "HTTPError: HTTP 400" in as_text.stdout
    assert "1 quarantined, 1 waiting" in as_text.stdout
    assert len(server.received) == 1  # --list sends nothing


def test_replay_exits_1_while_something_is_quarantined(server, monkeypatch):
    quarantine_one_and_queue_one(server)
    server.script = lambda n, _body: Answer(200)
    use(monkeypatch, server.url)

    result = replay()

    assert result.exit_code == 1, result.output
    assert "replay: 1 delivered, 0 remaining, 1 quarantined" in result.stderr
    assert "--list" in result.stderr


def test_retry_quarantined_sends_them_again_in_their_original_order(server, monkeypatch):
    events = quarantine_one_and_queue_one(server)
    server.script = lambda n, _body: Answer(200)
    server.clear()
    use(monkeypatch, server.url)

    result = replay("--retry-quarantined")

    assert result.exit_code == 0, result.output
    assert "1 put back from the quarantine" in result.stderr and "2 delivered, 0 remaining" in result.stderr
    assert [key(b) for b in server.accepted] == [(e.run.runId, "START") for e in events]
    with Spool(SPOOL) as spool:
        assert (spool.count(), spool.quarantine_count()) == (0, 0)


def test_drop_deletes_one_quarantined_event(server, monkeypatch):
    quarantine_one_and_queue_one(server)
    use(monkeypatch, server.url)

    unknown = replay("--drop", "2")  # seq 2 waits in the queue: not in the quarantine
    dropped = replay("--drop", "1")

    assert unknown.exit_code == 2 and "no quarantined event 2" in unknown.stderr
    assert len(unknown.stderr.splitlines()) == 1
    assert dropped.exit_code == 0 and "dropped quarantined event 1" in dropped.stderr
    with Spool(SPOOL) as spool:
        assert (spool.count(), spool.quarantine_count()) == (1, 0)
    assert len(server.received) == 1


@pytest.mark.parametrize(
    "args", [["--list", "--drop", "1"], ["--retry-quarantined", "--drop", "1"], ["--format", "json"]]
)
def test_usage_errors_exit_2(server, args):
    quarantine_one_and_queue_one(server)
    result = replay(*args)
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1 and "Traceback" not in result.output


def test_list_with_nothing_spooled_exits_0():
    result = CliRunner().invoke(main, ["replay", "--list", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["quarantined"] == []


def garbage(tmp_path):
    (tmp_path / SPOOL).mkdir()
    (tmp_path / SPOOL / DB_NAME).write_bytes(os.urandom(4096))
    return ["--spool", SPOOL], f"{SPOOL}/{DB_NAME}"


def a_file_as_spool_setting(tmp_path, monkeypatch):
    (tmp_path / "plain").write_text("x")
    monkeypatch.setenv("ICEBERG_LINEAGE__SPOOL__PATH", "plain")
    return [], "plain"


@pytest.mark.parametrize("args", [[], ["--list"], ["--retry-quarantined"], ["--drop", "1"]])
@pytest.mark.parametrize("broken", ["garbage", "file"])
def test_a_spool_that_is_not_one_is_one_line_and_exit_2(tmp_path, monkeypatch, args, broken):
    spool_args, path = garbage(tmp_path) if broken == "garbage" else a_file_as_spool_setting(tmp_path, monkeypatch)
    use(monkeypatch, f"http://127.0.0.1:{free_port()}")

    result = CliRunner().invoke(main, ["replay", *spool_args, *args])

    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert path in line and "Traceback" not in result.output
    assert ("not a SQLite database" if broken == "garbage" else "not a directory") in line


def test_quarantine_rule_follows_the_setting(server, monkeypatch):
    settings = Settings().updated({"spool.path": SPOOL})
    spooled = Delivery(http_client(f"http://127.0.0.1:{free_port()}", total=0), settings).emit(run_event())
    assert spooled.status == "spooled"
    use(monkeypatch, server.url)
    monkeypatch.setenv("ICEBERG_LINEAGE__SPOOL__MAX_REJECTIONS", "2")

    first, second = replay(), replay()

    assert "0 delivered, 1 remaining" in first.stderr and first.exit_code == 1
    assert "0 delivered, 0 remaining, 1 quarantined" in second.stderr and second.exit_code == 1
    assert len(server.received) == 2
    assert Settings().spool.max_rejections == 5  # the default
