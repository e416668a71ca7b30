"""Run by OpenMetadata's own interpreter (the ingestion framework's venv, see the Makefile's openmetadata target):
reads OpenLineage events as JSON Lines on stdin and prints, per event, what OpenMetadata's OpenLineage connector
makes of it offline, as JSON Lines. Imports nothing of iceberg_lineage."""
import json
import sys

from metadata.ingestion.source.pipeline.openlineage.metadata import OpenlineageSource
from metadata.ingestion.source.pipeline.openlineage.utils import message_to_open_lineage_event


def datasets(event):
    out = []
    for kind, items in (("input", event.inputs), ("output", event.outputs)):
        for data in items:
            entity = OpenlineageSource._get_entity_details(data)
            candidates = OpenlineageSource._iter_table_candidates(data)
            first = candidates[0][0] if candidates else None
            out.append({"kind": kind, "entity_type": entity.entity_type, "key": OpenlineageSource._get_ol_table_name(data),
                        "schema": first.schema if first else None, "table": first.name if first else None,
                        "database": first.database if first else None,
                        "candidates": [[c.database, c.schema, c.name, ns] for c, ns in candidates]})
    return out


for line in sys.stdin:
    event = message_to_open_lineage_event(json.loads(line))
    print(json.dumps({"event_type": str(getattr(event.event_type, "value", event.event_type)),
                      "job": event.job, "datasets": datasets(event)}))
