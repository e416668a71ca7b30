"""Real engines for the tests, provisioned by ``make provision`` into ``.cache/interop`` beside ``.venv``.

Registered from tests/conftest.py (``pytest_plugins``), so every suite can ask for the session-wide ``spark``
fixture: one Spark ``local[2]`` session with Iceberg Java, a Hadoop catalog and a JDBC catalog over SQLite that
PyIceberg's ``SqlCatalog`` shares (:meth:`SparkEngine.pyiceberg_catalog`). A component that is not provisioned
skips the tests that need it with a one-line reason; under ``CI=true`` they fail instead.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
INTEROP = REPO / ".cache" / "interop"
JARS = INTEROP / "jars"
ICEBERG_JAR_GLOB = "iceberg-spark-runtime-3.5_2.12-*.jar"
SQLITE_JDBC_JAR = Path("/usr/share/java/sqlite-jdbc.jar")
#: S3A for the REST catalog's S3 storage (tests/support/rest_engines.py): hadoop-aws and the AWS SDK it names.
S3A_JARS = (JARS / "hadoop-aws-3.3.4.jar", JARS / "aws-java-sdk-bundle-1.12.262.jar")
JNI_DIR = Path("/usr/lib/x86_64-linux-gnu/jni")

#: Spark catalogs of the session: a Hadoop catalog and a JDBC catalog (named as PyIceberg's SqlCatalog on it).
HADOOP, JDBC = "hadoop", "jdbc"

_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""


def _provision_error(name: str) -> str:
    """The last line `make provision` left for a component it could not provision, if any."""
    error = INTEROP / f"{name}.error"
    return f": {error.read_text().strip()}" if error.exists() else ""


def iceberg_jar() -> Path | None:
    found = sorted(JARS.glob(ICEBERG_JAR_GLOB))
    return found[-1] if found else None


def missing(component: str) -> str | None:
    """Why a component is not usable here (one line), or None when it is."""
    if component == "java":
        return None if shutil.which("java") else "no java on PATH"
    if component == "pyspark":
        return None if importlib.util.find_spec("pyspark") else "pyspark is not installed (make provision)"
    if component == "iceberg-spark-runtime":
        if iceberg_jar():
            return None
        return f"no {ICEBERG_JAR_GLOB} in {JARS} (make provision){_provision_error('iceberg')}"
    if component == "sqlite-jdbc":
        if SQLITE_JDBC_JAR.exists() and any(JNI_DIR.glob("libsqlitejdbc*")):
            return None
        return f"Debian's libxerial-sqlite-jdbc-java is not installed (make provision){_provision_error('sqlite-jdbc')}"
    if component == "hadoop-aws":
        if all(jar.exists() for jar in S3A_JARS):
            return None
        return f"no {' or '.join(j.name for j in S3A_JARS if not j.exists())} in {JARS} (make provision)" \
               f"{_provision_error('hadoop-aws')}"
    if component == "seaweedfs":
        from tests.support.seaweed import missing_seaweed

        return missing_seaweed()
    if component == "duckdb":
        from tests.support.duckdb_engine import missing_duckdb

        return missing_duckdb()
    if component == "sail":
        from tests.support.sail import missing_sail

        return missing_sail()
    if component == "flink":
        from tests.support.flink import missing_flink

        return missing_flink()
    if component == "trino":
        from tests.support.trino import missing_trino

        return missing_trino()
    if component == "iceberg-rest":
        from tests.support.iceberg_rest import missing_iceberg_rest

        return missing_iceberg_rest()
    if component == "kafka":
        from tests.support.kafka import missing_kafka

        return missing_kafka()
    if component in ("openmetadata", "datahub"):
        from tests.support.consumers import missing_consumer

        return missing_consumer(component)
    if component == "marquez":
        from tests.support.marquez import missing_marquez

        return missing_marquez()
    if component == "openlineage-spark":
        from tests.support.openlineage_spark import missing_openlineage_spark

        return missing_openlineage_spark()
    raise ValueError(component)


def require(*components: str) -> None:
    """Skip (fail under CI=true) unless every component is usable."""
    for component in components:
        reason = missing(component)
        if reason:
            if os.environ.get("CI", "").lower() == "true":
                pytest.fail(f"{component}: {reason}", pytrace=False)
            pytest.skip(f"{component}: {reason}")


def spark_conf(root: Path) -> dict[str, str]:
    """The session's configuration: local, on 127.0.0.1, no UI, quiet, short timeouts, both catalogs."""
    jars = [str(iceberg_jar())] + [str(jar) for jar in (SQLITE_JDBC_JAR, *S3A_JARS) if jar.exists()]
    log4j = root / "log4j2.properties"
    log4j.write_text(_LOG4J2)
    # C1 only and no code generation: the tests run many tiny statements, for which compiling costs more than it
    # saves (a table's build and checks take a third of the time).
    java_options = (f"-Djava.library.path={JNI_DIR} -Dlog4j.configurationFile=file:{log4j} -XX:+UseSerialGC "
                    "-XX:TieredStopAtLevel=1")
    conf = {
        "spark.master": "local[2]",
        "spark.app.name": "iceberg-lineage-tests",
        "spark.jars": ",".join(jars),
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.extraJavaOptions": java_options,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.warehouse.dir": str(root / "spark-warehouse"),
        "spark.local.dir": str(root / "spark-local"),
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.sql.codegen.wholeStage": "false",
        "spark.sql.adaptive.enabled": "false",
        # Shorter than Spark's defaults (120 s, 10 s, 300 s...): a stuck test fails in seconds, not minutes.
        "spark.network.timeout": "60s",
        "spark.executor.heartbeatInterval": "5s",
        "spark.rpc.askTimeout": "30s",
        "spark.rpc.lookupTimeout": "30s",
        "spark.sql.broadcastTimeout": "30",
        "spark.files.fetchTimeout": "30s",
        "spark.shuffle.io.maxRetries": "1",
        "spark.shuffle.io.retryWait": "1s",
        "spark.port.maxRetries": "8",
        "spark.task.maxFailures": "1",
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
    }
    for name, props in {
        HADOOP: {"type": "hadoop", "warehouse": f"file://{root / 'hadoop'}"},
        JDBC: {"type": "jdbc", "uri": f"jdbc:sqlite:{root / 'catalog.db'}", "jdbc.schema-version": "V1",
               "warehouse": f"file://{root / 'jdbc'}"},
    }.items():
        conf[f"spark.sql.catalog.{name}"] = "org.apache.iceberg.spark.SparkCatalog"
        # Never cache tables: other writers (PyIceberg, the hook) commit to the same catalog between statements.
        conf[f"spark.sql.catalog.{name}.cache-enabled"] = "false"
        conf.update({f"spark.sql.catalog.{name}.{key}": value for key, value in props.items()})
    return conf


@dataclass
class SparkEngine:
    """The session-wide Spark session and where its catalogs keep their tables."""

    session: Any
    root: Path

    def sql(self, statement: str) -> list:
        return self.session.sql(statement).collect()

    def metadata_location(self, table: str) -> str:
        """The table's newest metadata file, as Iceberg Java lists it (any catalog)."""
        rows = self.sql(f"SELECT file FROM {table}.metadata_log_entries ORDER BY timestamp DESC LIMIT 1")
        return rows[0].file

    def pyiceberg_catalog(self):
        """PyIceberg's SqlCatalog on the JDBC catalog's SQLite database (the same tables)."""
        require("sqlite-jdbc")
        from pyiceberg.catalog.sql import SqlCatalog

        return SqlCatalog(JDBC, uri=f"sqlite:///{self.root / 'catalog.db'}", warehouse=f"file://{self.root / 'jdbc'}")


def start_spark(root: Path):
    """A Spark session started from ``root`` (the JVM's working directory) with :func:`spark_conf`."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for key, value in spark_conf(root).items():
        builder = builder.config(key, value)
    cwd, local_ip = os.getcwd(), os.environ.get("SPARK_LOCAL_IP")
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.chdir(root)
    try:
        session = builder.getOrCreate()
    finally:
        os.chdir(cwd)
        if local_ip is None:
            os.environ.pop("SPARK_LOCAL_IP", None)
        else:
            os.environ["SPARK_LOCAL_IP"] = local_ip
    session.sparkContext.setLogLevel("ERROR")
    return session


@pytest.fixture(scope="session")
def spark(tmp_path_factory) -> SparkEngine:
    """One Spark session (Iceberg Java) for the whole run, stopped at its end."""
    require("java", "pyspark", "iceberg-spark-runtime")
    root = tmp_path_factory.mktemp("spark")
    session = start_spark(root)
    try:
        yield SparkEngine(session, root)
    finally:
        session.stop()
