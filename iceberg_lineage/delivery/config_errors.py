"""openlineage-python's configuration errors as one line naming the file or variable and the key.

openlineage-python finds and parses its configuration itself (``OPENLINEAGE_CONFIG``, ``./openlineage.yml``,
``~/.openlineage/openlineage.yml``, ``OPENLINEAGE__*``); we do not parse it again. But a file that is not YAML is
logged and ignored (events then go elsewhere, silently), a bad ``type`` is "ImportError: Failed to import htp" after
a logged "not enough values to unpack", and a missing key is a ``RuntimeError``. Here the file is checked the way
openlineage-python reads it, and its errors become a :class:`ConfigError` naming the key, never the value.
"""
from __future__ import annotations

import logging
import os
import re
from contextlib import contextmanager
from typing import Iterator

import yaml
from openlineage.client import OpenLineageClient

from iceberg_lineage.config.yamlfile import position
from iceberg_lineage.errors import ConfigError

ENV_PREFIX = "OPENLINEAGE__"
#: openlineage-python's words for a required key that is missing ("`url` key not passed to HttpConfig", "kafka
#: `config` not passed to KafkaConfig").
_MISSING = re.compile(r"`(\w+)`(?: key)? not passed to (\w+)")


def openlineage_file() -> str | None:
    """The ``openlineage.yml`` openlineage-python reads, found by its own rule."""
    return OpenLineageClient._find_yaml_config_path()  # noqa: SLF001 - its rule, not a copy of it


def checked_openlineage_file() -> str | None:
    """:func:`openlineage_file`, which must be a YAML mapping with a mapping ``transport`` if any."""
    path = openlineage_file()
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            content = yaml.safe_load(f)
    except yaml.YAMLError as exc:
        raise ConfigError(f"not valid YAML{position(exc)}", file=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the OpenLineage configuration: {type(exc).__name__}", file=path) from None
    if content is not None and not isinstance(content, dict):
        raise ConfigError("not a mapping of settings", file=path)
    if content and content.get("transport") is not None and not isinstance(content["transport"], dict):
        raise ConfigError("transport must be a mapping (type, url...)", file=path)
    return path


@contextmanager
def openlineage_errors() -> Iterator[None]:
    """Turn what openlineage-python raises while reading its configuration or building the transport into one
    :class:`ConfigError` (its own log line about a failed import is held back: the error says it)."""
    utils_log = logging.getLogger("openlineage.client.utils")
    level = utils_log.level
    utils_log.setLevel(logging.ERROR)
    try:
        yield
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - every way openlineage-python refuses its configuration
        raise named(exc) from None
    finally:
        utils_log.setLevel(level)


def named(exc: BaseException) -> ConfigError:
    """``exc`` as a ConfigError naming where the key is set (the variable if set, else the file) and the key."""
    missing = _MISSING.search(str(exc))
    if isinstance(exc, ImportError) or (isinstance(exc, TypeError) and "subclass of Transport" in str(exc)):
        from openlineage.client.transport import get_default_factory

        key, reason = "type", (f"unknown transport type (openlineage-python knows "
                               f"{', '.join(sorted(get_default_factory().transports))}, or a class path)")
    elif missing:
        kind = missing.group(2).removesuffix("Config").lower()
        key, reason = missing.group(1), f"missing (the {kind} transport needs it)"
    elif isinstance(exc, ValueError) and "Failed to parse OpenLineage config" in str(exc):
        key, reason = "", "not the structure openlineage-python expects (transport:, facets:, filters:...)"
    else:
        key, reason = "", f"openlineage-python cannot build the transport ({type(exc).__name__})"
    dotted = f"transport.{key}" if key else "transport"
    variable = ENV_PREFIX + "__".join(part.upper() for part in dotted.split("."))
    path = openlineage_file()
    if variable in os.environ or path is None:
        return ConfigError(f"{variable}: {reason}" if key else f"{ENV_PREFIX}* variables: {reason}")
    return ConfigError(f"{dotted}: {reason}", file=path)
