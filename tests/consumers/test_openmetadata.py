"""OpenMetadata's own OpenLineage connector (openmetadata-ingestion 1.13.4.1), run offline on our events under the
``openmetadata`` profile: it finds the table by the first non-LOCATION symlink (our TABLE symlink), split at dots."""
from __future__ import annotations

import pytest

from iceberg_lineage.config import Settings
from iceberg_lineage.lineage.shaping import shaped as shape
from tests.consumers.tables import linked_run, snapshot_event
from tests.support.consumers import probe
from tests.support.engines import require

PROFILE = Settings().updated({"consumer.profile": "openmetadata"})


@pytest.fixture(scope="module")
def parsed():
    require("openmetadata")
    built = [snapshot_event(3, PROFILE), snapshot_event(3, PROFILE, namespace="sales.emea", name="returns"),
             snapshot_event(3, Settings().updated({"consumer.profile": "openmetadata", "naming.primary": "table"})),
             linked_run(2, 1)]
    sent = [e for event in built for e in shape(event, PROFILE).events]
    assert len(sent) == len(built)  # the profile changes nothing OpenMetadata reads
    return probe("openmetadata", sent)


def test_it_resolves_our_snapshot_run_to_the_schema_and_table(parsed):
    event = parsed[0]
    assert event["event_type"] == "COMPLETE" and event["job"]["name"] == "mart.orders.spark"
    [dataset] = event["datasets"]
    assert dataset["kind"] == "output" and dataset["entity_type"] == "table"
    assert (dataset["database"], dataset["schema"], dataset["table"]) == (None, "mart", "orders")
    assert dataset["candidates"] == [[None, "mart", "orders", "http://rest.example:8181"]]  # the location is no table
    assert dataset["key"] == "s3://lake/warehouse/mart/orders"


def test_a_nested_namespace_reads_as_database_schema_table(parsed):
    [dataset] = parsed[1]["datasets"]
    assert (dataset["database"], dataset["schema"], dataset["table"]) == ("sales", "emea", "returns")


def test_table_naming_gives_the_same_table(parsed):
    [dataset] = parsed[2]["datasets"]
    assert (dataset["schema"], dataset["table"]) == ("mart", "orders")
    assert dataset["key"] == "http://rest.example:8181/mart.orders"


def test_a_run_with_inputs_and_outputs_keeps_both(parsed):
    kinds = [(d["kind"], d["key"]) for d in parsed[3]["datasets"]]
    assert kinds == [("input", "s3://lake/warehouse/in/t0000"), ("input", "s3://lake/warehouse/in/t0001"),
                     ("output", "s3://lake/warehouse/out/t0000")]
