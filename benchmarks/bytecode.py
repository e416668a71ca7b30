"""The environment of a benchmark's child processes: compiled bytecode, as an installed package has it.

A source checkout under ``PYTHONDONTWRITEBYTECODE=1`` (this machine's default) compiles every module of the package
at every start, about a third of ``iceberg-lineage --help``'s CPU time, which no installed user pays (pip compiles
on install). So children drop that variable and keep their bytecode in a folder of the run's own
(``PYTHONPYCACHEPREFIX``): the first child writes it, the later ones read it. A benchmark whose figure counts
imports warms the folder first.
"""
from __future__ import annotations

import os
from pathlib import Path


def compiled(folder: Path, **extra: str) -> dict[str, str]:
    """``os.environ`` with bytecode written to and read from ``folder``, and ``extra`` set."""
    env = dict(os.environ, PYTHONPYCACHEPREFIX=str(folder), **extra)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env
