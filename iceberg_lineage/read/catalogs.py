"""Loading catalogs: PyIceberg's configured catalogs, the embedded default one, and one loaded catalog per process.

A scan names catalogs by :class:`CatalogSpec` (name + properties), which pickles: a worker process or a Dask worker
loads the catalog itself, once, from the spec.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from iceberg_lineage.errors import CatalogError, ConfigError
from iceberg_lineage.redact import scrub

#: Name of the embedded default catalog (SQLite under ./warehouse) used when none is configured.
DEFAULT_CATALOG = "default"
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

    def load(self) -> Any:
        """The catalog, loaded once per process (threads share it)."""
        return LOADED_CATALOGS.get(self)


class CatalogCache:
    """The catalogs this process has loaded, one per spec: loading one opens connections and clients, which
    every table task of a scan shares."""

    def __init__(self) -> None:
        self._catalogs: dict[CatalogSpec, Any] = {}
        self._lock = threading.Lock()

    def get(self, spec: CatalogSpec) -> Any:
        with self._lock:
            catalog = self._catalogs.get(spec)
            if catalog is None:
                catalog = self._catalogs[spec] = _load(spec)
            return catalog


def _load(spec: CatalogSpec) -> Any:
    from pyiceberg.catalog import load_catalog

    from iceberg_lineage.redact import protect

    protect(dict(spec.properties))  # before PyIceberg (or our errors) can show any of them
    try:
        return load_catalog(spec.name, **_coerced(spec.properties))
    except Exception as exc:  # noqa: BLE001 - any misconfiguration is a catalog error
        raise CatalogError(f"cannot load catalog {spec.name!r}: {one_line(exc)}") from None


#: This process's loaded catalogs.
LOADED_CATALOGS = CatalogCache()


def _coerced(properties: Any) -> dict[str, Any]:
    """Catalog properties as ``load_catalog`` needs them. PyIceberg's configuration turns every value into a
    string, and botocore then fails on ``glue.max-retries`` (a TypeError): give it back its integer."""
    props: dict[str, Any] = dict(properties)
    if "glue.max-retries" in props:
        props["glue.max-retries"] = int(props["glue.max-retries"])
    return props


def configured_catalogs(names: Sequence[str] = ()) -> tuple[CatalogSpec, ...]:
    """Catalogs from PyIceberg's configuration (``.pyiceberg.yaml``, ``PYICEBERG_CATALOG__*``), all or ``names``.

    With no catalog configured at all, the embedded default: SQLite in ``./warehouse/catalog.db``.
    """
    config = pyiceberg_config()
    known = config.get_known_catalogs()
    if not known:
        unknown = [n for n in names if n != DEFAULT_CATALOG]
        if unknown:
            raise ConfigError(f"no PyIceberg catalog named {', '.join(unknown)} (none is configured)")
        return (embedded_catalog(),)
    wanted = list(dict.fromkeys(n.lower() for n in names)) or known
    missing = [n for n in wanted if n not in known]
    if missing:
        raise ConfigError(f"no PyIceberg catalog named {', '.join(missing)}; configured: {', '.join(sorted(known))}")
    return tuple(CatalogSpec.of(n, _flat(config.get_catalog_config(n) or {})) for n in wanted)


def pyiceberg_config() -> Any:
    """PyIceberg's configuration (``~/.pyiceberg.yaml``, ``PYICEBERG_HOME``, ``PYICEBERG_*``); an unreadable file is
    a configuration error naming it, not a traceback."""
    import yaml
    from pyiceberg.utils.config import Config

    try:
        return Config()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ConfigError(f"cannot read the PyIceberg configuration: {reason}", file=exc.filename) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"the PyIceberg configuration is not valid YAML: {' '.join(str(exc).split())}") from None


def embedded_sql_catalog(root: Path = WAREHOUSE) -> Any:
    """The embedded default catalog: SQLite in ``./warehouse/catalog.db``, warehouse ``./warehouse``."""
    from pyiceberg.catalog.sql import SqlCatalog

    root.mkdir(parents=True, exist_ok=True)
    root = root.resolve()
    return SqlCatalog(DEFAULT_CATALOG, uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")


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
