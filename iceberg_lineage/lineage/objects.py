"""Reading and copying the parts of an event the same way whether a facet is openlineage-python's object or a plain
dict (the events a scanner worker built keep their facets as dicts): what the shaping steps use instead of a JSON
round trip. A copy never changes the original (:func:`attr.evolve`)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, Union

import attr
from openlineage.client.utils import RedactMixin

#: A facet, or a part of one (a schema field, a column's metrics): openlineage-python's object or a plain dict.
Part = Union[RedactMixin, Mapping[str, Any]]
_P = TypeVar("_P", bound=Part)


def part(value: object, name: str) -> Any:  # noqa: ANN401 - a facet's property is arbitrary JSON
    """A property of a facet (or of a part of one); None when absent. A dict is tested first: the plain events a
    scanner builds are dicts, and that test costs a fraction of ``Mapping``'s."""
    if isinstance(value, dict):
        return value.get(name)
    return value.get(name) if isinstance(value, Mapping) else getattr(value, name, None)


def replaced(value: _P, **changes: object) -> _P:
    """A copy of ``value`` with ``changes`` (``None`` leaves a property out of the JSON)."""
    if isinstance(value, Mapping):
        return {**value, **changes}  # type: ignore[return-value]
    return attr.evolve(value, **changes)


def only(value: _P, keep: frozenset[str]) -> _P:
    """A copy of ``value`` with only the properties in ``keep`` (an object's ``_``-named bookkeeping stays)."""
    if isinstance(value, Mapping):
        return {k: v for k, v in value.items() if k in keep}  # type: ignore[return-value]
    return attr.evolve(value, **{a.alias: None for a in attr.fields(type(value))
                                 if a.init and a.name not in keep and not a.name.startswith("_")})
