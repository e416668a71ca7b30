"""Flink 1.20 (PyFlink) for the tests (issue 30): one batch run per test session on an Iceberg REST catalog (the
bridge of :mod:`tests.support.live_bridge`), started on a thread as the session starts, so that its jobs (some 50 s
each here) overlap other tests.

``make provision`` installs ``apache-flink`` in a virtualenv of its own, ``.cache/interop/flink/venv`` (its pins
clash with .venv's), and its jars into ``.cache/interop/flink/jars``: Iceberg's Flink runtime and AWS bundle go into
``pipeline.jars``, Hadoop's client onto ``HADOOP_CLASSPATH`` (in ``pipeline.jars`` Flink cannot load it).
"""
from __future__ import annotations

import datetime as dt
import os
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.support.engines import INTEROP, _provision_error, require
from tests.support.seaweed import ACCESS_KEY, REGION, SECRET_KEY, WAREHOUSE
from tests.support.trino import run_client

FLINK_VENV = INTEROP / "flink" / "venv"
FLINK_JARS = INTEROP / "flink" / "jars"
PIPELINE_JARS = ("iceberg-flink-runtime-1.20-1.10.2.jar", "iceberg-aws-bundle-1.10.1.jar")
HADOOP_JARS = ("hadoop-client-api-3.4.1.jar", "hadoop-client-runtime-3.4.1.jar")
RUN_TIMEOUT_S = 900.0

#: Run in Flink's virtualenv, given {"jars", "setup", "jobs"} as JSON on stdin: the setup statements one by one,
#: then each job's INSERTs as one statement set (one Flink job), printing the job's id as a JSON line (on the
#: original stdout: the JVM's log goes to stderr).
_CLIENT = """
import json, os, sys
from pyflink.table import EnvironmentSettings, TableEnvironment
answers = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)  # Flink's JVM, which inherits stdout, logs there
spec = json.load(sys.stdin)
env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
config = env.get_config()
for key, value in {"pipeline.jars": ";".join(spec["jars"]), "parallelism.default": "1",
                   "rest.bind-address": "127.0.0.1", "rest.bind-port": "0"}.items():
    config.set(key, value)
for statement in spec["setup"]:
    env.execute_sql(statement).wait()
for job in spec["jobs"]:
    inserts = env.create_statement_set()
    for statement in job:
        inserts.add_insert_sql(statement)
    result = inserts.execute()
    result.wait()
    print(json.dumps(str(result.get_job_client().get_job_id())), file=answers, flush=True)
"""

CATALOG, NAMESPACE = "ice", "flinkns"
APPENDS, UPSERTS = f"{CATALOG}.{NAMESPACE}.appends", f"{CATALOG}.{NAMESPACE}.upserts"


def rows(start: int, count: int, part: str) -> str:
    """``count`` rows for :data:`APPENDS` as SQL VALUES: long names (past ``truncate(16)``), NaN and null amounts."""
    values = []
    for i in range(start, start + count):
        amount = "CAST('NaN' AS DOUBLE)" if i % 7 == 3 else ("CAST(NULL AS DOUBLE)" if i % 5 == 4 else
                                                              f"CAST({i * 1.5} AS DOUBLE)")
        name = "CAST(NULL AS STRING)" if i % 6 == 5 else f"'customer-with-a-long-name-{i:04d}'"
        ts = dt.datetime(2024, 1, 1, 10) + dt.timedelta(minutes=i)
        values.append(f"(CAST({i} AS BIGINT), {name}, {amount}, CAST({i}.25 AS DECIMAL(10, 2)), "
                      f"DATE '{dt.date(2024, 1, 1 + i % 3)}', TIMESTAMP '{ts}', {str(i % 2 == 0).upper()}, '{part}')")
    return f"VALUES {', '.join(values)}"


def spec(catalog_uri: str, s3_endpoint: str) -> dict:
    """Two jobs, each writing both tables: :data:`APPENDS` (v2, partitioned) gets an append per job;
    :data:`UPSERTS` (v2, ``write.upsert.enabled``: an equality delete for every row written) gets six keys, then the
    even ids the second job reads from :data:`APPENDS` (as the first job left it), three of them keys already."""
    catalog = {"type": "iceberg", "catalog-type": "rest", "uri": catalog_uri, "credential": f"{ACCESS_KEY}:{SECRET_KEY}",
               "warehouse": f"s3://{WAREHOUSE}/", "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
               "s3.endpoint": s3_endpoint, "s3.path-style-access": "true", "s3.access-key-id": ACCESS_KEY,
               "s3.secret-access-key": SECRET_KEY, "client.region": REGION}
    options = ", ".join(f"'{key}'='{value}'" for key, value in catalog.items())
    return {
        "jars": [f"file://{FLINK_JARS / jar}" for jar in PIPELINE_JARS],
        "setup": [f"CREATE CATALOG {CATALOG} WITH ({options})",
                  f"CREATE DATABASE IF NOT EXISTS {CATALOG}.{NAMESPACE}",
                  f"CREATE TABLE {APPENDS} (id BIGINT, name STRING, amount DOUBLE, price DECIMAL(10, 2), `day` DATE, "
                  "ts TIMESTAMP(6), flag BOOLEAN, part STRING) PARTITIONED BY (part) WITH ('format-version'='2')",
                  f"CREATE TABLE {UPSERTS} (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED) "
                  "WITH ('format-version'='2', 'write.upsert.enabled'='true')"],
        "jobs": [[f"INSERT INTO {APPENDS} {rows(0, 10, 'a')}",
                  f"INSERT INTO {UPSERTS} VALUES " + ", ".join(f"(CAST({i} AS BIGINT), 'v1-{i}')" for i in range(6))],
                 [f"INSERT INTO {APPENDS} {rows(10, 10, 'b')}",
                  f"INSERT INTO {UPSERTS} SELECT id, CONCAT('v2-', CAST(id AS STRING)) FROM {APPENDS} "
                  "WHERE id % 2 = 0"]],
    }


def run_flink(root: Path, catalog_uri: str, s3_endpoint: str) -> list[str]:
    """The Flink jobs' ids, in order, once they all finished."""
    (root / "client.py").write_text(_CLIENT)
    env = {**os.environ, "HADOOP_CLASSPATH": ":".join(str(FLINK_JARS / jar) for jar in HADOOP_JARS),
           "JVM_ARGS": "-Xmx1g", "AWS_REGION": REGION}
    return run_client(FLINK_VENV / "bin" / "python", root / "client.py", [], spec(catalog_uri, s3_endpoint), "Flink",
                      RUN_TIMEOUT_S, env)


def missing_flink() -> str | None:
    if not any(FLINK_VENV.glob("lib/python*/site-packages/pyflink/__init__.py")):
        return f"no Flink in {FLINK_VENV} (make provision){_provision_error('flink')}"
    absent = [jar for jar in (*PIPELINE_JARS, *HADOOP_JARS) if not (FLINK_JARS / jar).exists()]
    return f"no {', '.join(absent)} in {FLINK_JARS} (make provision){_provision_error('flink-jars')}" if absent else None


@dataclass
class FlinkRun:
    """The session's Flink jobs (:func:`spec`), which run in the background: :meth:`job_ids` waits."""

    jobs: Future

    def job_ids(self) -> list[str]:
        return self.jobs.result(timeout=RUN_TIMEOUT_S)


@pytest.fixture(scope="session")
def flink_run(live_bridge, tmp_path_factory) -> FlinkRun:
    """Flink's jobs on the bridge, run on a thread."""
    require("flink")
    pool = ThreadPoolExecutor(1, thread_name_prefix="flink")
    run = FlinkRun(pool.submit(run_flink, tmp_path_factory.mktemp("flink"), live_bridge.proxy.uri,
                               live_bridge.seaweed.s3_endpoint))
    try:
        yield run
    finally:
        pool.shutdown(wait=True)
