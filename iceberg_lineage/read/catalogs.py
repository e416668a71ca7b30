"""Loading catalogs: PyIceberg's configured catalogs, the embedded default one (only when asked for by name), and one
loaded catalog per process.

A scan names catalogs by :class:`CatalogSpec` (name + properties), which pickles: a worker process or a Dask worker
loads the catalog itself, once, from the spec. A Glue catalog's AWS account, which names its tables' ARNs, is resolved
when the catalog is loaded (:func:`catalog_account`), never while a commit or an event is made.
"""
from __future__ import annotations

import logging
import sys
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, NamedTuple, Sequence

from iceberg_lineage.errors import CatalogError, ConfigError, IcebergLineageError
from iceberg_lineage.extras import require
from iceberg_lineage.read.pyiceberg_config import DEFAULT_CATALOG, load_pyiceberg_config
from iceberg_lineage.redact import scrub

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.catalog.glue import GlueCatalog
    from pyiceberg.catalog.sql import SqlCatalog

#: Where the embedded default catalog keeps its SQLite file and its tables.
WAREHOUSE = Path("warehouse")


#: How much of an exception's message an error line or a summary keeps: a catalog server's error body can be
#: kilobytes long (an HTML page, a stack trace, its whole configuration).
MESSAGE_LIMIT = 300


def one_line(exc: BaseException, limit: int = MESSAGE_LIMIT) -> str:
    """An exception as one bounded line without secrets (pydantic and botocore messages span many lines, and a
    catalog's error body may quote credentials): cleaned before it is cut, so no secret survives half-masked."""
    text = scrub(" ".join(f"{type(exc).__name__}: {exc}".split()))
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class CatalogSpec:
    """A catalog as name + properties: what a worker process or a Dask worker needs to load it itself."""

    name: str
    properties: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, name: str, properties: Mapping[str, Any]) -> "CatalogSpec":
        return cls(name, tuple(sorted((str(k), str(v)) for k, v in properties.items())))

    def load(self) -> Catalog:
        """The catalog, loaded once per process (threads share it)."""
        return LOADED_CATALOGS.get(self)


class CatalogCache:
    """The catalogs this process has loaded, one per spec: loading one opens connections and clients, which
    every table task of a scan shares."""

    def __init__(self) -> None:
        self._catalogs: dict[CatalogSpec, Catalog] = {}
        self._lock = threading.Lock()

    def get(self, spec: CatalogSpec) -> Catalog:
        with self._lock:
            catalog = self._catalogs.get(spec)
            if catalog is None:
                catalog = self._catalogs[spec] = _load(spec)
            return catalog


def _load(spec: CatalogSpec) -> Catalog:
    from pyiceberg.catalog import load_catalog

    from iceberg_lineage.redact import protect

    protect(dict(spec.properties))  # before PyIceberg (or our errors) can show any of them
    if dict(spec.properties).get("type") == "glue":
        require("a Glue catalog", "boto3")
    try:
        catalog = load_catalog(spec.name, **_coerced(spec.properties))
    except Exception as exc:  # noqa: BLE001 - any misconfiguration is a catalog error
        raise CatalogError(f"cannot load catalog {spec.name!r}: {one_line(exc)}") from None
    catalog_account(catalog)  # now, once: naming its tables later reads the answer
    return catalog


#: This process's loaded catalogs.
LOADED_CATALOGS = CatalogCache()


LOG = logging.getLogger(__name__)
#: Catalog properties that name a Glue catalog's AWS account; with none of them, STS is asked.
GLUE_ACCOUNT_KEYS = ("glue.id", "glue.catalog-id", "client.account-id")
#: Catalog property: where STS is asked (default: the catalog's ``glue.endpoint``, else AWS's regional endpoint).
STS_ENDPOINT = "sts.endpoint"
#: Seconds STS may take to connect, and to answer (one attempt): the most a Glue catalog's load waits for it, twice.
STS_TIMEOUT_S = 5


class AwsAccount(NamedTuple):
    """A Glue catalog's AWS account and the region its Glue client uses: what its tables' ARN is made of."""

    id: str
    region: str | None


class AccountCache:
    """Each Glue catalog's account, resolved once per catalog object: on a failure STS is not asked again, and the
    warning is given once."""

    def __init__(self) -> None:
        self._accounts: weakref.WeakKeyDictionary[Any, AwsAccount | None] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def get(self, catalog: Catalog) -> AwsAccount | None:
        glue = sys.modules.get("pyiceberg.catalog.glue")  # not imported: no catalog can be a GlueCatalog
        if glue is None or not isinstance(catalog, glue.GlueCatalog):
            return None
        with self._lock:
            if catalog not in self._accounts:
                self._accounts[catalog] = _resolve_account(catalog)
            return self._accounts[catalog]


def _resolve_account(catalog: GlueCatalog) -> AwsAccount | None:
    region = catalog.glue.meta.region_name
    configured = next((catalog.properties[k] for k in GLUE_ACCOUNT_KEYS if catalog.properties.get(k)), None)
    if configured:
        return AwsAccount(str(configured), region)
    try:
        return AwsAccount(_caller_account(catalog), region)
    except Exception as exc:  # noqa: BLE001 - no ARN rather than a guess, and the catalog still loads
        LOG.warning("catalog %s: cannot resolve its AWS account with STS GetCallerIdentity (%s): its Glue tables "
                    "get no ARN symlink; set glue.id to name it", catalog.name, one_line(exc))
        return None


def _caller_account(catalog: GlueCatalog) -> str:
    """STS ``GetCallerIdentity`` with the credentials, region and endpoint of the catalog, read from the properties
    PyIceberg builds its Glue client from (as OpenLineage Spark asks STS for the account it names ARNs with)."""
    import boto3
    from botocore.config import Config
    from pyiceberg.catalog import BOTOCORE_SESSION
    from pyiceberg.catalog import glue as g
    from pyiceberg.utils.properties import get_first_property_value as first

    props = catalog.properties
    session = boto3.Session(
        profile_name=first(props, g.GLUE_PROFILE_NAME, g.AWS_PROFILE_NAME),
        region_name=catalog.glue.meta.region_name,
        botocore_session=props.get(BOTOCORE_SESSION),
        aws_access_key_id=first(props, g.GLUE_ACCESS_KEY_ID, g.AWS_ACCESS_KEY_ID),
        aws_secret_access_key=first(props, g.GLUE_SECRET_ACCESS_KEY, g.AWS_SECRET_ACCESS_KEY),
        aws_session_token=first(props, g.GLUE_SESSION_TOKEN, g.AWS_SESSION_TOKEN),
    )
    config = Config(connect_timeout=STS_TIMEOUT_S, read_timeout=STS_TIMEOUT_S, retries={"total_max_attempts": 1})
    sts = session.client("sts", endpoint_url=props.get(STS_ENDPOINT) or props.get(g.GLUE_CATALOG_ENDPOINT),
                         config=config)
    return str(sts.get_caller_identity()["Account"])


#: This process's resolved Glue accounts.
ACCOUNTS = AccountCache()


def catalog_account(catalog: Catalog) -> AwsAccount | None:
    """The AWS account of a Glue catalog (``None`` for other catalogs, or when it cannot be known): the configured
    one (:data:`GLUE_ACCOUNT_KEYS`), else STS's answer, asked once per catalog, on the first call (at load)."""
    return ACCOUNTS.get(catalog)


def _coerced(properties: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """Catalog properties as ``load_catalog`` needs them. PyIceberg's configuration turns every value into a
    string, and botocore then fails on ``glue.max-retries`` (a TypeError): give it back its integer."""
    props: dict[str, Any] = dict(properties)
    if "glue.max-retries" in props:
        props["glue.max-retries"] = int(props["glue.max-retries"])
    return props


def configured_catalogs(names: Sequence[str] = ()) -> tuple[CatalogSpec, ...]:
    """Catalogs from PyIceberg's configuration (``.pyiceberg.yaml``, ``PYICEBERG_CATALOG__*``), all or ``names``.

    ``default``, asked for by name and not configured, is the embedded catalog (created if need be); it is never
    found otherwise: no catalog configured is a :class:`ConfigError` saying where they were looked for.
    """
    config = load_pyiceberg_config()
    known = config.catalogs
    wanted = list(dict.fromkeys(n.lower() for n in names)) or known
    if not wanted:
        raise config.none_configured()
    missing = [n for n in wanted if n not in known and n != DEFAULT_CATALOG]
    if missing:
        raise config.unknown(missing)
    return tuple(CatalogSpec.of(n, _flat(config.checked(n))) if n in known else embedded_catalog()
                 for n in wanted)


def catalog_config(name: str) -> Mapping[str, Any]:
    """The configuration of the catalog ``name``. ``default``, when no catalog of that name is configured, is the
    embedded default catalog, as a scan finds it; reading a table creates nothing, so it must exist already."""
    config = load_pyiceberg_config()
    if config.catalog(name) is not None:
        return config.checked(name)
    if name.lower() != DEFAULT_CATALOG:
        raise config.unknown([name])
    database = WAREHOUSE.resolve() / "catalog.db"
    if not database.is_file():
        raise ConfigError(f"no catalog named {DEFAULT_CATALOG!r} is configured, and there is no embedded default "
                          f"catalog at {database} (`make run` creates one)")
    return {"type": "sql", **embedded_properties()}


def catalog_unreachable(spec: CatalogSpec) -> str | None:
    """Why a catalog cannot be used, found by loading it and listing its namespaces (``config --check``); ``None``
    when it answers. A SQLite file that does not exist is not created (SQLAlchemy would)."""
    uri = dict(spec.properties).get("uri", "")
    if uri.startswith("sqlite:///") and ":memory:" not in uri and not Path(uri[len("sqlite:///"):]).is_file():
        return f"catalog {spec.name}: no SQLite database at {uri[len('sqlite:///'):]}"
    try:
        spec.load().list_namespaces()
    except IcebergLineageError as exc:
        return f"catalog {spec.name}: {exc.reason}"
    except Exception as exc:  # noqa: BLE001 - whatever the catalog's client raises
        return f"catalog {spec.name}: cannot list its namespaces: {one_line(exc)}"
    return None


def embedded_properties(root: Path = WAREHOUSE) -> dict[str, str]:
    """The embedded default catalog's properties: SQLite in ``./warehouse/catalog.db``, warehouse ``./warehouse``."""
    root = root.resolve()
    return {"uri": f"sqlite:///{root}/catalog.db", "warehouse": f"file://{root}"}


def embedded_sql_catalog(root: Path = WAREHOUSE) -> SqlCatalog:
    """The embedded default catalog (:func:`embedded_properties`), its warehouse created if need be."""
    from pyiceberg.catalog.sql import SqlCatalog

    root.mkdir(parents=True, exist_ok=True)
    return SqlCatalog(DEFAULT_CATALOG, **embedded_properties(root))


def embedded_catalog() -> CatalogSpec:
    """The embedded default catalog (:func:`embedded_sql_catalog`) as a spec."""
    return CatalogSpec.of(DEFAULT_CATALOG, {"type": "sql", **embedded_sql_catalog().properties})


def _flat(conf: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in conf.items():
        if isinstance(v, Mapping):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = str(v)
    return out


class NamespaceListing(NamedTuple):
    """One namespace of a catalog walk: its tables, or why they could not be listed."""

    namespace: tuple[str, ...]
    tables: tuple[tuple[str, ...], ...]
    error: str | None = None


def walk_namespaces(catalog: Catalog, roots: Sequence[tuple[str, ...]] = ((),),
                    list_tables: Callable[[tuple[str, ...]], Iterable[Sequence[str]]] | None = None,
                    ) -> Iterator[NamespaceListing]:
    """Every namespace under ``roots`` (nested ones too) of a PyIceberg catalog with its tables, lazily, depth
    first; a namespace that cannot be listed is yielded with its error and the walk goes on. The root ``()`` has
    no tables of its own. ``list_tables``: lists a namespace's tables instead of ``catalog.list_tables``."""
    list_tables = list_tables or catalog.list_tables
    stack = list(reversed(roots))
    seen: set[tuple[str, ...]] = set()
    while stack:
        namespace = stack.pop()
        if namespace in seen:
            continue
        seen.add(namespace)
        try:
            children = [tuple(c) for c in catalog.list_namespaces(namespace)]
            tables = tuple(tuple(t) for t in list_tables(namespace)) if namespace else ()
        except Exception as exc:  # noqa: BLE001 - one namespace must not stop the walk
            yield NamespaceListing(namespace, (), one_line(exc))
            continue
        yield NamespaceListing(namespace, tables)
        # Some catalogs list every level below (or the namespace itself); keep strict children only.
        stack.extend(reversed([c for c in children if len(c) > len(namespace) and c[: len(namespace)] == namespace]))
