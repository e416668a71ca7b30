"""One small error hierarchy. Every error names the table and the file involved, so a CLI can print one line."""
from __future__ import annotations


class IcebergLineageError(Exception):
    """Base error: carries the table (name or location) and the file that could not be handled."""

    kind = "error"

    def __init__(self, reason: str, *, table: str | None = None, file: str | None = None) -> None:
        self.reason = reason
        self.table = table
        self.file = file
        super().__init__(self.one_line())

    def one_line(self) -> str:
        parts = []
        if self.table:
            parts.append(f"table {self.table}")
        if self.file:
            parts.append(f"file {self.file}")
        where = ", ".join(parts)
        return f"{where}: {self.reason}" if where else self.reason

    def __reduce__(self):
        # keep table and file when an error crosses a process boundary (worker pools, Dask)
        return (_rebuild, (type(self), self.reason, self.table, self.file))

    def with_table(self, table: str) -> "IcebergLineageError":
        """Return the same error naming ``table``; used where the table name is only known further up."""
        if self.table:
            return self
        return type(self)(self.reason, table=table, file=self.file)


def _rebuild(cls: type, reason: str, table: str | None, file: str | None) -> IcebergLineageError:
    return cls(reason, table=table, file=file)


class MetadataError(IcebergLineageError):
    """metadata.json missing, unreadable, not JSON, or not valid Iceberg table metadata."""

    kind = "metadata"


class ManifestError(IcebergLineageError):
    """A manifest list or manifest is missing, truncated or does not decode."""

    kind = "manifest"


class ManifestNotFoundError(ManifestError):
    """A manifest list or manifest does not exist: for a historical snapshot, expired rather than broken."""


class ManifestTooLargeError(ManifestError):
    """An Avro block inflates past the cap (``manifest.max_block_bytes``, 1 MiB per record): a decompression bomb
    is stopped before it takes the memory."""


class CatalogError(IcebergLineageError):
    """A catalog could not be loaded, listed, or the table is not in it."""

    kind = "catalog"


class ConfigError(IcebergLineageError):
    """Bad configuration or usage (CLI exit code 2)."""

    kind = "config"


class DeliveryError(IcebergLineageError):
    """An event could neither be delivered nor spooled."""

    kind = "delivery"
