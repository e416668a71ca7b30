"""A spool that cannot be written is reported as what it is, once per outage, with its path (hardening issue,
items 3 and 19): never as "full (spool.max_bytes)", never as a traceback, and the event counts as failed."""
from __future__ import annotations

import errno
import logging
import os
import shutil
import sqlite3

import pytest

from iceberg_lineage.delivery.delivery import Delivery, DeliveryStats
from iceberg_lineage.delivery.spool import DB_NAME, Spool, SpoolError, spool_reason
from tests.support.delivery import free_port, http_client, run_event

LOGGER = "iceberg_lineage.delivery.delivery"


def parent_is_a_file(tmp_path):
    (tmp_path / "plain").write_text("x")
    return tmp_path / "plain" / "spool", "not a directory"


def path_is_a_file(tmp_path):
    (tmp_path / "spool").write_text("x")
    return tmp_path / "spool", "not a directory"


def garbage_database(tmp_path):
    (tmp_path / "spool").mkdir()
    (tmp_path / "spool" / DB_NAME).write_bytes(os.urandom(4096))
    return tmp_path / "spool", "not a SQLite database"


def no_space_left(tmp_path):
    """/dev/full answers every write with ENOSPC: a disk that is full, for real."""
    (tmp_path / "spool").mkdir()
    (tmp_path / "spool" / DB_NAME).symlink_to("/dev/full")
    return tmp_path / "spool", "no space left on device"


@pytest.mark.parametrize("broken", [parent_is_a_file, path_is_a_file, garbage_database, no_space_left])
def test_an_unwritable_spool_is_reported_once_with_its_path_and_its_reason(settings, tmp_path, caplog, broken):
    path, reason = broken(tmp_path)
    delivery = Delivery(http_client(f"http://127.0.0.1:{free_port()}", total=0),
                        settings.updated({"spool.path": str(path)}))

    with caplog.at_level(logging.DEBUG, logger="iceberg_lineage"):
        results = delivery.emit_many([run_event() for _ in range(3)])

    assert [r.status for r in results] == ["failed"] * 3
    assert delivery.stats == DeliveryStats(failed=3)
    assert all(reason in r.error and str(path) in r.error for r in results)
    errors = [r for r in caplog.records if r.levelno >= logging.WARNING and r.name.startswith("iceberg_lineage")]
    assert len(errors) == 1, [r.getMessage() for r in errors]
    message = errors[0].getMessage()
    assert str(path) in message and reason in message and errors[0].exc_info is None
    seen = " ".join(r.getMessage() for r in caplog.records) + " ".join(r.error for r in results)
    assert "full" not in seen.replace("no space left", "") and "max_bytes" not in seen


def test_a_new_outage_is_reported_again_after_the_spool_worked(settings, tmp_path, caplog):
    path, _ = parent_is_a_file(tmp_path)
    delivery = Delivery(http_client(f"http://127.0.0.1:{free_port()}", total=0),
                        settings.updated({"spool.path": str(path)}))
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        delivery.emit(run_event())
        (tmp_path / "plain").unlink()
        assert delivery.emit(run_event()).status == "spooled"  # repaired: the outage is over
        delivery.close()
        shutil.rmtree(tmp_path / "plain")
        (tmp_path / "plain").write_text("x")  # broken again: a new outage
        delivery.emit(run_event())
        delivery.emit(run_event())
    unusable = [r for r in caplog.records if "cannot write" in r.getMessage()]
    assert len(unusable) == 2


@pytest.mark.parametrize(
    ("exc", "reason"),
    [
        (OSError(errno.EROFS, "Read-only file system"), "read-only file system"),
        (PermissionError(errno.EACCES, "Permission denied"), "permission denied"),
        (PermissionError(errno.EPERM, "Operation not permitted"), "permission denied"),
        (OSError(errno.ENOSPC, "No space left on device"), "no space left on device"),
        (OSError(errno.EDQUOT, "Disk quota exceeded"), "disk quota exceeded"),
        (OSError(errno.EIO, "Input/output error"), "Input/output error"),
    ],
)
def test_os_errors_are_named_by_their_errno(exc, reason):
    assert spool_reason(exc) == reason


def _sqlite_error(code: int, message: str) -> sqlite3.Error:
    exc = sqlite3.OperationalError(message)
    exc.sqlite_errorcode = code
    return exc


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (8, "read-only"),                        # SQLITE_READONLY
        (8 | (5 << 8), "read-only"),             # SQLITE_READONLY_DBMOVED: extended codes map to their primary
        (3, "permission denied"),                # SQLITE_PERM
        (13, "no space left on device"),         # SQLITE_FULL
        (14, "cannot open"),                     # SQLITE_CANTOPEN
        (26, "not a SQLite database"),           # SQLITE_NOTADB
        (11, "corrupt"),                         # SQLITE_CORRUPT
        (10 | (4 << 8), "I/O error"),            # SQLITE_IOERR_FSYNC
    ],
)
def test_sqlite_errors_are_named_by_their_code(code, reason):
    assert reason in spool_reason(_sqlite_error(code, "whatever sqlite says"))


def test_the_spool_raises_a_typed_error_naming_the_path(tmp_path):
    (tmp_path / "spool").write_text("x")
    with pytest.raises(SpoolError) as caught:
        Spool(tmp_path / "spool")
    assert caught.value.file == str(tmp_path / "spool") and caught.value.reason == "not a directory"


def test_the_hooks_emitter_reports_an_event_the_spool_could_not_keep(settings, tmp_path, caplog, monkeypatch):
    from iceberg_lineage.delivery import emitter as emitter_module
    from iceberg_lineage.delivery.emitter import Emitter
    from iceberg_lineage.delivery.failure_log import FailureLog

    # "once" is per process: a failure an earlier test's emitter logged must not hide this one
    monkeypatch.setattr(emitter_module, "log_once", FailureLog(emitter_module.LOG))

    path, reason = garbage_database(tmp_path)
    delivery = Delivery(http_client(f"http://127.0.0.1:{free_port()}", total=0),
                        settings.updated({"spool.path": str(path)}))
    emitter = Emitter(delivery)

    with caplog.at_level(logging.WARNING, logger="iceberg_lineage"):
        for _ in range(3):
            emitter.submit(run_event())
        assert emitter.flush(30)

    assert delivery.stats == DeliveryStats(failed=3)
    ours = [r.getMessage() for r in caplog.records if r.name.startswith("iceberg_lineage")]
    assert len(ours) == 2, ours  # the delivery's, naming path and reason, and the hook's: once each, not per event
    assert all(reason in m and str(path) in m for m in ours)
    assert "Traceback" not in caplog.text and "max_bytes" not in caplog.text
