"""Where settings come from, and which source won.

Precedence: an explicit argument beats a CLI flag, which beats the environment (``ICEBERG_LINEAGE__SECTION__KEY``),
which beats a YAML file, which beats the defaults. The YAML file is the first of: the path in
``ICEBERG_LINEAGE_CONFIG``, ``./iceberg-lineage.yml``, ``~/.iceberg-lineage.yml``.
OpenLineage transport settings are not here: they stay with openlineage-python (``openlineage.yml``,
``OPENLINEAGE_*``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from iceberg_lineage.config.declare import ENV_PREFIX, build, keys_of, parse_setting
from iceberg_lineage.config.sections import Settings
from iceberg_lineage.config.yamlfile import read_yaml
from iceberg_lineage.errors import ConfigError

CONFIG_ENV = "ICEBERG_LINEAGE_CONFIG"
#: Every setting by its file key.
KEYS = keys_of(Settings)


@dataclass(frozen=True)
class Origin:
    """Where a value came from: ``default``, ``file`` (``name``: its path), ``env`` (``name``: the variable),
    ``flag`` or ``argument``."""

    kind: str
    name: str = ""

    def __str__(self) -> str:
        return f"{self.kind} {self.name}" if self.name else self.kind


DEFAULT = Origin("default")


def resolve(flags: Mapping[str, Any] | None = None, overrides: Mapping[str, Any] | None = None, *,
            env: Mapping[str, str] | None = None, cwd: Path | None = None,
            root: type[Settings] = Settings) -> tuple[Settings, dict[str, Origin]]:
    """The settings (of ``root``) and the origin of each value not left at its default.

    Keys are dotted (``column_stats.mode``); ``None`` values in flags and overrides mean "not given"."""
    env = os.environ if env is None else env
    given: list[tuple[str, Any, Origin]] = []
    path = find_config_file(env, cwd)
    if path is not None:
        given += [(key, value, Origin("file", str(path))) for key, value in _read_file(path, root).items()]
    given += [(".".join(part.lower() for part in name[len(ENV_PREFIX):].split("__")), value, Origin("env", name))
              for name, value in env.items() if name.startswith(ENV_PREFIX)]
    given += [(key, value, Origin("flag")) for key, value in (flags or {}).items() if value is not None and value != ()]
    given += [(key, value, Origin("argument")) for key, value in (overrides or {}).items() if value is not None]
    values: dict[str, Any] = {}
    origins: dict[str, Origin] = {}
    for key, raw, origin in given:
        values[key] = _parse(root, key, raw, origin)
        origins[key] = origin
    return build(root, values), origins


def load_settings(flags: Mapping[str, Any] | None = None, overrides: Mapping[str, Any] | None = None, *,
                  env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Settings:
    """Resolve settings: ``overrides`` (explicit arguments) > ``flags`` (CLI) > environment > YAML > defaults."""
    return resolve(flags, overrides, env=env, cwd=cwd)[0]


def _parse(root: type, key: str, raw: object, origin: Origin) -> object:
    """One value as its declared type; a bad one is an error naming the origin and the key, not the value."""
    try:
        return parse_setting(root, key, raw)
    except ConfigError as exc:
        if origin.kind == "file":
            raise ConfigError(exc.reason, file=origin.name) from None
        raise ConfigError(f"{origin.name}: {exc.reason}" if origin.kind == "env" else exc.reason) from None


def find_config_file(env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Path | None:
    env = os.environ if env is None else env
    explicit = env.get(CONFIG_ENV)
    if explicit:
        path = Path(explicit).expanduser()
        if not _is_file(path):
            raise ConfigError(f"{CONFIG_ENV} points at a missing file", file=str(path))
        return path
    for candidate in ((cwd or Path.cwd()) / "iceberg-lineage.yml", Path.home() / ".iceberg-lineage.yml"):
        if _is_file(candidate):
            return candidate
    return None


def _is_file(path: Path) -> bool:
    """``Path.is_file``, but a path that cannot even be looked at (``Path.is_file`` raises ``PermissionError`` for an
    unsearchable ``$HOME``) is a configuration error naming it, not a traceback."""
    try:
        return path.is_file()
    except OSError as exc:
        raise ConfigError(f"cannot read configuration: {exc.strerror or exc}", file=str(path)) from None


def _read_file(path: Path, root: type) -> dict[str, Any]:
    data = read_yaml(path, "configuration")
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ConfigError("configuration file is not a mapping", file=str(path))
    keys = keys_of(root)
    return _flatten(data, str(path), keys, {key.rpartition(".")[0] for key in keys} - {""})


def _flatten(data: Mapping[Any, Any], file: str, keys: Mapping[str, Any], sections: set[str],
             prefix: str = "") -> dict[str, Any]:
    """The file's values by dotted key, walked along the declared sections (a mapping-valued setting stays whole)."""
    out: dict[str, Any] = {}
    unknown = []
    for name, value in data.items():
        key = f"{prefix}{name}"
        if key in sections and value is None:
            continue  # a section left empty
        if key in sections:
            if not isinstance(value, Mapping):
                raise ConfigError(f"{key} must be a mapping of settings", file=file)
            out.update(_flatten(value, file, keys, sections, key + "."))
        elif key in keys:
            out[key] = value
        else:
            unknown.append(key)
    if unknown:
        raise ConfigError(f"unknown configuration keys: {', '.join(sorted(unknown))}", file=file)
    return out
