"""A Spark application of its own (its own JVM, its own app id), run by tests/proxy/test_spark.py:

    python -m tests.proxy.spark_app ROOT PROXY_URI SEAWEED_JSON

It reads ``app.a`` and ``app.c`` and writes ``app.b`` through the REST catalog ``lake`` at the proxy, with Iceberg
Java's own metrics reporting (the REST catalog's default once ``/v1/config`` lists ``/metrics``), and prints its
application id as the last line."""
from __future__ import annotations

import json
import sys
from pathlib import Path


def main(root: str, proxy_uri: str, seaweed: str) -> None:
    from pyspark.sql import SparkSession

    from tests.support.engines import spark_conf
    from tests.support.rest_engines import spark_catalog_properties
    from tests.support.seaweed import Seaweed

    server = Seaweed(**{**json.loads(seaweed), "root": Path(json.loads(seaweed)["root"])})
    builder = SparkSession.builder
    conf = {**spark_conf(Path(root)), "spark.app.name": "iceberg-lineage-bridge-test",
            "spark.sql.catalog.lake": "org.apache.iceberg.spark.SparkCatalog",
            **{f"spark.sql.catalog.lake.{k}": v for k, v in spark_catalog_properties(proxy_uri, server).items()}}
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    spark.sql("INSERT INTO lake.app.b SELECT a.id, c.v FROM lake.app.a a JOIN lake.app.c c ON a.id = c.id")
    print(spark.sparkContext.applicationId, flush=True)
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:4])
