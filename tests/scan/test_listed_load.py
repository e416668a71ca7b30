"""A table task reads the table at the metadata location its listing gave, without PyIceberg's ``load_table``: the
table it makes, and the events of its snapshots, are those of the load through the catalog."""
from __future__ import annotations

import datetime as dt

from pyiceberg.types import StringType
from tests.support.scan import spec_of, write_table

from iceberg_lineage.config import Settings
from iceberg_lineage.read.listing import TableLocations
from iceberg_lineage.read.source import load_table_object
from iceberg_lineage.scan.task import TableTask, _load, scan_table
from iceberg_lineage.state.store import Watermark

CAPTURE = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def _task(catalog, identifier: tuple[str, ...], depth: str, metadata_location: str | None) -> TableTask:
    return TableTask(spec_of(catalog), identifier, Settings(), "history", depth, None, Watermark(), None, CAPTURE,
                     metadata_location)


def test_the_listed_table_is_the_loaded_table(sql_catalog):
    table = write_table(sql_catalog, "db.t", 3)
    table.update_schema().add_column("extra", StringType()).commit()
    write_table(sql_catalog, "db.t", 1)
    locations = TableLocations(sql_catalog)
    assert locations.tables(("db",)) == [("db", "t")]
    listed = locations.location(("db", "t"))
    assert listed is not None
    spec = spec_of(sql_catalog)
    loaded = load_table_object(spec.load().load_table(("db", "t")))
    read, etag = _load(_task(sql_catalog, ("db", "t"), "summary", listed))
    assert (read.table, etag) == (None, None)  # read at the listed location: PyIceberg's table was never made
    same = ("metadata", "name", "catalog_name", "catalog_type", "catalog_properties", "identifier", "aws_account")
    assert {f: getattr(read, f) for f in same} == {f: getattr(loaded, f) for f in same}
    assert read.metadata.metadata_location == listed
    for depth in ("summary", "entries"):
        fast, slow = (scan_table(_task(sql_catalog, ("db", "t"), depth, at)) for at in (listed, None))
        assert fast == slow and len(fast.items) == 4 and all(i.texts for i in fast.items)


def test_an_unreadable_listed_location_takes_the_catalogs_load(sql_catalog):
    write_table(sql_catalog, "db.t", 2)
    good = scan_table(_task(sql_catalog, ("db", "t"), "summary", None))
    gone = scan_table(_task(sql_catalog, ("db", "t"), "summary", "file:///nowhere/v9.metadata.json"))
    assert gone == good and good.failure is None
