"""The session's SeaweedFS is a working Iceberg REST catalog: PyIceberg creates, appends and reads back."""
from __future__ import annotations

import pyarrow as pa


def test_pyiceberg_round_trip_through_seaweed(seaweed):
    catalog = seaweed.catalog()
    catalog.create_namespace_if_not_exists("smoke")
    table = catalog.create_table("smoke.round_trip", pa.schema([("id", pa.int64())]))
    table.append(pa.table({"id": [1, 2, 3]}))
    loaded = catalog.load_table("smoke.round_trip")
    assert loaded.metadata_location.startswith("s3://warehouse/")
    assert [s.summary["added-records"] for s in loaded.metadata.snapshots] == ["3"]
    assert sorted(loaded.scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]
    catalog.drop_table("smoke.round_trip")
