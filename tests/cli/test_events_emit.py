"""``events --emit`` sends through ``Delivery``, the one delivery path (hardening issue, item 2): what the server
refuses or never sees is spooled, ``replay`` sends it, and the exit code says not everything was delivered: 3 when
the events wait in the spool, 1 when the server refused one for good (issue 28)."""
from __future__ import annotations

import socket
import struct
import threading

import pytest
from click.testing import CliRunner

from iceberg_lineage.cli import main
from iceberg_lineage.delivery.spool import Spool
from tests.support.delivery import Answer, LineageServer, free_port, key
from tests.support.fixture_tables import FIXTURES, fixture_relocation
from tests.support.userstate import USER_STATE

DV = "impala_spark_v3_deletion_vectors"
SPOOL = USER_STATE / "spool"


def use(monkeypatch, url: str) -> None:
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__TYPE", "http")
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__URL", url)
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__RETRY", '{"total": 0}')


def emit():
    relocate = [a for old, new in fixture_relocation(DV).items() for a in ("--relocate", f"{old}={new}")]
    return CliRunner().invoke(main, ["events", "--metadata", str(FIXTURES / DV), "--all-snapshots", "--emit",
                                     *relocate])


def spooled_keys() -> list[tuple[str, str]]:
    with Spool(SPOOL) as spool:
        return [(r.run_id, r.event_type) for r in spool.read(0, 100)]


def replay_into(server: LineageServer):
    result = CliRunner().invoke(main, ["replay"])
    assert result.exit_code == 0, result.output
    return [key(b) for b in server.accepted]


def test_a_down_server_leaves_the_events_in_the_spool_and_replay_sends_them(monkeypatch):
    port = free_port()
    use(monkeypatch, f"http://127.0.0.1:{port}")

    result = emit()

    assert result.exit_code == 3, result.output
    # two snapshots' runs, START and COMPLETE each
    assert "0 of 4 event(s) delivered" in result.stderr and "4 spooled" in result.stderr
    assert "iceberg-lineage replay" in result.stderr and "Traceback" not in result.output
    waiting = spooled_keys()
    assert len(waiting) == 4
    with LineageServer(port) as server:
        assert replay_into(server) == waiting


@pytest.mark.parametrize("status", [400, 413])
def test_a_rejected_event_is_spooled_with_its_rejection_counted(monkeypatch, status):
    with LineageServer(0, lambda n, _body: Answer(status if n == 0 else 200)) as server:
        use(monkeypatch, server.url)

        result = emit()

        assert result.exit_code == 1, result.output  # refused for good: a replay alone will not deliver it
        assert "0 of 4 event(s) delivered" in result.stderr and "4 spooled (1 refused" in result.stderr
        with Spool(SPOOL) as spool:
            rows = spool.read(0, 10)
        # the other events (same table) went to the spool untried, behind the rejected one
        assert [(r.attempts, r.last_error) for r in rows] == [(1, f"HTTPError: HTTP {status}")] + [(0, "not sent")] * 3
        assert len(server.received) == 1
        assert replay_into(server) == [(r.run_id, r.event_type) for r in rows]


class ResettingServer:
    """Accepts each connection and resets it at once (SO_LINGER 0): a connection reset by peer."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.resets = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.recv(1024)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()
            self.resets += 1

    def close(self) -> None:
        self.sock.close()


def test_a_connection_reset_spools_the_events(monkeypatch):
    resetting = ResettingServer()
    try:
        use(monkeypatch, resetting.url)
        result = emit()
    finally:
        resetting.close()

    assert result.exit_code == 3, result.output
    assert "0 of 4 event(s) delivered" in result.stderr and "4 spooled" in result.stderr
    assert resetting.resets == 1  # the rest of the batch went to the spool untried
    assert len(spooled_keys()) == 4


def test_every_event_delivered_exits_0(monkeypatch):
    with LineageServer() as server:
        use(monkeypatch, server.url)
        result = emit()
    assert result.exit_code == 0, result.output
    assert f"sent 4 event(s) to http {server.url}" in result.stderr  # two runs, START and COMPLETE each
    assert len(server.accepted) == 4 and not Spool.exists(SPOOL)
