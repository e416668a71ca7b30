"""The ``jobs`` report's options as values: ``--max-failure-rate 5%``, ``--job GLOB`` (``--since 7d``:
:func:`iceberg_lineage.times.parse_since`).

The same strings work in the CLI and in ``jobs(...)`` in a notebook; a bad one is a ``ValueError`` naming the
option (the CLI's exit 2)."""
from __future__ import annotations

import fnmatch
from typing import Sequence


def parse_rate(value: str | float | None) -> float | None:
    """``5%`` or ``0.05`` (a fraction from 0 to 1) -> 0.05; ``5`` is refused rather than guessed."""
    if value is None:
        return None
    rate = value
    if isinstance(value, str):
        text = value.strip()
        try:
            rate = float(text.removesuffix("%")) / (100 if text.endswith("%") else 1)
        except ValueError:
            rate = -1.0
    if not 0 <= rate <= 1:
        raise ValueError(f"--max-failure-rate: expected a percentage such as 5% or a fraction from 0 to 1 such as "
                         f"0.05, got {value!r}")
    return float(rate)


def job_selector(globs: Sequence[str]):
    """Whether a job is reported: no globs means every job; a glob with ``/`` matches ``namespace/name``, one
    without matches the name (case-sensitive)."""
    globs = tuple(globs)

    def selected(namespace: str, name: str) -> bool:
        return not globs or any(fnmatch.fnmatchcase(f"{namespace}/{name}" if "/" in g else name, g) for g in globs)

    return selected


__all__ = ["job_selector", "parse_rate"]
