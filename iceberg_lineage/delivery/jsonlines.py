"""File delivery serialised once: a transport wrapping openlineage-python's ``FileTransport`` (the embedded default,
``events.jsonl``, and any ``type: file``) that writes :func:`~iceberg_lineage.lineage.serde.to_json`'s text.

openlineage-python's ``emit`` serialises with ``Serde.to_json`` (``attr.asdict``, then a second walk dropping
nulls), which was a third of the hook's emitter time per commit; ``to_json`` gives the same bytes in one pass, and
an event built in plain form is only dumped. The wrapped transport keeps its configuration and its file handling
(path, append or one file per event, local or fsspec); in ``debug_mode`` (indented JSON) it writes as it always did.
"""
from __future__ import annotations

import io
from typing import Any, Union

from openlineage.client.transport.file import FileTransport

from iceberg_lineage.delivery.transports import Sendable, Wrapping, type_of
from iceberg_lineage.lineage.serde import to_json


def lines_file(file: Union[dict[str, Any], FileTransport]) -> dict[str, Any]:
    """The configuration of a :class:`JsonLinesTransport` around a file transport (its configuration, or itself)."""
    return {"type": type_of(JsonLinesTransport), "transport": file}


class JsonLinesTransport(Wrapping):
    """Writes each event to the wrapped ``FileTransport``'s file as ``to_json`` text, one line, with its errors."""

    kind = "iceberg_lineage_file"

    def emit(self, event: Sendable) -> None:
        file = self.transport
        assert isinstance(file, FileTransport)
        if file.config.debug_mode:
            file.emit(event)  # type: ignore[arg-type]
            return
        path = file._get_file_path(event)  # type: ignore[arg-type]
        try:
            with file._file_handler.open_file(path, "a" if file.config.append else "w") as f:
                f.write(to_json(event) + "\n")  # type: ignore[arg-type]
        except (PermissionError, io.UnsupportedOperation) as error:  # as FileTransport.emit words them
            raise RuntimeError(f"Log file `{path}` is not writeable") from error
        except Exception as error:
            raise RuntimeError(f"Failed to write to log file `{path}`: {error}") from error
