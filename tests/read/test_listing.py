"""Metadata locations read with the table listing (issue 32, section 1): from a real SQLite SqlCatalog's own engine,
checked against what ``load_table`` reads; views left out; and no location at all (every table then loaded) whenever
anything is unexpected: a missing column, an error, another catalog implementation."""
from __future__ import annotations

from sqlalchemy import text
from tests.support.scan import write_table

from iceberg_lineage.read.catalogs import walk_namespaces
from iceberg_lineage.read.listing import TableLocations, _sql_listing


def listed(catalog) -> tuple[list[tuple[str, ...]], dict[tuple[str, ...], str | None]]:
    locations = TableLocations(catalog)
    tables = [t for listing in walk_namespaces(catalog, list_tables=locations.tables) for t in listing.tables]
    return tables, {t: locations.location(t) for t in tables}


def sql(catalog, statement: str, **params) -> None:
    with catalog.engine.begin() as connection:
        connection.execute(text(statement), params)


def test_every_table_comes_with_the_location_load_table_reads(sql_catalog):
    sql_catalog.create_namespace(("db", "inner"))
    names = ("db.a", "db.b", "db.inner.c")
    for name in names:
        write_table(sql_catalog, name, 2)
    tables, locations = listed(sql_catalog)
    assert sorted(tables) == sorted(tuple(n.split(".")) for n in names)
    assert locations == {t: sql_catalog.load_table(t).metadata_location for t in tables}


def test_a_view_sharing_the_catalog_table_is_not_listed(sql_catalog):
    write_table(sql_catalog, "db.t", 1)
    sql(sql_catalog, "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, "
        "iceberg_type) VALUES (:c, 'db', 'v', '/somewhere/v.metadata.json', 'VIEW')", c=sql_catalog.name)
    locations = TableLocations(sql_catalog)
    assert locations.tables(("db",)) == [("db", "t")]
    assert locations.location(("db", "v")) is None and locations.location(("db", "t")) is not None


def test_a_catalog_without_iceberg_type_still_lists_its_locations(sql_catalog):
    from pyiceberg.catalog.sql import SqlCatalog

    write_table(sql_catalog, "db.t", 1)
    sql(sql_catalog, "ALTER TABLE iceberg_tables DROP COLUMN iceberg_type")  # a catalog written before views
    v0 = SqlCatalog(sql_catalog.name, **sql_catalog.properties)
    assert listed(v0) == ([("db", "t")], {("db", "t"): v0.load_table("db.t").metadata_location})


def test_a_missing_column_gives_no_location(sql_catalog):
    write_table(sql_catalog, "db.t", 1)
    assert _sql_listing(sql_catalog)[0] == {("db",): [("db", "t")]}
    sql(sql_catalog, "ALTER TABLE iceberg_tables RENAME COLUMN metadata_location TO where_it_is")
    assert _sql_listing(sql_catalog) == (None, {})
    sql(sql_catalog, "DROP TABLE iceberg_tables")  # an error of the query itself
    assert _sql_listing(sql_catalog) == (None, {})


def test_another_catalog_implementation_gives_no_location(sql_catalog):
    from pyiceberg.catalog import load_catalog

    write_table(sql_catalog, "db.t", 1)
    other = load_catalog("test", **{"py-catalog-impl": "tests.faults.stuck_catalog.StuckCatalog",
                                    **sql_catalog.properties})
    assert listed(other) == ([("db", "t")], {("db", "t"): None})
