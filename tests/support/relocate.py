"""Make a copy of a table written elsewhere readable where it now lies: every path inside its metadata JSON,
manifest lists and manifests is rewritten from the writer's prefix to the copy's ``file://`` location.

Avro files are re-encoded with fastavro, keeping the writer schema, the codec and the header metadata (Iceberg keeps
its schema, partition spec and format version there), so readers see the files as the engine wrote them.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import fastavro


def _rewrite(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return new + value[len(old):] if value.startswith(old) else value
    if isinstance(value, dict):
        return {k: _rewrite(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_rewrite(v, old, new) for v in value]
    return value


def _rewrite_avro(path: Path, old: str, new: str) -> None:
    with path.open("rb") as f:
        reader = fastavro.reader(f)
        schema = reader.writer_schema
        codec = reader.codec
        header = {k: v for k, v in reader.metadata.items() if not k.startswith("avro.")}
        records = [_rewrite(r, old, new) for r in reader]
    with path.open("wb") as f:
        fastavro.writer(f, schema, records, codec=codec, metadata=header)


def relocated_copy(source: Path, destination: Path, old_prefix: str) -> Path:
    """Copy ``source`` (a table directory) to ``destination`` with every path under ``old_prefix`` moved there.

    Returns the current metadata file (the one ``version-hint.text`` names, else the newest).
    """
    import json

    shutil.copytree(source, destination)
    new_prefix = f"file://{destination.resolve()}"
    for metadata in destination.glob("metadata/*.metadata.json"):
        raw = json.loads(metadata.read_text())
        metadata.write_text(json.dumps(_rewrite(raw, old_prefix, new_prefix), indent=2))
    for avro in destination.glob("metadata/*.avro"):
        _rewrite_avro(avro, old_prefix, new_prefix)
    for hint in (destination / "metadata" / "version-hint.text", destination / "metadata" / "version-hint.txt"):
        if hint.exists():
            return destination / "metadata" / f"v{hint.read_text().strip()}.metadata.json"
    return max(destination.glob("metadata/*.metadata.json"), key=lambda p: p.stat().st_mtime)
