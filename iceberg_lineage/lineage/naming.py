"""OpenLineage dataset identity of an Iceberg table.

The primary identity is the table's physical location, normalised like the OpenLineage Spark and Flink
integrations do (``FilesystemDatasetUtils.fromLocation``), so events from this tool, Spark and Flink name the same
table the same way. The catalog name goes into a ``symlinks`` identifier of type ``TABLE``:

=========== ========================================== ===================
catalog     symlink namespace                          symlink name
=========== ========================================== ===================
glue        ``arn:aws:glue:{region}:{account}``        ``table/{db}/{table}``
hive        ``hive://{host}:{port}`` (first ``uri``)   ``{db}.{table}``
rest/nessie catalog ``uri``                            ``{ns}.{table}``
hadoop      the warehouse as a location                ``{ns}.{table}``
in-memory   the warehouse (its ``uri`` is throwaway)    ``{ns}.{table}``
sql         catalog ``uri``, credentials stripped       ``{ns}.{table}``
other       catalog ``uri``, else the warehouse         ``{ns}.{table}``
=========== ========================================== ===================

Decisions: Glue needs the account id and a region. The account is configured (``glue.id``, ``glue.catalog-id`` or
``client.account-id``) or, as Spark does, STS's answer for the catalog's credentials, asked once when the catalog is
loaded (:func:`iceberg_lineage.read.catalogs.catalog_account`, handed in as ``LoadedTable.aws_account``): naming a
dataset never calls the network. The region is configured (``glue.region``, ``client.region``), else the one the
catalog's Glue client uses, else ``AWS_REGION``, ``AWS_DEFAULT_REGION``. Without either the symlink is left out
rather than guessed (STS failed: the catalog's load said so). SQL catalogs have no
naming rule upstream (OpenLineage issue #4677); the catalog's SQLAlchemy URI without credentials identifies the
catalog database and stays stable across machines that share it. A bare metadata file has no catalog symlink.
With ``naming.primary: table`` the catalog name becomes primary and the location a symlink of type ``LOCATION``
(a table read through a bare metadata file keeps its location as primary: it has no catalog name).
"""
from __future__ import annotations

import os
import posixpath
from typing import Mapping, NamedTuple
from urllib.parse import urlsplit

from iceberg_lineage.config import Settings
from iceberg_lineage.redact import strip_userinfo
from iceberg_lineage.read.catalogs import GLUE_ACCOUNT_KEYS
from iceberg_lineage.read.source import LoadedTable

#: Property names that may hold secrets; they are never copied into events.

_OBJECT_STORES = {"s3": "s3", "s3a": "s3", "s3n": "s3", "gs": "gs", "gcs": "gs", "oss": "oss", "cos": "cos"}
_AZURE = {"abfs": "abfss", "abfss": "abfss", "wasb": "wasbs", "wasbs": "wasbs"}


class Identifier(NamedTuple):
    """A dataset identifier: namespace, name and (for symlinks) its type."""

    namespace: str
    name: str
    type: str = "TABLE"


class DatasetIdentity(NamedTuple):
    namespace: str
    name: str
    symlinks: tuple[Identifier, ...]


def location_identity(location: str) -> tuple[str, str]:
    """Namespace and name of a physical location, as OpenLineage's Java ``FilesystemDatasetUtils.fromLocation``.

    Object stores: ``scheme://bucket`` and the key without leading or trailing ``/``; local files: ``file`` and
    the absolute path; any other scheme (HDFS...): ``scheme://authority`` and the path with its leading ``/``.
    """
    loc = strip_userinfo(location.strip())
    if "://" not in loc:
        path = loc[len("file:") :] if loc.startswith("file:") else loc
        return "file", _clean_path(path)
    parts = urlsplit(loc)
    scheme = parts.scheme.lower()
    if scheme == "file":
        return "file", _clean_path(parts.path)
    if scheme in _OBJECT_STORES:
        return f"{_OBJECT_STORES[scheme]}://{parts.netloc}", parts.path.strip("/")
    if scheme in _AZURE:
        return f"{_AZURE[scheme]}://{parts.netloc}", parts.path.strip("/")
    return f"{scheme}://{parts.netloc}", _clean_path(parts.path)


def _clean_path(path: str) -> str:
    cleaned = posixpath.normpath(path) if path else "/"
    return "/" + cleaned.lstrip("/") if path.startswith("/") else cleaned


def _warehouse_location(warehouse: str) -> str:
    """The warehouse as a location namespace, as Spark's ``fromLocationAndName``: ``file:/path`` for local
    paths, the full URI (path included, credentials stripped) otherwise."""
    namespace, name = location_identity(warehouse)
    if namespace == "file":
        return f"file:{name}"
    return f"{namespace}/{name.lstrip('/')}".rstrip("/")


def table_parts(table: LoadedTable) -> tuple[tuple[str, ...], str]:
    """(namespace levels, table name): from the catalog identifier, or the last location segment without one."""
    if table.identifier:
        return tuple(table.identifier[:-1]), table.identifier[-1]
    return (), posixpath.basename(table.metadata.location.rstrip("/")) or table.metadata.location


def _first(props: Mapping[str, str], *keys: str) -> str | None:
    for key in keys:
        value = props.get(key)
        if value:
            return value
    return None


def catalog_identifier(table: LoadedTable, env: Mapping[str, str] | None = None,
                       rest_uri: str | None = None) -> Identifier | None:
    """The catalog's name for the table (type ``TABLE``), or ``None`` for a bare metadata file or when the
    catalog does not say enough to name it (see the module docstring). ``rest_uri`` (``naming.rest_uri``) names a
    REST catalog's tables instead of its ``uri``: the REST bridge's public URI, which engines behind it see."""
    if table.catalog_type in (None, "static") or not table.identifier:
        return None
    env = os.environ if env is None else env
    props = table.catalog_properties
    namespace, name = table_parts(table)
    dotted = ".".join((*namespace, name))
    kind = table.catalog_type
    if kind == "glue":
        resolved = table.aws_account
        region = (_first(props, "glue.region", "client.region") or (resolved.region if resolved else None)
                  or _first(env, "AWS_REGION", "AWS_DEFAULT_REGION"))
        account = _first(props, *GLUE_ACCOUNT_KEYS) or (resolved.id if resolved else None)
        if not region or not account or not namespace:
            return None
        from openlineage.client.naming.dataset import AWSGlue  # openlineage.client: a second, for Glue only

        glue = AWSGlue(region, account, ".".join(namespace), name)
        return Identifier(glue.get_namespace(), glue.get_name())
    if kind == "hive":
        metastore = urlsplit(strip_userinfo((props.get("uri") or "").split(",")[0].strip()))
        if not metastore.hostname or not namespace:
            return None
        from openlineage.client.naming.dataset import Hive

        hive = Hive(metastore.hostname, str(metastore.port or 9083), ".".join(namespace), name)
        return Identifier(hive.get_namespace(), hive.get_name())
    if kind in ("hadoop", "in-memory"):
        warehouse = props.get("warehouse")
        return Identifier(_warehouse_location(warehouse), dotted) if warehouse else None
    uri = rest_uri if kind == "rest" and rest_uri else props.get("uri")
    if uri:
        return Identifier(strip_userinfo(uri).rstrip("/"), dotted)
    warehouse = props.get("warehouse")
    return Identifier(_warehouse_location(warehouse), dotted) if warehouse else None


def dataset_identity(table: LoadedTable, settings: Settings, env: Mapping[str, str] | None = None) -> DatasetIdentity:
    """Primary namespace and name plus symlinks, following ``naming.primary``."""
    loc_ns, loc_name = location_identity(table.metadata.location)
    catalog = catalog_identifier(table, env, settings.naming.rest_uri)
    if catalog is None:
        return DatasetIdentity(loc_ns, loc_name, ())
    if settings.naming.primary == "table":
        return DatasetIdentity(catalog.namespace, catalog.name, (Identifier(loc_ns, loc_name, "LOCATION"),))
    return DatasetIdentity(loc_ns, loc_name, (catalog,))
