"""Resolve what the user points at (a PyIceberg ``Table``, a ``metadata.json`` path or URI, a table location
directory, or a catalog name and identifier) into raw table metadata plus a FileIO that can read its files."""
from __future__ import annotations

import errno
import functools
import gzip
import io
import json
import os
import posixpath
import re
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, Callable, Mapping, Union

from iceberg_lineage.errors import CatalogError, ConfigError, MetadataError
from iceberg_lineage.read.catalogs import AwsAccount, catalog_account, catalog_config, one_line
from iceberg_lineage.read.files import check_scheme, local_path, open_regular, path_key, read_bounded
from iceberg_lineage.read.metadata import MetadataFile
from iceberg_lineage.read.metadata_json import parse_metadata
from iceberg_lineage.read.metadata_stream import STREAMED, Compactor, decode_metadata_text

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.io import FileIO, InputFile
    from pyiceberg.table import Table

    from iceberg_lineage.jsontypes import JsonObject

    #: What :func:`open_table` accepts: a table, a metadata path or table directory, or an identifier.
    TableRef = Union["LoadedTable", Table, str, "os.PathLike[str]", tuple[str, ...]]

#: Largest metadata.json we accept; anything bigger is hostile or broken, not a table.
MAX_METADATA_BYTES = 256 * 1024 * 1024
#: Largest manifest or manifest list fetched from an object store.
MAX_REMOTE_FILE_BYTES = 2 * 1024 * 1024 * 1024

_VERSION_RE = re.compile(r"^(?:v(\d+)|(\d+)-[^/]*)\.(?:gz\.)?metadata\.json(?:\.gz)?$")


class RelocatingIO:
    """A FileIO view that maps path prefixes, so tables copied away from where they were written stay readable.

    Paths inside Iceberg metadata are absolute and name the machine that wrote them; ``relocate`` maps an old
    prefix (``hdfs://nn:8020/warehouse/t``) to where the files are now (``/data/copy/t``). Prefixes and paths are
    compared by :func:`~iceberg_lineage.read.files.path_key`, whole segments only: Spark declares its location as
    ``file:///w/t`` but records every path inside as ``file:/w/t/...``. Relative paths are resolved against
    ``base`` (the directory that holds ``metadata/``).
    """

    def __init__(self, io: FileIO | _LazyFileIO, relocate: Mapping[str, str] | None = None,
                 base: str | None = None) -> None:
        self._io = io
        keyed = ((path_key(old), new) for old, new in (relocate or {}).items())
        self._relocate = sorted(keyed, key=lambda kv: -len(kv[0]))
        self._base = base

    @property
    def properties(self) -> Mapping[str, str]:
        return getattr(self._io, "properties", {})

    def resolve(self, path: str) -> str:
        key = path_key(path)
        for old, new in self._relocate:
            if key == old or key.startswith(old + "/"):
                return (new.rstrip("/") + key[len(old) :]) or new
        if self._base and "://" not in path and not path.startswith("/"):
            return posixpath.join(self._base, path)
        return path

    def open(self, path: str) -> IO[bytes]:
        """A readable stream. Remote files are fetched whole, in 1 MiB reads: the Avro reader's first 4-byte read
        would otherwise be a tiny ranged GET, and the AWS SDK cannot retry a throttled one (``503 SlowDown``)."""
        resolved = self.resolve(path)
        local = local_path(resolved)
        try:
            if local is not None:
                return open_regular(local)  # ~2x cheaper than a pyarrow stream
            check_scheme(resolved)
            stream = self._io.new_input(resolved).open()
        except FileNotFoundError as exc:
            # name where it was looked for: under --relocate that is not the path the metadata records
            raise FileNotFoundError(errno.ENOENT, "not found", exc.filename or local or resolved) from None
        with stream:
            return io.BytesIO(read_bounded(stream, MAX_REMOTE_FILE_BYTES))

    def read(self, path: str, limit: int | None = None) -> bytes:
        with self.open(path) as stream:
            data = stream.read() if limit is None else stream.read(limit + 1)
        if limit is not None and len(data) > limit:
            raise ValueError(f"file is larger than {limit} bytes")
        return data

    def new_input(self, path: str) -> InputFile:
        return self._io.new_input(self.resolve(path))


@dataclass(frozen=True)
class LoadedTable:
    """Everything the walker needs about one table: parsed metadata, a FileIO, and where it came from."""

    metadata: MetadataFile
    io: RelocatingIO
    name: str | None = None
    catalog_name: str | None = None
    catalog_type: str | None = None
    catalog_properties: Mapping[str, str] = field(default_factory=dict)
    identifier: tuple[str, ...] | None = None
    table: Table | None = field(default=None, compare=False, repr=False)
    #: A Glue catalog's account, resolved when the catalog was loaded (its tables' ARN symlink is made of it).
    aws_account: AwsAccount | None = None

    @property
    def display_name(self) -> str:
        if self.identifier:
            return ".".join(self.identifier)
        return self.name or self.metadata.location


class _LazyFileIO:
    """PyIceberg's FileIO for a location, loaded when a remote file is first read: local files are read without it,
    and importing it (``pyiceberg.io.pyarrow`` and pyarrow, ~0.5 s) was most of a command's start-up. ``load`` makes
    it (default: ``load_file_io`` of the properties), e.g. a catalog's own ``_load_file_io``: a scan's table on local
    files never needs one, and making two per table was a twentieth of a summary-depth scan."""

    def __init__(self, location: str, properties: Mapping[str, str] | None,
                 load: Callable[[], FileIO] | None = None) -> None:
        self.location = location
        self.properties = dict(properties or {})
        self._load = load

    @functools.cached_property
    def _io(self) -> FileIO:
        if self._load is not None:
            return self._load()
        from pyiceberg.io import load_file_io

        return load_file_io(self.properties, self.location)

    def new_input(self, path: str) -> InputFile:
        return self._io.new_input(path)


def _file_io(location: str, properties: Mapping[str, str] | None = None) -> _LazyFileIO:
    return _LazyFileIO(location, properties)


def catalog_file_io(catalog: Catalog, location: str, properties: Mapping[str, str] | None = None) -> _LazyFileIO:
    """The FileIO ``catalog`` gives a table (``_load_file_io``: its properties, then the table's ``properties``),
    made when a remote file is first read."""
    merged = {**catalog.properties, **(properties or {})}
    return _LazyFileIO(location, merged, functools.partial(catalog._load_file_io, properties or {}, location))


def _decode_metadata(data: bytes, path: str, streamed: Mapping[str, Compactor] = STREAMED) -> JsonObject:
    if path.endswith(".gz") or path.endswith(".gz.metadata.json") or data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except OSError as exc:
            raise MetadataError(f"corrupt gzip metadata: {exc}", file=path) from None
    try:
        text = data.decode(json.detect_encoding(data), "surrogatepass")  # as json.loads decodes bytes
        del data  # the caller passed its only copy: 200 MB at 400,000 snapshots, not kept beside the text
        return decode_metadata_text(text, streamed)
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, and an integer of more than 4,300 digits
        raise MetadataError(f"not valid JSON ({str(exc)[:200]})", file=path) from None
    except RecursionError:
        raise MetadataError("not valid JSON (nested too deeply)", file=path) from None


def read_metadata_file(io: FileIO | RelocatingIO | _LazyFileIO, path: str,
                       streamed: Mapping[str, Compactor] = STREAMED) -> JsonObject:
    """Read and JSON-decode one metadata file through a FileIO; errors name the file. ``streamed`` says what the
    elements of the long arrays become (by default :class:`Snapshot` models and log pairs)."""
    return _decode_metadata(_metadata_bytes(io, path), path, streamed)


def _metadata_bytes(io: FileIO | RelocatingIO | _LazyFileIO, path: str) -> bytes:
    local = local_path(path)
    try:
        if local is None:
            check_scheme(path)
        with open_regular(local) if local is not None else io.new_input(path).open() as stream:
            data = read_bounded(stream, MAX_METADATA_BYTES + 1)
    except FileNotFoundError:
        raise MetadataError("metadata file not found", file=path) from None
    except OSError as exc:
        raise MetadataError(f"cannot read metadata file: {exc}", file=path) from None
    if len(data) > MAX_METADATA_BYTES:
        raise MetadataError(f"metadata file is larger than {MAX_METADATA_BYTES} bytes", file=path)
    return data


def _metadata_version(name: str) -> int | None:
    m = _VERSION_RE.match(name)
    if not m:
        return None
    return int(m.group(1) or m.group(2))


def find_current_metadata(location: str, properties: Mapping[str, str] | None = None) -> str:
    """The current metadata file of a table directory: ``version-hint.text`` (or Impala's ``.txt``), else the
    newest metadata file by version number."""
    meta_dir = location.rstrip("/")
    if posixpath.basename(meta_dir) != "metadata":
        meta_dir = meta_dir + "/metadata"
    io = _file_io(meta_dir, properties)
    local = local_path(meta_dir)
    for hint_name in ("version-hint.text", "version-hint.txt"):
        hint_path = f"{meta_dir}/{hint_name}"
        try:
            with open_regular(f"{local}/{hint_name}") if local is not None else io.new_input(hint_path).open() as stream:
                hint = stream.read(64).decode("utf-8", "replace").strip()
        except (FileNotFoundError, OSError):
            continue
        if hint.isdigit():
            for candidate in (f"v{hint}.metadata.json", f"v{hint}.gz.metadata.json", f"v{hint}.metadata.json.gz"):
                if (os.path.isfile(f"{local}/{candidate}") if local is not None
                        else io.new_input(f"{meta_dir}/{candidate}").exists()):
                    return f"{meta_dir}/{candidate}"
    names = _list_dir(meta_dir, properties)
    versions = [(v, n) for n in names if (v := _metadata_version(n)) is not None]
    if not versions:
        raise MetadataError("no metadata file found in the table directory", file=meta_dir)
    return f"{meta_dir}/{max(versions)[1]}"


def _list_dir(path: str, properties: Mapping[str, str] | None) -> list[str]:
    local = local_path(path)
    try:
        if local is not None:
            return os.listdir(local)
        import fsspec

        fs, root = fsspec.core.url_to_fs(path, **_fsspec_options(path, properties))
        return [posixpath.basename(p.rstrip("/")) for p in fs.ls(root, detail=False)]
    except FileNotFoundError:
        raise MetadataError("table directory not found", file=path) from None
    except (OSError, ImportError, ValueError) as exc:
        raise MetadataError(f"cannot list the table directory: {exc}", file=path) from None


def _fsspec_options(path: str, properties: Mapping[str, str] | None) -> dict[str, Any]:
    props = properties or {}
    if path.startswith(("s3://", "s3a://", "s3n://")):
        opts: dict[str, Any] = {}
        client: dict[str, Any] = {}
        if "s3.endpoint" in props:
            client["endpoint_url"] = props["s3.endpoint"]
        if "s3.region" in props:
            client["region_name"] = props["s3.region"]
        if client:
            opts["client_kwargs"] = client
        if "s3.access-key-id" in props:
            opts["key"] = props["s3.access-key-id"]
            opts["secret"] = props.get("s3.secret-access-key")
        return opts
    return {}


def load_metadata_path(
    path: str,
    *,
    properties: Mapping[str, str] | None = None,
    relocate: Mapping[str, str] | None = None,
    name: str | None = None,
) -> LoadedTable:
    """Load a table from a ``metadata.json`` path/URI, or from a table location directory."""
    local = local_path(path)
    if local is None:
        try:
            check_scheme(path)
        except OSError as exc:
            raise MetadataError(str(exc), file=path) from None
    is_dir = os.path.isdir(local) if local is not None else not path.endswith(".json") and not path.endswith(".gz")
    if local is not None and not is_dir and not os.path.exists(local):
        raise MetadataError("metadata file not found", file=path)
    if is_dir:
        path = find_current_metadata(local if local is not None else path, properties)
    elif local is not None:
        path = local
    io = _file_io(path, properties)
    raw = read_metadata_file(io, path)
    metadata = parse_metadata(raw, path, name)
    base = metadata.location if "://" not in metadata.location else None
    reloc = dict(relocate or {})
    raw_location = raw.get("location") if isinstance(raw, Mapping) else None
    if isinstance(raw_location, str) and raw_location != metadata.location:
        # a relative location: files inside name paths relative to where the writer ran
        reloc.setdefault(raw_location, metadata.location)
    return LoadedTable(
        metadata=metadata,
        io=RelocatingIO(io, reloc, base=posixpath.dirname(metadata.location) if base else None),
        name=name or posixpath.basename(metadata.location.rstrip("/")),
        catalog_type="static",
    )


def catalog_type_of(catalog: Catalog) -> str:
    explicit = (getattr(catalog, "properties", {}) or {}).get("type")
    if explicit:
        return str(explicit).lower()
    cls = type(catalog).__mro__
    for klass in cls:
        n = klass.__name__.lower()
        for known in ("inmemory", "sql", "glue", "rest", "hive", "dynamodb", "bigquery"):
            if n.startswith(known):
                return "in-memory" if known == "inmemory" else known
    return type(catalog).__name__.lower()


def load_table_object(table: Table, *, relocate: Mapping[str, str] | None = None, read_file: bool = True) -> LoadedTable:
    """Wrap a PyIceberg ``Table``. The raw metadata file is re-read when it exists, because PyIceberg's parse can
    lose facts; otherwise the in-memory model is used."""
    metadata_location = getattr(table, "metadata_location", None)
    raw = None
    if read_file and metadata_location:
        try:
            raw = read_metadata_file(table.io, metadata_location)
        except MetadataError:
            raw = None
    if raw is None:
        raw = json.loads(table.metadata.model_dump_json(by_alias=True, exclude_none=True))
    catalog = getattr(table, "catalog", None)
    identifier = tuple(table.name()) if hasattr(table, "name") else None
    catalog_name = getattr(catalog, "name", None)
    if identifier and catalog_name and len(identifier) > 1 and identifier[0] == catalog_name:
        identifier = identifier[1:]
    metadata = parse_metadata(raw, metadata_location, ".".join(identifier) if identifier else None)
    return LoadedTable(
        metadata=metadata,
        io=RelocatingIO(table.io, relocate),
        name=identifier[-1] if identifier else None,
        catalog_name=catalog_name,
        catalog_type=catalog_type_of(catalog) if catalog is not None and catalog_name else "static",
        catalog_properties=dict(getattr(catalog, "properties", {}) or {}),
        identifier=identifier,
        table=table,
        aws_account=catalog_account(catalog),
    )


def load_from_catalog(
    catalog_name: str | Catalog, identifier: str | tuple[str, ...], *, relocate: Mapping[str, str] | None = None
) -> LoadedTable:
    """Load a table from a catalog configured the PyIceberg way (``.pyiceberg.yaml``, ``PYICEBERG_CATALOG__*``)."""
    ident = tuple(identifier.split(".")) if isinstance(identifier, str) else tuple(identifier)
    display = ".".join(ident)
    try:
        if isinstance(catalog_name, str):
            from iceberg_lineage.redact import protect

            config = dict(catalog_config(catalog_name))
            protect(config)  # before PyIceberg logs any of it
            from pyiceberg.catalog import load_catalog

            # the configuration as it is now: PyIceberg's own copy was read once, when it was first imported
            catalog = load_catalog(catalog_name, **config)
        else:
            catalog = catalog_name
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - any catalog misconfiguration is a catalog error
        raise CatalogError(f"cannot load catalog {catalog_name!r}: {one_line(exc)}", table=display) from None
    try:
        table = catalog.load_table(ident)
    except Exception as exc:  # noqa: BLE001
        raise CatalogError(f"cannot load table: {one_line(exc)}", table=display) from None
    try:
        return load_table_object(table, relocate=relocate)
    except MetadataError as exc:
        raise exc.with_table(display) from None


def open_table(
    ref: TableRef,
    *,
    catalog: str | Catalog | None = None,
    properties: Mapping[str, str] | None = None,
    relocate: Mapping[str, str] | None = None,
) -> LoadedTable:
    """Resolve any supported table reference into a :class:`LoadedTable`.

    ``ref`` is a PyIceberg ``Table``, a :class:`LoadedTable`, a metadata path/URI, a table location directory, or
    (with ``catalog``) a table identifier.
    """
    if isinstance(ref, LoadedTable):
        return ref
    if catalog is not None:
        return load_from_catalog(catalog, ref, relocate=relocate)
    if hasattr(ref, "metadata") and hasattr(ref, "io"):
        return load_table_object(ref, relocate=relocate)
    if isinstance(ref, (str, os.PathLike)):
        return load_metadata_path(os.fspath(ref), properties=properties, relocate=relocate)
    raise TypeError(f"cannot open a table from {type(ref).__name__}")
