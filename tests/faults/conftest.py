"""Fixtures of the fault tests: one moto S3 server per test module, with a bucket."""
from __future__ import annotations

import logging

import pytest
from tests.support.faults import BUCKET, REGION


@pytest.fixture(scope="module")
def moto_s3():
    """The endpoint URL of a moto server holding bucket ``lake``."""
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    boto3.client("s3", endpoint_url=endpoint, region_name=REGION, aws_access_key_id="testing",
                 aws_secret_access_key="testing").create_bucket(Bucket=BUCKET)
    yield endpoint
    server.stop()
