"""OpenLineage's Spark integration (``io.openlineage:openlineage-spark_2.12``, ``make provision``) as the listener of
a Spark application of its own: a separate Python process with its own SparkSession, the suite's catalogs
(:func:`tests.support.engines.spark_conf`: Hadoop and JDBC; a REST catalog on the session's SeaweedFS when given),
and OpenLineage's file transport, one event per line.

:func:`run_application` runs the statements and returns the events OpenLineage Spark wrote for them.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

from tests.support.engines import INTEROP, REPO, _provision_error

OPENLINEAGE_SPARK_DIR = INTEROP / "openlineage-spark"
#: Seconds the whole application may take (it takes about 30 here).
APPLICATION_TIMEOUT_S = 240


def openlineage_spark_jar() -> Path | None:
    found = sorted(OPENLINEAGE_SPARK_DIR.glob("openlineage-spark_2.12-*.jar"))
    return found[-1] if found else None


def missing_openlineage_spark() -> str | None:
    if openlineage_spark_jar() is None:
        return f"no openlineage-spark_2.12 jar in {OPENLINEAGE_SPARK_DIR} (make provision)" \
               f"{_provision_error('openlineage-spark')}"
    return None


def listener_conf(events: Path, namespace: str) -> dict[str, str]:
    """OpenLineage Spark as the application's listener, writing to ``events`` (its file transport)."""
    return {
        "spark.extraListeners": "io.openlineage.spark.agent.OpenLineageSparkListener",
        "spark.openlineage.transport.type": "file",
        "spark.openlineage.transport.location": str(events),
        "spark.openlineage.namespace": namespace,
        "spark.openlineage.debugFacet": "disabled",
    }


def run_application(root: Path, statements: Sequence[str], *, extra_conf: dict[str, str] | None = None,
                    namespace: str = "peers") -> list[dict[str, Any]]:
    """Run ``statements`` in a Spark application of their own (the JVM's working directory is ``root``) with
    OpenLineage Spark listening; return every event it wrote, in order."""
    root.mkdir(parents=True, exist_ok=True)
    events = root / "openlineage-spark.jsonl"
    spec = {"root": str(root), "statements": list(statements), "conf": {**listener_conf(events, namespace),
                                                                          **(extra_conf or {})}}
    (root / "application.json").write_text(json.dumps(spec))
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "tests.support.openlineage_spark", str(root / "application.json")],
                          cwd=root, env=env, capture_output=True, text=True, timeout=APPLICATION_TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f"the Spark application failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return [json.loads(line) for line in events.read_text().splitlines() if line.strip()] if events.exists() else []


def _main(spec_path: str) -> None:
    """The application: a SparkSession with the suite's catalogs plus the listener, the statements, a clean stop
    (the listener writes the application's last events when the context stops)."""
    from pyspark.sql import SparkSession

    from tests.support.engines import spark_conf

    spec = json.loads(Path(spec_path).read_text())
    conf = spark_conf(Path(spec["root"]))
    conf["spark.app.name"] = "openlineage-spark-side-by-side"
    conf["spark.jars"] = ",".join([conf["spark.jars"], str(openlineage_spark_jar())])
    conf.update(spec["conf"])
    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    try:
        for statement in spec["statements"]:
            session.sql(statement).collect()
    finally:
        session.stop()


if __name__ == "__main__":
    _main(sys.argv[1])
