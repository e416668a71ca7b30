"""What a file may be before it is read: a regular local file (a named pipe would block a read forever), or a URI
of a scheme PyIceberg can read (anything else ends in a ValueError or, for HDFS without a client, in a page of JVM
noise)."""
from __future__ import annotations

import functools
import os
import stat
from typing import IO, TYPE_CHECKING

from iceberg_lineage.errors import ConfigError

if TYPE_CHECKING:
    from pyiceberg.io import InputStream

_FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"))


def open_regular(local: str) -> IO[bytes]:
    """Open a local file for reading, refusing anything but a regular file: reading a named pipe blocks forever.

    ``O_NONBLOCK`` lets the open of a pipe return at once (it changes nothing for a regular file); the type is
    checked on the open descriptor, so the file cannot be swapped between the check and the read."""
    fd = os.open(local, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _FILE_KINDS if test(mode)), "a device")
            raise OSError(f"{local} is {kind}, not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


#: Schemes read through pyarrow's libhdfs, which needs a JVM and a Hadoop client.
_HADOOP_SCHEMES = ("hdfs://", "viewfs://")


def check_scheme(uri: str) -> None:
    """Refuse, in one line, what cannot be read: a scheme PyIceberg has no FileIO for (``http`` ends in a
    ValueError deep inside it), or HDFS without a Hadoop client (the JVM prints dozens of lines before failing)."""
    from pyiceberg.io import SCHEMA_TO_FILE_IO

    scheme, sep, _ = uri.partition("://")
    if sep and scheme.lower() not in SCHEMA_TO_FILE_IO:
        raise ConfigError(
            f"{scheme}:// locations cannot be read (supported: {', '.join(sorted(SCHEMA_TO_FILE_IO))}); "
            "download the file, or use its catalog (--catalog)",
            file=uri,
        )
    if uri.lower().startswith(_HADOOP_SCHEMES) and (problem := hadoop_client_problem()):
        raise OSError(f"HDFS needs a Hadoop client: {problem}")


@functools.lru_cache(maxsize=1)
def hadoop_client_problem() -> str | None:
    """Why pyarrow's libhdfs cannot start here (no libjvm, no libhdfs), found without starting a JVM."""
    java_home = os.environ.get("JAVA_HOME") or "/usr/lib/jvm/default-java"
    jvm = ("lib/server/libjvm.so", "jre/lib/amd64/server/libjvm.so", "lib/amd64/server/libjvm.so", "libjvm.so")
    if not any(os.path.isfile(os.path.join(java_home, p)) for p in jvm):
        return f"no libjvm.so under JAVA_HOME ({java_home}); set JAVA_HOME to a JDK"
    hadoop_home = os.environ.get("HADOOP_HOME", "")
    dirs = [os.environ.get("ARROW_LIBHDFS_DIR", ""), os.path.join(hadoop_home, "lib", "native"), hadoop_home]
    if not any(d and os.path.isfile(os.path.join(d, "libhdfs.so")) for d in dirs):
        return "no libhdfs.so in ARROW_LIBHDFS_DIR or HADOOP_HOME/lib/native; set HADOOP_HOME and CLASSPATH"
    return None


def _strip_file_scheme(uri: str) -> str | None:
    """The path of a ``file:`` URI (``file://localhost/x``, ``file:///x`` and ``file:/x`` are ``/x``), else None."""
    if uri.startswith("file://localhost/"):
        return uri[len("file://localhost") :]
    if uri.startswith("file://"):
        return uri[len("file://") :]
    if uri.startswith("file:"):
        return uri[len("file:") :]
    return None


def local_path(uri: str) -> str | None:
    """The filesystem path of a local URI (``file:``, or no scheme), else ``None``."""
    stripped = _strip_file_scheme(uri)
    if stripped is not None:
        return stripped
    if "://" not in uri:
        return os.path.abspath(uri)
    return None


def path_key(uri: str) -> str:
    """A path as relocation compares it: one spelling per local path (``file:/x``, ``file:///x``,
    ``file://localhost/x`` and ``/x`` are ``/x``; ``./x`` is ``x``), without trailing slashes, so that
    ``key == prefix or key.startswith(prefix + "/")`` matches whole path segments. Relative paths stay relative:
    they are relative to wherever the writer ran, not to here."""
    stripped = _strip_file_scheme(uri)
    key = stripped if stripped is not None else uri
    while key.startswith("./"):
        key = key[2:]
    return key.rstrip("/")


def read_bounded(stream: IO[bytes] | InputStream, limit: int, chunk: int = 1 << 20) -> bytes:
    """Read at most ``limit`` bytes in chunks (``read(limit)`` would allocate ``limit`` bytes up front)."""
    parts, total = [], 0
    while total < limit:
        block = stream.read(min(chunk, limit - total))
        if not block:
            break
        parts.append(block)
        total += len(block)
    return b"".join(parts)
