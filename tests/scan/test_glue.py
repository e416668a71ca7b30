"""A Glue catalog with S3 storage, both served by one moto server: tables written through PyIceberg, scanned, and
named with the Glue ARN symlink Spark's OpenLineage integration uses."""
from __future__ import annotations

import logging

import pytest
from tests.support.olschema import validate_event

from iceberg_lineage.config import Settings
from iceberg_lineage.read.catalogs import CatalogSpec
from iceberg_lineage.scan.driver import ScanOptions, scan
from iceberg_lineage.state.store import StateStore
from tests.support.scan import Recorder, snapshot_ids, write_table

pytest.importorskip("moto.server")
pytest.importorskip("boto3")

ACCOUNT = "123456789012"
KEYS = {"access-key-id": "testing", "secret-access-key": "testing"}


@pytest.fixture
def glue_properties():
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing",
                     aws_secret_access_key="testing").create_bucket(Bucket="lake")
        props = {"type": "glue", "warehouse": "s3://lake/wh", "glue.id": ACCOUNT}
        for service in ("glue", "s3"):
            props |= {f"{service}.endpoint": endpoint, f"{service}.region": "us-east-1"}
            props |= {f"{service}.{k}": v for k, v in KEYS.items()}
        yield props
    finally:
        server.stop()


def test_glue_tables_on_s3_are_scanned_and_named_by_arn(glue_properties, tmp_path):
    from pyiceberg.catalog import load_catalog

    catalog = load_catalog("glue", **glue_properties)
    orders = write_table(catalog, "sales.orders", 3)
    write_table(catalog, "sales.returns", 1)
    spec = CatalogSpec.of("glue", glue_properties)

    sink = Recorder()
    with StateStore(tmp_path / "state.db") as state:
        summary = scan(ScanOptions(catalogs=(spec,)), Settings(), state, sink)

    assert summary.exit_code == 0, summary.failures
    assert summary.snapshots_emitted == 4
    mine = [e for e in sink.parsed if e["job"]["name"].startswith("sales.orders.")]
    assert snapshot_ids(mine) == [s.snapshot_id for s in sorted(orders.refresh().snapshots(),
                                                                  key=lambda s: s.sequence_number)]
    for event in sink.parsed:
        validate_event(event)
    output = mine[0]["outputs"][0]
    assert (output["namespace"], output["name"]) == ("s3://lake", "wh/sales.db/orders")
    symlinks = output["facets"]["symlinks"]["identifiers"]
    assert {"namespace": f"arn:aws:glue:us-east-1:{ACCOUNT}", "name": "table/sales/orders", "type": "TABLE"} in symlinks

    with StateStore(tmp_path / "state.db") as state:
        again = scan(ScanOptions(catalogs=(spec,)), Settings(), state, Recorder())
    assert again.snapshots_emitted == 0 and again.unchanged == 2
