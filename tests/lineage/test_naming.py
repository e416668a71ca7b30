"""Dataset naming: physical locations as the OpenLineage Spark integration normalises them, catalog symlinks."""
from __future__ import annotations

import dataclasses

import pytest

from tests.support.fixture_tables import fixture_table
from iceberg_lineage.config import Settings
from iceberg_lineage.lineage.events import job_name
from iceberg_lineage.lineage.facets import catalog_facet
from iceberg_lineage.lineage.naming import Identifier, catalog_identifier, dataset_identity, location_identity
from iceberg_lineage.redact import strip_userinfo as strip_credentials

LOCATION = Settings()
TABLE = Settings().updated({"naming.primary": "table"})


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("s3a://bucket/warehouse/db/t/", ("s3://bucket", "warehouse/db/t")),
        ("s3n://bucket/warehouse/db/t", ("s3://bucket", "warehouse/db/t")),
        ("s3://bucket/db/t", ("s3://bucket", "db/t")),
        ("gs://kevinliu_blmt", ("gs://kevinliu_blmt", "")),
        ("abfs://c@acct.dfs.core.windows.net/w/t", ("abfss://c@acct.dfs.core.windows.net", "w/t")),
        ("/tmp/warehouse/db/t/", ("file", "/tmp/warehouse/db/t")),
        ("file:/tmp/warehouse/db/t", ("file", "/tmp/warehouse/db/t")),
        ("file:///tmp/warehouse/db/t", ("file", "/tmp/warehouse/db/t")),
        ("hdfs://nn:8020/warehouse/db/t", ("hdfs://nn:8020", "/warehouse/db/t")),
        ("s3://key:secret@bucket/t", ("s3://bucket", "t")),
    ],
)
def test_location_identity(location, expected):
    assert location_identity(location) == expected


def test_strip_credentials():
    assert strip_credentials("postgresql+psycopg2://user:pw@db:5432/cat?sslmode=require&password=x") == (
        "postgresql+psycopg2://db:5432/cat?sslmode=require"
    )
    assert strip_credentials("sqlite:////tmp/cat.db") == "sqlite:////tmp/cat.db"
    assert strip_credentials("not a uri") == "not a uri"


def _catalog_table(catalog_type: str, props: dict, identifier=("db", "t"), location="s3a://bucket/wh/db/t"):
    base = fixture_table("impala_v1_trino_puffin_stats")
    metadata = dataclasses.replace(base.metadata, location=location)
    return dataclasses.replace(
        base, metadata=metadata, catalog_name="prod", catalog_type=catalog_type,
        catalog_properties=props, identifier=identifier,
    )


@pytest.mark.parametrize(
    ("catalog_type", "props", "env", "expected"),
    [
        ("glue", {"glue.id": "123456789012", "glue.region": "eu-west-1"}, {},
         Identifier("arn:aws:glue:eu-west-1:123456789012", "table/db/t")),
        ("glue", {"glue.id": "123456789012"}, {"AWS_REGION": "us-east-1"},
         Identifier("arn:aws:glue:us-east-1:123456789012", "table/db/t")),
        ("glue", {"glue.region": "eu-west-1"}, {}, None),  # no account id: left out, never guessed
        ("hive", {"uri": "thrift://hms:9083,thrift://hms2:9083"}, {}, Identifier("hive://hms:9083", "db.t")),
        ("rest", {"uri": "http://rest:8181/api/catalog/", "credential": "id:secret"}, {},
         Identifier("http://rest:8181/api/catalog", "db.t")),
        ("nessie", {"uri": "http://nessie:19120/api/v2"}, {}, Identifier("http://nessie:19120/api/v2", "db.t")),
        ("hadoop", {"warehouse": "hdfs://nn:8020/warehouse"}, {}, Identifier("hdfs://nn:8020/warehouse", "db.t")),
        ("hadoop", {"warehouse": "/tmp/warehouse"}, {}, Identifier("file:/tmp/warehouse", "db.t")),
        ("sql", {"uri": "postgresql+psycopg2://iceberg:pw@pg:5432/catalog", "warehouse": "s3://b/wh"}, {},
         Identifier("postgresql+psycopg2://pg:5432/catalog", "db.t")),
        ("static", {}, {}, None),
    ],
)
def test_catalog_symlink(catalog_type, props, env, expected):
    assert catalog_identifier(_catalog_table(catalog_type, props), env) == expected


def test_glue_symlink_from_the_account_resolved_at_catalog_load():
    """Naming stays pure: the account (and the Glue client's region) STS gave at load comes in on the table."""
    from iceberg_lineage.read.catalogs import AwsAccount

    resolved = dataclasses.replace(_catalog_table("glue", {}), aws_account=AwsAccount("210987654321", "eu-west-1"))
    assert catalog_identifier(resolved, {"AWS_REGION": "us-west-2"}) == Identifier(
        "arn:aws:glue:eu-west-1:210987654321", "table/db/t")
    configured = dataclasses.replace(resolved, catalog_properties={"glue.id": "123456789012", "glue.region": "us-east-1"})
    assert catalog_identifier(configured, {}) == Identifier("arn:aws:glue:us-east-1:123456789012", "table/db/t")
    region_unknown = dataclasses.replace(resolved, aws_account=AwsAccount("210987654321", None))
    assert catalog_identifier(region_unknown, {}) is None


def test_nested_namespace_and_primary_table():
    table = _catalog_table("rest", {"uri": "http://rest:8181"}, identifier=("sales", "gold", "orders"))
    identity = dataset_identity(table, LOCATION, {})
    assert (identity.namespace, identity.name) == ("s3://bucket", "wh/db/t")
    assert identity.symlinks == (Identifier("http://rest:8181", "sales.gold.orders", "TABLE"),)
    swapped = dataset_identity(table, TABLE, {})
    assert (swapped.namespace, swapped.name) == ("http://rest:8181", "sales.gold.orders")
    assert swapped.symlinks == (Identifier("s3://bucket", "wh/db/t", "LOCATION"),)
    assert job_name(table, "spark") == "sales.gold.orders.spark"


def test_bare_metadata_file_keeps_location_even_with_primary_table():
    table = fixture_table("impala_spark_v3_deletion_vectors")
    identity = dataset_identity(table, TABLE, {})
    assert identity == ("hdfs://localhost:20500", "/test-warehouse/iceberg_v3_deletion_vectors", ())
    assert job_name(table, "commit") == "iceberg_v3_deletion_vectors.commit"


def test_catalog_facet_never_carries_credentials():
    table = _catalog_table("sql", {
        "uri": "postgresql://iceberg:hunter2@pg/catalog", "warehouse": "s3://ak:sk@bucket/wh",
        "s3.access-key-id": "AKIA", "s3.secret-access-key": "sk", "token": "t", "rest.password": "p",
        "header.Authorization": "Bearer x", "s3.endpoint": "http://minio:9000",
    })
    facet = catalog_facet(table)
    assert (facet.type, facet.name, facet.framework, facet.source) == ("sql", "prod", "iceberg", "iceberg-lineage")
    assert facet.metadataUri == "postgresql://pg/catalog" and facet.warehouseUri == "s3://bucket/wh"
    assert facet.catalogProperties == {"s3.endpoint": "http://minio:9000"}
