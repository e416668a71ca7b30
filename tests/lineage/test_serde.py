"""``to_json`` writes byte for byte what openlineage-python's ``Serde.to_json`` writes, in one pass (issue 32)."""
from __future__ import annotations

import datetime as dt
import enum
import uuid

import attr
import pytest
from openlineage.client.serde import Serde

from iceberg_lineage.config import Settings
from iceberg_lineage.lineage.events import all_with_start, dataset_event, history_events, lifecycle_event
from iceberg_lineage.lineage.serde import from_json, serialised_once, to_json
from iceberg_lineage.stats import table_history
from tests.support.fixture_tables import FIXTURE_TABLES, fixture_table

CLOCK = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize("name", FIXTURE_TABLES)
def test_every_fixture_event_serialises_as_openlineage_does(name):
    table = fixture_table(name)
    settings = Settings()
    history = table_history(table)
    events = all_with_start(history_events(table, history, settings, capture_time=CLOCK), settings)
    events += [dataset_event(table, history.snapshots[-1], settings, capture_time=CLOCK),
               lifecycle_event(table, "DROP", settings, event_time=CLOCK)]
    for event in events:
        text = to_json(event)
        assert text == Serde.to_json(event)
        assert to_json(from_json(text)) == text  # the way a worker's JSON goes to the delivery


class Colour(enum.Enum):
    RED = "red"
    NOTHING = None


@attr.define
class Inner:
    name: str | None = None
    _producer: str = "p"


@attr.define
class Outer:
    items: object = None
    mapping: object = None
    when: object = None
    ident: object = None
    colour: object = None
    number: float = 1.5


@pytest.mark.parametrize("value", [
    Outer(items=[None, Inner(), Inner(name="a"), {}, {"k": None}, (1, None, "x"), [Inner()]]),
    Outer(mapping={"a": None, "b": {}, "c": [], "d": Inner(), "e": (Inner(name="z"),), "f": Colour.NOTHING}),
    Outer(when=dt.datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=dt.timezone.utc), ident=uuid.UUID(int=7),
          colour=Colour.RED, number=float("nan")),
    Outer(items=[Colour.NOTHING, Colour.RED, dt.date(2026, 1, 2)]),
    Outer(items={3, 1, 2}),  # a set: left to Serde
    Outer(mapping={1: "one"}),  # a key that is not a string: left to Serde
    Outer(items=[object()]),  # not JSON: Serde's placeholder
])
def test_edge_values_serialise_as_openlineage_does(value):
    assert to_json(value) == Serde.to_json(value)


def test_a_mapping_is_serialised_by_openlineage():
    spooled = {"b": None, "a": [None, {}, 1], "c": {"d": None}}
    assert to_json(spooled) == Serde.to_json(spooled) == '{"a": [1], "c": {}}'


def test_an_event_is_converted_once_inside_serialised_once_only():
    event = Outer(items=[Inner(name="a")])
    with serialised_once():
        first = to_json(event)
        event.number = 2.5  # the scanner's task never does this: shows the text is remembered, not rebuilt
        assert to_json(event) == first
    assert to_json(event) == Serde.to_json(event) != first
