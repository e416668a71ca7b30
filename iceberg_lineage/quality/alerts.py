"""Schema-change alerts: what the log line and the webhook say about a ``schema`` assertion that failed.

An alert's ``id`` is stable: a UUIDv5 of the table's uuid, the id of the schema version that made the change, the
rule and change kind, and the field id. The schema version stands for the metadata version here: the hook (which
sees a metadata-only commit) and the scanner (which sees the next snapshot, maybe several versions later) report one
change under one id, so a receiver drops the second by id, as it does a redelivery.
"""
from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass
from typing import Iterable, Sequence

from iceberg_lineage.jsontypes import JsonObject
from iceberg_lineage.quality.assertions import Assertion
from iceberg_lineage.quality.schema import introduced_in
from iceberg_lineage.read.metadata import Schema

_ALERT_NAMESPACE = uuid.UUID("1f3a0f6e-5a43-5c1e-9b7e-2c1d4e18a001")


@dataclass(frozen=True)
class Alert:
    id: str
    table: str
    table_uuid: str
    rule: str
    change: str
    severity: str
    field_id: int
    field: str
    type: str
    old_name: str | None
    old_type: str | None
    schema_id: int
    snapshot_id: int | None
    metadata_version: str | None
    engine: str | None
    app: str | None
    text: str

    def as_json(self) -> JsonObject:
        """The webhook body: every field, ``text`` for a Slack-style incoming webhook to show as it is."""
        return {k: v for k, v in asdict(self).items() if v is not None}


def alert_id(table_uuid: str, schema_id: int, kind: str, field_id: int) -> str:
    return str(uuid.uuid5(_ALERT_NAMESPACE, f"{table_uuid}/{schema_id}/schema.{kind}/{field_id}"))


def schema_alerts(
    assertions: Iterable[Assertion],
    *,
    table: str,
    table_uuid: str,
    schemas: Sequence[Schema],
    snapshot_id: int | None = None,
    metadata_version: str | None = None,
    engine: str | None = None,
    app: str | None = None,
) -> tuple[Alert, ...]:
    """An alert per failed ``schema`` assertion, seen at a snapshot or (metadata-only commit) a metadata version,
    written by ``engine`` (and its application id ``app``, a Spark app id...) when known. ``schemas`` are the
    versions from the one after the old schema to the new one: an alert's id names the version that made its change."""
    where = f"snapshot {snapshot_id}" if snapshot_id is not None else f"metadata version {metadata_version}"
    by = " ".join(p for p in (engine, app) if p)
    out = []
    for a in assertions:
        c = a.change
        if c is None or a.success:
            continue
        schema_id = introduced_in(c, schemas)
        text = f"schema alert: {table}: {c.describe()} at {where}" + (f" by {by}" if by else "")
        out.append(Alert(alert_id(table_uuid, schema_id, c.kind, c.field_id), table, table_uuid, "schema", c.kind,
                         a.severity, c.field_id, c.name, c.type, c.old_name, c.old_type, schema_id, snapshot_id,
                         metadata_version, engine, app, text))
    return tuple(out)
