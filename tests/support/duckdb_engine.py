"""DuckDB as an Iceberg writer: its own C++ reader and writer, attached to the session's SeaweedFS REST catalog.

The extensions come from the ``duckdb-extension-*`` wheels that ``make provision`` installs (the ``interop``
extra) and are loaded by file path, never downloaded: avro first (the iceberg extension reads manifests with it),
then httpfs (S3), then iceberg. DuckDB writes Iceberg only through a catalog, so the connection attaches the REST
catalog as ``lake`` (``READ_ONLY false``), with SeaweedFS's OAuth2 client credentials and S3 keys as secrets.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from tests.support.engines import require
from tests.support.seaweed import ACCESS_KEY, REGION, SECRET_KEY, WAREHOUSE, Seaweed

EXTENSIONS = ("avro", "httpfs", "iceberg")  # in loading order
CATALOG = "lake"


def extension_path(name: str) -> Path | None:
    """The ``<name>.duckdb_extension`` file of the ``duckdb-extension-<name>`` wheel, if it is installed."""
    spec = importlib.util.find_spec(f"duckdb_extension_{name}")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob(f"extensions/*/{name}.duckdb_extension"))
    return found[-1] if found else None


def missing_duckdb() -> str | None:
    """Why DuckDB cannot write Iceberg here (one line), or None."""
    if importlib.util.find_spec("duckdb") is None:
        return "duckdb is not installed (make provision)"
    absent = [name for name in EXTENSIONS if extension_path(name) is None]
    if absent:
        return f"no duckdb-extension-{', duckdb-extension-'.join(absent)} wheel (make provision)"
    return None


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def duckdb_connection(seaweed: Seaweed, uri: str | None = None) -> Any:
    """An in-memory DuckDB connection with SeaweedFS's REST catalog attached as ``lake``, at ``uri`` (SeaweedFS's own
    by default; the REST proxy passes its own). S3 goes straight to SeaweedFS, with the static keys: the catalog
    vends no credentials (``ACCESS_DELEGATION_MODE 'none'``)."""
    require("duckdb")
    import duckdb

    endpoint = uri or seaweed.uri
    connection = duckdb.connect(config={"autoinstall_known_extensions": "false",
                                        "autoload_known_extensions": "false"})
    for name in EXTENSIONS:
        connection.execute(f"LOAD {_quoted(str(extension_path(name)))}")
    s3_host = seaweed.s3_endpoint.split("://", 1)[1]
    connection.execute(f"CREATE SECRET lake_s3 (TYPE s3, KEY_ID {_quoted(ACCESS_KEY)}, SECRET {_quoted(SECRET_KEY)}, "
                       f"REGION {_quoted(REGION)}, ENDPOINT {_quoted(s3_host)}, URL_STYLE 'path', USE_SSL false)")
    tokens = f"{endpoint}/v1/oauth/tokens"
    connection.execute(f"CREATE SECRET lake_catalog (TYPE iceberg, CLIENT_ID {_quoted(ACCESS_KEY)}, "
                       f"CLIENT_SECRET {_quoted(SECRET_KEY)}, OAUTH2_SERVER_URI {_quoted(tokens)})")
    connection.execute(f"ATTACH {_quoted(WAREHOUSE)} AS {CATALOG} (TYPE iceberg, ENDPOINT {_quoted(endpoint)}, "
                       "SECRET lake_catalog, ACCESS_DELEGATION_MODE 'none', READ_ONLY false)")
    return connection
