"""The JSON of a few fixture snapshots' events, pinned under a fixed clock.

Restructuring moves code, not events: these pins must keep passing. Issues that change events on purpose update
the pins in their own commits (``PIN_UPDATE=1 pytest tests/lineage/test_event_pins.py`` rewrites them) and say so.
"""
from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest

from iceberg_lineage.config import Settings
from iceberg_lineage.lineage import facets as fb
from iceberg_lineage.lineage.events import dataset_event, history_events, lifecycle_event, lifecycle_run_id
from iceberg_lineage.lineage.serde import to_json
from iceberg_lineage.stats import table_history

from tests.support.fixture_tables import FIXTURES, fixture_table

PINS = Path(__file__).parent / "pins"
CLOCK = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
TABLES = ["impala_hive_pos_deletes_6snaps", "impala_spark_v3_deletion_vectors", "duckdb_spark_partition_evolution",
          "duckdb_java_spark_eq_deletes"]


def _events(name: str) -> list[dict]:
    table = fixture_table(name)
    settings = Settings()
    history = table_history(table)
    events = history_events(table, history, settings, capture_time=CLOCK)
    events.append(dataset_event(table, history.snapshots[-1], settings, capture_time=CLOCK))
    lifecycle = [lifecycle_event(table, "DROP", settings, event_time=CLOCK),
                 lifecycle_event(table, "RENAME", settings, previous_identifier=("old", "name"), event_time=CLOCK)]
    # The fixtures' absolute place differs between clones; everything else is pinned byte for byte. A lifecycle
    # runId hashes the metadata file's location: pinned as computed from the location relative to the fixtures.
    docs = [json.loads(to_json(e).replace(str(FIXTURES), "<FIXTURES>")) for e in [*events, *lifecycle]]
    md = table.metadata
    instant = fb.ms_to_datetime(md.last_updated_ms or 0)
    for doc, kind in zip(docs[len(events):], ("DROP", "RENAME")):
        assert doc["run"]["runId"] == str(lifecycle_run_id(md.identity, kind, md.metadata_location, instant))
        relative = md.metadata_location.replace(str(FIXTURES), "<FIXTURES>")
        doc["run"]["runId"] = str(lifecycle_run_id(md.identity, kind, relative, instant))
    return docs


@pytest.mark.parametrize("name", TABLES)
def test_events_are_pinned(name):
    pin = PINS / f"{name}.json"
    got = _events(name)
    if os.environ.get("PIN_UPDATE"):
        pin.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    assert got == json.loads(pin.read_text())
