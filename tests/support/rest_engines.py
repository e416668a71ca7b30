"""Spark (Iceberg Java) on an Iceberg REST catalog: the session's SeaweedFS, directly or through another URI that
serves it (the REST proxy of issue 15).

The catalog is added to the running session (``spark.sql.catalog.<name>.*``): Spark loads a catalog on its first
use, from the session's configuration as it is then, so no restart is needed. Its files go through
``HadoopFileIO`` and S3A (hadoop-aws, ``make provision``), configured by the catalog's ``hadoop.``-prefixed
properties, which Iceberg lays over the session's Hadoop configuration for this catalog alone.
"""
from __future__ import annotations

from tests.support.engines import SparkEngine, require
from tests.support.seaweed import ACCESS_KEY, REGION, SECRET_KEY, WAREHOUSE, Seaweed


def s3a_properties(seaweed: Seaweed) -> dict[str, str]:
    """Hadoop's S3A settings for SeaweedFS's S3: plain HTTP, path-style, static keys, ``s3://`` served by S3A, and
    short timeouts and few retries, so that an unreachable store fails a test in seconds."""
    return {
        "fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        "fs.s3a.endpoint": seaweed.s3_endpoint,
        "fs.s3a.endpoint.region": REGION,
        "fs.s3a.path.style.access": "true",
        "fs.s3a.connection.ssl.enabled": "false",
        "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
        "fs.s3a.access.key": ACCESS_KEY,
        "fs.s3a.secret.key": SECRET_KEY,
        "fs.s3a.attempts.maximum": "2",
        "fs.s3a.retry.limit": "2",
        "fs.s3a.connection.establish.timeout": "5000",
        "fs.s3a.connection.timeout": "15000",
    }


def spark_catalog_properties(uri: str, seaweed: Seaweed) -> dict[str, str]:
    """An Iceberg ``SparkCatalog`` of ``type=rest`` at ``uri``, with SeaweedFS's OAuth2 client credentials."""
    return {
        "type": "rest",
        "uri": uri,
        "credential": seaweed.credential,
        "warehouse": f"s3://{WAREHOUSE}/",
        "io-impl": "org.apache.iceberg.hadoop.HadoopFileIO",
        # Never cache tables: other writers (DuckDB, PyIceberg) commit to the same catalog between statements.
        "cache-enabled": "false",
        **{f"hadoop.{key}": value for key, value in s3a_properties(seaweed).items()},
    }


def spark_rest_catalog(spark: SparkEngine, name: str, uri: str, seaweed: Seaweed) -> str:
    """Add the REST catalog ``name`` at ``uri`` to the session and return ``name``.

    Spark keeps a catalog once loaded: the same name again with the same URI is the same catalog; with another URI,
    it is an error (choose another name)."""
    require("hadoop-aws")
    prefix = f"spark.sql.catalog.{name}"
    current = spark.session.conf.get(f"{prefix}.uri", None)
    if current is not None and current != uri:
        raise ValueError(f"Spark catalog {name!r} is already configured at {current}, not {uri}")
    spark.session.conf.set(prefix, "org.apache.iceberg.spark.SparkCatalog")
    for key, value in spark_catalog_properties(uri, seaweed).items():
        spark.session.conf.set(f"{prefix}.{key}", value)
    return name
