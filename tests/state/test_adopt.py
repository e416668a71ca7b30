"""Upgrading (issue 28): the state, spool and events used to default to ``./.iceberg-lineage``; the first run with
the per-user defaults adopts that folder, sends nothing again, and the events waiting in the old spool are replayed
from the new place."""
from __future__ import annotations

import json
import sqlite3

from click.testing import CliRunner
from tests.support.lineage_server import LineageServer
from tests.support.olschema import validate_event
from tests.support.scan import catalog_env, cli, snapshot_ids, write_table

from iceberg_lineage.cli import main
from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.spool import Spool
from iceberg_lineage.state.adopt import adopt_legacy_state

#: How the old defaults are spelled out for an old-layout scan.
OLD_STATE = ".iceberg-lineage/state.db"
OLD_SPOOL = ".iceberg-lineage/spool"


def summary_of(stderr: str) -> dict:
    return json.loads(stderr.strip().splitlines()[-1])


def test_a_real_scan_adopts_the_old_folder_and_sends_nothing_again(sql_catalog, tmp_path, user_state, monkeypatch):
    table = write_table(sql_catalog, "db.t", 3)
    first_three = [s.snapshot_id for s in table.snapshots()]
    with LineageServer() as server:
        env = {**catalog_env(sql_catalog), "OPENLINEAGE_URL": server.url}
        old = {**env, "ICEBERG_LINEAGE__SPOOL__PATH": OLD_SPOOL}

        # the old layout: delivered, then two more commits spooled (the delivery deadline passes at once)
        delivered = cli("--state", OLD_STATE, "--format", "json", "--no-progress", env=old, cwd=tmp_path)
        assert delivered.returncode == 0, delivered.stderr
        assert snapshot_ids([e for e in server.events() if e["outputs"]]) == first_three
        table = write_table(sql_catalog, "db.t", 2, start=100).refresh()
        newest = [s.snapshot_id for s in table.snapshots()][3:]
        spooling = cli("--state", OLD_STATE, "--format", "json", "--no-progress", cwd=tmp_path,
                       env={**old, "ICEBERG_LINEAGE__SCAN__DELIVERY_DEADLINE_S": "1e-9"})
        assert spooling.returncode == 3, spooling.stderr  # done, events wait in the spool
        with Spool(tmp_path / OLD_SPOOL) as spool:
            waiting = spool.count()
        assert waiting == 2 * 2 + 2  # START and COMPLETE of each new snapshot, and of the scan's own run
        assert not user_state.exists()
        server.clear()

        # the defaults: the old folder is adopted, nothing is sent again
        upgraded = cli("--format", "json", "--no-progress", env=env, cwd=tmp_path)
        assert upgraded.returncode == 0, upgraded.stderr
        adopted = [line for line in upgraded.stderr.splitlines() if "adopted" in line]
        assert adopted == [f"iceberg-lineage: adopted the state and the spool of {tmp_path / '.iceberg-lineage'} into "
                           f"{user_state} (state now lives per user, whatever the current directory; the old folder is "
                           "left as it was)"]
        assert summary_of(upgraded.stderr)["snapshots"]["emitted"] == 0
        assert [(e["eventType"], e["job"]["name"]) for e in server.events()] == [
            ("START", "iceberg-lineage.scan"), ("COMPLETE", "iceberg-lineage.scan")]  # only the scan's own run
        with Spool(user_state / "spool") as spool:
            assert spool.count() == waiting
        server.clear()

        # what waited in the old spool is replayed from the new place
        monkeypatch.setenv("OPENLINEAGE_URL", server.url)
        replayed = CliRunner().invoke(main, ["replay"])
        assert replayed.exit_code == 0, replayed.output
        received = server.events()
        for event in received:
            validate_event(event)
        assert len(received) == waiting and snapshot_ids([e for e in received if e["outputs"]]) == newest
        with Spool(tmp_path / OLD_SPOOL) as spool:  # the old folder is left as it was
            assert spool.count() == waiting
        server.clear()

        again = cli("--format", "json", "--no-progress", env=env, cwd=tmp_path)
        assert again.returncode == 0 and "adopted" not in again.stderr
        assert summary_of(again.stderr)["snapshots"]["emitted"] == 0


def test_an_existing_per_user_state_is_never_replaced(tmp_path, user_state):
    (tmp_path / ".iceberg-lineage").mkdir()
    sqlite3.connect(tmp_path / OLD_STATE).execute("CREATE TABLE old (x)").connection.commit()
    user_state.mkdir(parents=True)
    sqlite3.connect(user_state / "state.db").execute("CREATE TABLE mine (x)").connection.commit()

    assert adopt_legacy_state(Settings()) is None
    tables = sqlite3.connect(user_state / "state.db").execute("SELECT name FROM sqlite_master").fetchall()
    assert tables == [("mine",)]


def test_an_explicit_state_path_adopts_nothing(tmp_path, user_state):
    (tmp_path / ".iceberg-lineage").mkdir()
    sqlite3.connect(tmp_path / OLD_STATE).execute("CREATE TABLE old (x)").connection.commit()

    assert adopt_legacy_state(Settings().updated({"state.path": str(tmp_path / "mine.db")})) is None
    assert not user_state.exists()


def test_a_hooked_process_adopts_the_old_folder_before_writing_its_own(sql_catalog, tmp_path, user_state, caplog):
    """A hook that ran first would otherwise start a per-user state of its own, and the next scan adopt nothing."""
    from iceberg_lineage.hook import observe
    from iceberg_lineage.state.store import EmittedSnapshot, StateStore, TrackedTable

    with StateStore(tmp_path / OLD_STATE) as old:
        old.record(TrackedTable("uuid-1", "test", ("db", "t"), "/w/t", None), (EmittedSnapshot(1, 1, 1, "scan", "r"),))

    observe(sql_catalog)
    with StateStore(user_state / "state.db", readonly=True) as state:
        assert state.watermark("uuid-1").emitted == {1}
    assert [r.getMessage() for r in caplog.records if "adopted" in r.getMessage()] == [
        f"adopted the state of {tmp_path / '.iceberg-lineage'} into {user_state} (state now lives per user, whatever "
        "the current directory; the old folder is left as it was)"]
