"""Each table's current metadata location, read with the table listing itself, so that a scan can tell an unchanged
table without loading it (a catalog call plus its ``metadata.json``).

- SQL catalog (PyIceberg's ``SqlCatalog``): one query on the catalog's own SQLAlchemy engine reads every table row of
  the catalog (``iceberg_tables``: namespace, name, ``metadata_location``), without its views where the
  ``iceberg_type`` column exists; it lists the tables of each namespace too (PyIceberg's ``list_tables`` makes an
  ORM object of each row, 1.4 s for 10,000 tables).
- Glue (``GlueCatalog``): ``GetTables`` on the catalog's own client, one database at a time, up to 100 tables a
  page, each with ``Parameters.metadata_location``; only Iceberg tables (``table_type``), as PyIceberg lists them.
- Any other catalog (REST, a subclass, a ``py-catalog-impl``): no location, so every table is loaded.

Only the catalog's own connection and credentials are used. Whatever is unexpected (a missing table or column, an
error, an answer of another shape) gives no location: the table is then loaded, never skipped on a guess.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Sequence

from iceberg_lineage.read.catalogs import one_line

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog

LOG = logging.getLogger(__name__)
Identifier = tuple[str, ...]

#: The columns of PyIceberg's ``iceberg_tables`` the query reads (``iceberg_type`` besides, where it exists).
SQL_COLUMNS = frozenset({"catalog_name", "table_namespace", "table_name", "metadata_location"})


class TableLocations:
    """The tables of one catalog, listed namespace by namespace (:meth:`tables`, for
    :func:`~iceberg_lineage.read.catalogs.walk_namespaces`), with the metadata location each was listed at
    (:meth:`location`, ``None`` when the listing did not say)."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.kind = _kind(catalog)
        self._locations: dict[Identifier, str] = {}
        #: a SQL catalog's tables by namespace, from its one query (run with the first namespace listed)
        self._sql_tables: dict[Identifier, list[Identifier]] | None = None
        self._sql_pending = self.kind == "sql"

    def tables(self, namespace: Identifier) -> Sequence[Identifier]:
        """The tables of ``namespace`` (as ``catalog.list_tables``), noting their locations where the catalog
        gives them with the listing. Raises as ``list_tables`` does."""
        if self.kind == "glue":
            listed = _glue_tables(self.catalog, namespace)
            if listed is not None:
                self._locations.update({ident: loc for ident, loc in listed if loc is not None})
                return [ident for ident, _ in listed]
        if self._sql_pending:
            self._sql_pending = False
            self._sql_tables, self._locations = _sql_listing(self.catalog)
        if self._sql_tables is not None:
            return self._sql_tables.get(tuple(namespace), [])
        return [tuple(t) for t in self.catalog.list_tables(namespace)]

    def location(self, identifier: Identifier) -> str | None:
        return self._locations.get(tuple(identifier))


def _kind(catalog: Any) -> str | None:
    """``sql`` or ``glue`` for PyIceberg's own classes only: a subclass may keep its tables elsewhere."""
    module = type(catalog).__module__
    if module == "pyiceberg.catalog.sql" and type(catalog).__name__ == "SqlCatalog":
        return "sql"
    if module == "pyiceberg.catalog.glue" and type(catalog).__name__ == "GlueCatalog":
        return "glue"
    return None


def _sql_listing(catalog: Any) -> tuple[dict[Identifier, list[Identifier]] | None, dict[Identifier, str]]:
    """Every table of the catalog by namespace (as ``list_tables`` selects them), and the location of each, in one
    query; ``None`` and no location when anything is unexpected (then PyIceberg lists each namespace)."""
    from pyiceberg.catalog import Catalog
    from sqlalchemy import inspect, text

    try:
        engine = catalog.engine
        columns = {c["name"] for c in inspect(engine).get_columns("iceberg_tables")}
        if not SQL_COLUMNS <= columns:
            LOG.debug("catalog %s: iceberg_tables lacks %s; every table is loaded", catalog.name,
                      sorted(SQL_COLUMNS - columns))
            return None, {}
        tables_only = " AND (iceberg_type = :table OR iceberg_type IS NULL)" if "iceberg_type" in columns else ""
        query = text("SELECT table_namespace, table_name, metadata_location FROM iceberg_tables "
                     f"WHERE catalog_name = :catalog{tables_only}")
        with engine.connect() as connection:
            rows = connection.execute(query, {"catalog": catalog.name, "table": "TABLE"}).fetchall()
        by_namespace: dict[Identifier, list[Identifier]] = {}
        locations: dict[Identifier, str] = {}
        for namespace, name, location in rows:
            identifier = Catalog.identifier_to_tuple(namespace) + (name,)
            by_namespace.setdefault(identifier[:-1], []).append(identifier)
            if isinstance(location, str) and location:
                locations[identifier] = location
    except Exception as exc:  # noqa: BLE001 - no location: the tables are listed and loaded as before
        LOG.debug("catalog %s: cannot list table locations (%s); every table is loaded", catalog.name, one_line(exc))
        return None, {}
    return by_namespace, locations


def _glue_tables(catalog: Any, namespace: Identifier) -> list[tuple[Identifier, str | None]] | None:
    """The Iceberg tables of one Glue database with their metadata locations, page by page (``GetTables``); ``None``
    when the namespace is not a database or anything is unexpected: then PyIceberg lists it (and raises for it)."""
    if len(namespace) != 1:
        return None
    tables: list[tuple[Identifier, str | None]] = []
    token: str | None = None
    try:
        while True:
            page = catalog.glue.get_tables(DatabaseName=namespace[0], **({"NextToken": token} if token else {}))
            for table in page["TableList"]:
                parameters = table.get("Parameters") or {}
                if str(parameters.get("table_type", "")).lower() != "iceberg":
                    continue
                location = parameters.get("metadata_location")
                tables.append(((namespace[0], str(table["Name"])), location if isinstance(location, str) else None))
            token = page.get("NextToken")
            if not token:
                return tables
    except Exception as exc:  # noqa: BLE001 - PyIceberg lists it instead, with its own errors
        LOG.debug("catalog %s: GetTables on %s failed (%s); PyIceberg lists it", catalog.name, namespace[0],
                  one_line(exc))
        return None
