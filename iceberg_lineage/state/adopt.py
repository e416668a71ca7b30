"""Upgrading from the per-folder layout: state, spool and events used to default to ``./.iceberg-lineage/``; they now
default to the per-user state folder (:func:`~iceberg_lineage.config.user_state_dir`).

The first run that finds no per-user state but an old ``./.iceberg-lineage/state.db`` in its working folder adopts
that folder: it copies the state (watermarks, ledger, destinations), the spool (undelivered events included) and the
default events file into the per-user folder, so nothing is sent again and nothing waiting is lost. The old folder is
left as it was. SQLite files are copied with SQLite's backup (a consistent copy, its WAL included) under a file lock,
and each copy is renamed into place only once complete: two processes adopting at once make one copy.
"""
from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

from filelock import FileLock

from iceberg_lineage.config import Settings, user_state_dir
from iceberg_lineage.config.sections import EVENTS_FILE_NAME
from iceberg_lineage.delivery.spool import DB_NAME

#: The folder the defaults used to name, relative to the working directory.
LEGACY_DIR = Path(".iceberg-lineage")
STATE_NAME = "state.db"
SPOOL_NAME = "spool"


def legacy_state(settings: Settings, cwd: Path | None = None) -> Path | None:
    """The old ``./.iceberg-lineage`` folder to adopt: when ``state.path`` is the per-user default, no state is there
    yet, and the working folder holds an old state file; else ``None``."""
    if Path(settings.state.path) != user_state_dir() / STATE_NAME or Path(settings.state.path).exists():
        return None
    legacy = (cwd or Path.cwd()) / LEGACY_DIR
    return legacy if (legacy / STATE_NAME).is_file() else None


def adopt_legacy_state(settings: Settings, cwd: Path | None = None) -> str | None:
    """Adopt the old folder (see the module); returns the one line to tell the user, or ``None`` when there was
    nothing to adopt."""
    legacy = legacy_state(settings, cwd)
    if legacy is None:
        return None
    target = user_state_dir()
    target.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target / "adopt.lock")):
        if legacy_state(settings, cwd) is None:  # another process adopted it meanwhile
            return None
        adopted = ["the state"]
        if _adopt_spool(legacy / SPOOL_NAME, Path(settings.spool.path)):
            adopted.append("the spool")
        if _adopt_file(legacy / EVENTS_FILE_NAME, target / EVENTS_FILE_NAME):
            adopted.append(EVENTS_FILE_NAME)
        _backup(legacy / STATE_NAME, Path(settings.state.path))  # last: its presence marks the adoption done
    left = "" if "the spool" in adopted or not (legacy / SPOOL_NAME).is_dir() else (
        f"; the old spool stays (a spool was here already): iceberg-lineage replay --spool {legacy / SPOOL_NAME}")
    what = ", ".join(adopted[:-1]) + " and " + adopted[-1] if len(adopted) > 1 else adopted[0]
    return (f"adopted {what} of {legacy} into {target} (state now lives per user, whatever the current "
            f"directory; the old folder is left as it was){left}")


def _adopt_spool(old: Path, new: Path) -> bool:
    """Copy the old spool's databases (the main one and the alerts') when the new spool is the default and absent."""
    if new != user_state_dir() / SPOOL_NAME or new.exists() or not old.is_dir():
        return False
    staging = new.with_name(new.name + ".adopting")
    shutil.rmtree(staging, ignore_errors=True)
    for db in old.rglob(DB_NAME):
        _backup(db, staging / db.relative_to(old))
    staging.mkdir(parents=True, exist_ok=True)
    os.replace(staging, new)
    return True


def _adopt_file(old: Path, new: Path) -> bool:
    if new.exists() or not old.is_file():
        return False
    staging = new.with_name(new.name + ".adopting")
    shutil.copyfile(old, staging)
    os.replace(staging, new)
    return True


def _backup(old: Path, new: Path) -> None:
    """A consistent copy of an SQLite file, renamed into place once complete."""
    new.parent.mkdir(parents=True, exist_ok=True)
    staging = new.with_name(new.name + ".adopting")
    staging.unlink(missing_ok=True)
    source, copy = sqlite3.connect(old), sqlite3.connect(staging)
    try:
        source.backup(copy)
    finally:
        copy.close()
        source.close()
    os.replace(staging, new)
