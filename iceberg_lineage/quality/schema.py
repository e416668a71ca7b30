"""The schema rule's diff: two schemas matched by Iceberg field id, so a rename is told from a drop and an add, and
a type change from a legal promotion.

Legal promotions are Iceberg's: ``int`` to ``long``, ``float`` to ``double``, ``decimal(P,S)`` to ``decimal(P',S)``
with ``P' > P``, and in format v3 ``date`` to ``timestamp`` or ``timestamp_ns``. Any other type change is illegal.
A field added or removed together with its parent struct is reported once, at the parent.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Sequence

from iceberg_lineage.read.metadata import Field, Schema

ChangeKind = Literal["added", "removed", "renamed", "type_changed", "promoted"]
CHANGE_KINDS: tuple[ChangeKind, ...] = ("added", "removed", "renamed", "type_changed", "promoted")

_DECIMAL = re.compile(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_PROMOTIONS = {("int", "long"), ("float", "double")}
_V3_PROMOTIONS = {("date", "timestamp"), ("date", "timestamp_ns")}


@dataclass(frozen=True)
class SchemaChange:
    """One change of one field. ``name``/``type`` are the field's in the new schema (the old one for ``removed``);
    ``old_name``/``old_type`` say what it was (for ``renamed``, ``type_changed`` and ``promoted``)."""

    kind: ChangeKind
    field_id: int
    name: str
    type: str
    old_name: str | None = None
    old_type: str | None = None

    def describe(self) -> str:
        """The change in words, as the alert line and the assertion's ``actual`` say it."""
        if self.kind == "added":
            return f"field {self.name} ({self.type}) added"
        if self.kind == "removed":
            return f"field {self.name} ({self.type}) removed"
        if self.kind == "renamed":
            return f"field {self.old_name} renamed to {self.name}"
        if self.kind == "promoted":
            return f"field {self.name} promoted from {self.old_type} to {self.type}"
        return f"field {self.name} changed type from {self.old_type} to {self.type} (not a legal promotion)"


def is_promotion(old: str, new: str, format_version: int = 2) -> bool:
    """Whether Iceberg allows ``old`` to become ``new`` in place."""
    if (old, new) in _PROMOTIONS or (format_version >= 3 and (old, new) in _V3_PROMOTIONS):
        return True
    a, b = _DECIMAL.fullmatch(old), _DECIMAL.fullmatch(new)
    return bool(a and b and a.group(2) == b.group(2) and int(b.group(1)) > int(a.group(1)))


def _parents(schema: Schema) -> dict[int, int | None]:
    """Each field id's parent field id (``None`` at the top level)."""
    out: dict[int, int | None] = {}

    def walk(parent: int | None, fields: tuple[Field, ...]) -> None:
        for f in fields:
            out[f.id] = parent
            walk(f.id, f.children)

    walk(None, schema.fields)
    return out


def schema_diff(old: Schema, new: Schema, format_version: int = 2, *,
                every_field: bool = False) -> tuple[SchemaChange, ...]:
    """Every change from ``old`` to ``new``, by field id, in field-id order (a field renamed and promoted gives
    two changes). ``every_field``: the ALTER facet's view instead of the rule's, where the children of an added or
    removed struct are listed too, and a field whose full name changed (a renamed struct's children) is renamed."""
    before, after = old.by_id(), new.by_id()
    changes: list[SchemaChange] = []
    added = after.keys() - before.keys()
    removed = before.keys() - after.keys()
    new_parents, old_parents = _parents(new), _parents(old)
    for fid in sorted(added | removed | (before.keys() & after.keys())):
        if fid in added:
            if every_field or new_parents[fid] not in added:
                name, f = after[fid]
                changes.append(SchemaChange("added", fid, name, f.type))
            continue
        if fid in removed:
            if every_field or old_parents[fid] not in removed:
                name, f = before[fid]
                changes.append(SchemaChange("removed", fid, name, f.type))
            continue
        (old_name, old_field), (name, f) = before[fid], after[fid]
        if (old_name != name) if every_field else (old_field.name != f.name):
            changes.append(SchemaChange("renamed", fid, name, f.type, old_name=old_name))
        if old_field.type != f.type:
            kind: ChangeKind = "promoted" if is_promotion(old_field.type, f.type, format_version) else "type_changed"
            changes.append(SchemaChange(kind, fid, name, f.type, old_name=old_name, old_type=old_field.type))
    return tuple(changes)


def _shows(change: SchemaChange, schema: Schema) -> bool:
    found = schema.by_id().get(change.field_id)
    if change.kind == "removed":
        return found is None
    if found is None:
        return False
    if change.kind == "renamed":
        return found[0] == change.name
    return change.kind == "added" or found[1].type == change.type


def introduced_in(change: SchemaChange, schemas: Sequence[Schema]) -> int:
    """The id of the first of ``schemas`` (in order, the new schema last) that shows ``change``: the version that
    made it, however many versions an observer skipped."""
    return next((s.schema_id for s in schemas if _shows(change, s)), schemas[-1].schema_id)
