"""How deep a snapshot is read: ``summary`` (its summary alone), ``manifest_list`` or ``entries`` (every manifest
entry). A module of its own so that what only names a depth (the scan driver checking ``--depth``) does not import
the statistics model."""
from __future__ import annotations

from typing import Literal

Depth = Literal["summary", "manifest_list", "entries"]
DEPTHS: tuple[Depth, ...] = ("summary", "manifest_list", "entries")


def depth_at_least(depth: Depth, wanted: Depth) -> bool:
    return DEPTHS.index(depth) >= DEPTHS.index(wanted)


__all__ = ["DEPTHS", "Depth", "depth_at_least"]
