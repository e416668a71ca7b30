"""PyIceberg's configuration, found where PyIceberg finds it and checked before PyIceberg reads it.

PyIceberg reads the first non-empty ``.pyiceberg.yaml`` of ``$PYICEBERG_HOME``, ``~`` and the working folder, then
merges the ``PYICEBERG_*`` variables into it. It skips a path that is a directory, and a broken file fails the import
of ``pyiceberg.catalog`` with strictyaml's multi-line message. Here each of those is one :class:`ConfigError`
naming the file (with a line and column) or the variable and the key, never the value (it may be a secret).
"""
from __future__ import annotations

import copy
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from iceberg_lineage.config.yamlfile import position
from iceberg_lineage.errors import ConfigError

if TYPE_CHECKING:
    from pyiceberg.utils.config import Config

PYICEBERG_FILE = ".pyiceberg.yaml"
PYICEBERG_HOME = "PYICEBERG_HOME"
ENV_PREFIX = "PYICEBERG_"
#: What a catalog defined only by ``PYICEBERG_CATALOG__<NAME>__*`` variables is said to come from.
ENVIRONMENT = "environment"
#: The embedded SQLite catalog's name: never found by default, only when asked for by name.
DEFAULT_CATALOG = "default"
#: The URI schemes PyIceberg infers a catalog's type from, when ``type`` is not set (``infer_catalog_type``).
INFERRED_SCHEMES = ("http", "thrift", "sqlite", "postgresql")


def searched_files() -> tuple[Path, ...]:
    """Where PyIceberg looks for ``.pyiceberg.yaml``, in its order."""
    folders = [os.environ.get(PYICEBERG_HOME), os.path.expanduser("~"), os.getcwd()]
    return tuple(dict.fromkeys(Path(folder) / PYICEBERG_FILE for folder in folders if folder))


@dataclass(frozen=True)
class PyIcebergConfig:
    """PyIceberg's configuration, with where it was looked for and the file it was read from."""

    config: Config
    searched: tuple[Path, ...]
    file: Path | None
    file_catalogs: frozenset[str]

    @property
    def catalogs(self) -> list[str]:
        """The configured catalog names (lower case, as PyIceberg keeps them), sorted."""
        return sorted(self.config.get_known_catalogs())

    def catalog(self, name: str) -> Mapping[str, Any] | None:
        return self.config.get_catalog_config(name)

    def checked(self, name: str) -> Mapping[str, Any]:
        """The properties of the configured catalog ``name``, once its type is one PyIceberg can find (else a
        :class:`ConfigError` naming the key; PyIceberg's own message would quote every property)."""
        from pyiceberg.catalog import CatalogType

        props = self.catalog(name) or {}
        kind, impl, uri = props.get("type"), props.get("py-catalog-impl"), props.get("uri")
        if impl and kind:
            raise self._key_error(name, "type", "set together with py-catalog-impl: set one of them")
        if kind and str(kind).lower() not in {t.value for t in CatalogType}:
            known = ", ".join(t.value for t in CatalogType)
            raise self._key_error(name, "type", f"unknown catalog type (PyIceberg knows {known})")
        if not (kind or impl or uri):
            raise self._key_error(name, "uri", "missing (PyIceberg infers the catalog's type from it; or set type)")
        if not (kind or impl) and not str(uri).startswith(INFERRED_SCHEMES):
            schemes = ", ".join(INFERRED_SCHEMES)
            raise self._key_error(name, "uri", f"PyIceberg cannot infer the catalog's type from this URI's scheme "
                                               f"(it knows {schemes}): set type")
        return props

    def _key_error(self, name: str, key: str, reason: str) -> ConfigError:
        """An error about one key of a catalog: named by its variable when it is set there (or the catalog comes
        from the environment), else by the file and the dotted key."""
        variable = _variable("catalog", name, key.replace(".", "__").replace("-", "_"))
        if variable is None and self.source(name) == ENVIRONMENT:
            variable = f"{ENV_PREFIX}CATALOG__{name.upper()}__{key.upper().replace('.', '__').replace('-', '_')}"
        if variable is not None:
            return ConfigError(f"{variable}: {reason}")
        return ConfigError(f"catalog.{name}.{key}: {reason}", file=self.source(name))

    def source(self, name: str) -> str:
        """The file a catalog came from, or ``environment`` for one the variables alone define."""
        return str(self.file) if self.file is not None and name.lower() in self.file_catalogs else ENVIRONMENT

    def looked_for(self) -> str:
        return (f"looked for {', '.join(map(str, self.searched))} and {ENV_PREFIX}CATALOG__<NAME>__* environment "
                f"variables")

    def unknown(self, names: Sequence[str]) -> ConfigError:
        """The one error for catalog names that are not configured, whichever command asked."""
        known = (f"configured: {', '.join(self.catalogs)}" if self.catalogs
                 else f"none is configured ({self.looked_for()})")
        return ConfigError(f"no PyIceberg catalog named {', '.join(names)}; {known}")

    def none_configured(self) -> ConfigError:
        return ConfigError(f"no PyIceberg catalog is configured: {self.looked_for()}; `--catalog {DEFAULT_CATALOG}` "
                           "asks for the embedded SQLite catalog in ./warehouse")


def load_pyiceberg_config() -> PyIcebergConfig:
    """PyIceberg's configuration, its file and variables checked first (:class:`ConfigError` naming them)."""
    from pyiceberg.utils.config import Config

    searched = searched_files()
    file, data = _first_file(searched)
    try:
        config = Config()
    except OSError as exc:  # changed since it was checked
        raise _unreadable(exc, exc.filename) from None
    except ValueError:
        raise _conflict(data, file) from None
    _check_catalogs(config.config, file)
    catalogs = data.get("catalog") if data else None
    return PyIcebergConfig(config, searched, file, frozenset(str(k).lower() for k in (catalogs or {})))


def _first_file(paths: Sequence[Path]) -> tuple[Path | None, dict[str, Any]]:
    """The first of ``paths`` PyIceberg would read and its content, checked as strictyaml reads it."""
    import strictyaml

    for path in paths:
        try:
            mode = path.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            raise _unreadable(exc, path) from None
        if stat.S_ISDIR(mode):
            raise ConfigError("is a directory, not a PyIceberg configuration file", file=str(path))
        if not stat.S_ISREG(mode):
            raise ConfigError("not a regular file", file=str(path))
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise _unreadable(exc, path) from None
        except UnicodeDecodeError:
            raise ConfigError("not UTF-8 text", file=str(path)) from None
        try:
            data = strictyaml.load(text).data
        except strictyaml.StrictYAMLError as exc:  # YAML that strictyaml refuses (flow style, duplicate keys...)
            raise ConfigError(f"not valid YAML for PyIceberg{position(exc)} ({type(exc).__name__})",
                              file=str(path)) from None
        except Exception as exc:  # noqa: BLE001 - strictyaml's vendored ruamel has its own error classes
            raise ConfigError(f"not valid YAML{position(exc)}", file=str(path)) from None
        if not data:
            continue  # PyIceberg goes on to the next place
        if not isinstance(data, dict):
            raise ConfigError("not a mapping of settings", file=str(path))
        return path, {str(k).lower(): v for k, v in data.items()}
    return None, {}


def _unreadable(exc: OSError, path: object) -> ConfigError:
    return ConfigError(f"cannot read the PyIceberg configuration: {exc.strerror or exc}", file=str(path))


def _variable(*keys: str) -> str | None:
    """The ``PYICEBERG_*`` variable (any case) that sets ``keys``, if one does."""
    wanted = (ENV_PREFIX + "__".join(keys)).lower()
    return next((name for name in os.environ if name.lower() == wanted), None)


def _check_catalogs(config: Mapping[str, Any], file: Path | None) -> None:
    """``catalog`` and each catalog in it are mappings, as ``get_known_catalogs`` and ``get_catalog_config`` need."""
    catalogs = config.get("catalog", {})
    if not isinstance(catalogs, dict):
        where = _variable("catalog")
        raise ConfigError(f"{where}: must not be set (catalogs are set by {ENV_PREFIX}CATALOG__<NAME>__<KEY>)"
                          if where else "catalog must be a mapping of catalogs by name",
                          file=None if where else str(file))
    for name, properties in catalogs.items():
        if not isinstance(properties, dict):
            where = _variable("catalog", name)
            raise ConfigError(f"{where}: a catalog is a mapping: set {where}__<KEY> instead" if where
                              else f"catalog.{name} must be a mapping of properties", file=None if where else str(file))


def _conflict(data: Mapping[str, Any], file: Path | None) -> ConfigError:
    """The variable PyIceberg could not merge (it sets a key under one that is a single value), replayed as
    PyIceberg merges them, to name it instead of quoting PyIceberg's message, which shows the value."""
    tree: dict[str, Any] = copy.deepcopy(dict(data))
    for name, value in os.environ.items():
        if not name.lower().startswith(ENV_PREFIX.lower()):
            continue
        key = name.lower()[len(ENV_PREFIX):]
        parts = [p.replace("__", ".").replace("_", "-") for p in key.split("__", maxsplit=2)]
        node = tree
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                where = f" or {file}" if file is not None else ""
                return ConfigError(f"{name}: sets a key under {'.'.join(parts[:-1])}, which another {ENV_PREFIX}* "
                                   f"variable{where} sets to a single value")
        node[parts[-1]] = value
    return ConfigError(f"the {ENV_PREFIX}* environment variables do not merge with "
                       f"{file or 'each other'}")
