"""JSON value types, declared once so modules can say "arbitrary JSON" without falling back to ``Any``."""

from __future__ import annotations

from typing import Union

#: Every value ``json.loads`` can return (and ``json.dumps`` can write).
Json = Union[dict[str, "Json"], list["Json"], str, int, float, bool, None]
#: A JSON object: metadata files, facets, event bodies.
JsonObject = dict[str, Json]
