"""Discovery, on the driver: namespaces and tables are listed lazily, so 10,000 tables never sit in memory at once.
Where the catalog gives each table's metadata location with its listing (SQL, Glue:
:mod:`iceberg_lineage.read.listing`), the table comes with it, so the driver can skip an unchanged table unloaded."""
from __future__ import annotations

import fnmatch
import functools
from dataclasses import dataclass
from typing import Iterator

from iceberg_lineage.errors import CatalogError
from iceberg_lineage.read.catalogs import CatalogSpec, walk_namespaces
from iceberg_lineage.read.listing import TableLocations


@dataclass(frozen=True)
class TableFilter:
    """Which tables are in scope: namespaces (with everything below them), include and exclude globs.

    Globs match the dotted identifier (``sales.orders``) or the same prefixed with the catalog (``glue.sales.orders``).
    """

    namespaces: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @functools.cached_property
    def roots(self) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(ns.split(".")) for ns in self.namespaces) or ((),)

    @functools.cached_property
    def _everything(self) -> bool:
        """No namespace, include or exclude: every table is wanted (asked twice per table in a scan)."""
        return not (self.namespaces or self.include or self.exclude)

    def in_namespaces(self, namespace: tuple[str, ...]) -> bool:
        return any(namespace[: len(root)] == root for root in self.roots)

    def wants(self, catalog: str, identifier: tuple[str, ...]) -> bool:
        if self._everything:
            return True
        if not self.in_namespaces(tuple(identifier[:-1])):
            return False
        names = (".".join(identifier), ".".join((catalog, *identifier)))
        if self.include and not any(fnmatch.fnmatchcase(n, g) for g in self.include for n in names):
            return False
        return not any(fnmatch.fnmatchcase(n, g) for g in self.exclude for n in names)


@dataclass(frozen=True)
class NamespaceListed:
    """A namespace whose tables were listed (``error`` None) or could not be."""

    catalog: str
    namespace: tuple[str, ...]
    error: str | None = None


@dataclass(frozen=True)
class TableListed:
    catalog: CatalogSpec
    identifier: tuple[str, ...]
    #: the table's current metadata location as the listing gave it; ``None``: not given (the table is loaded)
    metadata_location: str | None = None


def discover(spec: CatalogSpec, filters: TableFilter) -> Iterator[NamespaceListed | TableListed]:
    """Every namespace (nested ones too) and every table of a catalog, lazily, depth first.

    A namespace that cannot be listed is reported and skipped; its tables are then out of drop detection.
    """
    try:
        catalog = spec.load()
    except CatalogError as exc:
        yield NamespaceListed(spec.name, (), exc.reason)
        return
    locations = TableLocations(catalog)
    for listing in walk_namespaces(catalog, filters.roots, locations.tables):
        yield NamespaceListed(spec.name, listing.namespace, listing.error)
        for identifier in listing.tables:
            if filters.wants(spec.name, identifier):
                yield TableListed(spec, identifier, locations.location(identifier))
