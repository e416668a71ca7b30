"""One bounded YAML reader, for the configuration files and ``check``'s rules files.

A YAML file is input we do not control: a FIFO would hang a plain read, ``/dev/zero`` would fill the memory, a few
kB of aliases blow up when walked (PyYAML shares alias nodes; the walk is ours), a 50,000-deep sequence overflows
the recursive composer, and ``.inf`` breaks arithmetic downstream. So: regular files only, a size cap, no anchors or
aliases, a depth cap checked on the event stream (which is iterative) before anything is composed, and finite numbers.
Errors name the file and a line and column, never the text. PyYAML is imported on the first file read: without a
configuration file, a command (and a rescan) does not pay for it.
"""
from __future__ import annotations

import math
import os
import stat
from functools import cache
from pathlib import Path
from typing import Any

from iceberg_lineage.errors import ConfigError
from iceberg_lineage.jsontypes import Json

#: The largest YAML file read (configuration and rules files are a few kB).
MAX_YAML_BYTES = 1024 * 1024
#: The deepest nesting of mappings and sequences accepted.
MAX_YAML_DEPTH = 64


@cache
def _loader() -> Any:
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(path: str | Path, what: str) -> Json:
    """The YAML document in the regular file ``path`` (``what`` it holds, for errors); a :class:`ConfigError` naming
    the file otherwise."""
    name = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens without waiting for a writer
    except OSError as exc:
        raise ConfigError(f"cannot read {what}: {exc.strerror or type(exc).__name__}", file=name) from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError("not a regular file", file=name)
        data = f.read(MAX_YAML_BYTES + 1)
    if len(data) > MAX_YAML_BYTES:
        raise ConfigError(f"larger than {MAX_YAML_BYTES // 1024} KiB", file=name)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError("not UTF-8 text", file=name) from None
    return parse_yaml(text, name)


def parse_yaml(text: str, source: str) -> Json:
    """The YAML document in ``text`` (from ``source``, named in errors), within the reader's limits."""
    import yaml

    try:
        _check_events(text, source)
        value = yaml.load(text, Loader=_loader())  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        raise ConfigError(f"not valid YAML{position(exc)}", file=source) from None
    _check_numbers(value, source)
    return value


def position(exc: BaseException) -> str:
    """Where a YAML parser (PyYAML, or strictyaml's ruamel) stopped: `` at line L, column C``, or nothing; never
    the text there, which may be a secret."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""


def _check_events(text: str, source: str) -> None:
    import yaml

    depth = 0
    for event in yaml.parse(text, Loader=_loader()):
        mark = event.start_mark
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise ConfigError(f"YAML anchors and aliases are not accepted (line {mark.line + 1}, column "
                              f"{mark.column + 1})", file=source)
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                raise ConfigError(f"YAML nested deeper than {MAX_YAML_DEPTH} levels (line {mark.line + 1})",
                                  file=source)
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1


def _check_numbers(value: Json, source: str) -> None:
    """No infinite or NaN number anywhere (the depth is bounded, so recursion is safe)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError("a number is not finite (.inf or .nan)", file=source)
    if isinstance(value, dict):
        for item in (*value.keys(), *value.values()):
            _check_numbers(item, source)
    elif isinstance(value, list):
        for item in value:
            _check_numbers(item, source)
