"""A Glue catalog with S3 storage, both served by one moto server: tables written through PyIceberg, scanned, and
named with the Glue ARN symlink Spark's OpenLineage integration uses. No account is configured: STS (moto's, on the
same endpoint) says whose it is, once per catalog, when the catalog is loaded."""
from __future__ import annotations

import json
import logging
import threading

import pytest
from tests.support.olschema import validate_event

from iceberg_lineage.config import Settings
from iceberg_lineage.read.catalogs import CatalogSpec
from iceberg_lineage.scan.driver import ScanOptions, scan
from iceberg_lineage.state.store import StateStore
from tests.support.scan import Recorder, snapshot_ids, write_table

pytest.importorskip("moto.server")
pytest.importorskip("boto3")

ACCOUNT = "123456789012"  # moto's account, as its STS answers
ARN = {"namespace": f"arn:aws:glue:us-east-1:{ACCOUNT}", "name": "table/sales/orders", "type": "TABLE"}
KEYS = {"access-key-id": "testing", "secret-access-key": "testing"}


@pytest.fixture
def glue_properties():
    import boto3
    import requests
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        requests.post(f"{endpoint}/moto-api/reset", timeout=30)  # moto's state is the process's: start empty
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing",
                     aws_secret_access_key="testing").create_bucket(Bucket="lake")
        props = {"type": "glue", "warehouse": "s3://lake/wh"}
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
    mine = [e for e in sink.terminal if e["job"]["name"].startswith("sales.orders.")]
    assert snapshot_ids(mine) == [s.snapshot_id for s in sorted(orders.refresh().snapshots(),
                                                                  key=lambda s: s.sequence_number)]
    for event in sink.parsed:
        validate_event(event)
    output = mine[0]["outputs"][0]
    assert (output["namespace"], output["name"]) == ("s3://lake", "wh/sales.db/orders")
    symlinks = output["facets"]["symlinks"]["identifiers"]
    assert ARN in symlinks

    with StateStore(tmp_path / "state.db") as state:
        again = scan(ScanOptions(catalogs=(spec,)), Settings(), state, Recorder())
    assert again.snapshots_emitted == 0 and again.unchanged == 2


@pytest.fixture
def sts_calls(monkeypatch):
    """The threads that asked STS for the account, and the answers, while the real call still happens."""
    from iceberg_lineage.read import catalogs

    calls: list[str] = []
    real = catalogs._caller_account

    def counted(catalog):
        calls.append(threading.current_thread().name)
        return real(catalog)

    monkeypatch.setattr(catalogs, "_caller_account", counted)
    return calls


@pytest.fixture
def emitters():
    """The hook's emitters, shut down afterwards (their threads and queues are the process's)."""
    from iceberg_lineage.delivery.emitter import EMITTERS

    yield EMITTERS
    EMITTERS.shutdown()


def test_a_directly_built_observed_glue_catalog_asks_sts_once_at_load(glue_properties, sts_calls, emitters, tmp_path):
    from openlineage.client import OpenLineageClient
    from openlineage.client.transport.file import FileConfig, FileTransport
    from pyiceberg.catalog.glue import GlueCatalog

    from iceberg_lineage.hook import observe

    log = tmp_path / "events.jsonl"
    client = OpenLineageClient(transport=FileTransport(FileConfig(log_file_path=str(log), append=True)))
    props = {k: v for k, v in glue_properties.items() if k != "type"}
    catalog = observe(GlueCatalog("glue", **props), client)
    assert sts_calls == [threading.current_thread().name]  # at load, on the loading thread
    orders = write_table(catalog, "sales.orders", 2)
    orders.scan().to_arrow()
    assert emitters.flush_all(30)
    assert len(sts_calls) == 1  # not again: neither on the commit path nor while naming
    events = [json.loads(line) for line in log.read_text().splitlines()]
    datasets = [d for e in events if e["eventType"] == "COMPLETE" for d in e["inputs"] + e["outputs"]]
    assert [(e["eventType"], e["job"]["name"]) for e in events] == [
        *[("START", "sales.orders.pyiceberg"), ("COMPLETE", "sales.orders.pyiceberg")] * 3,  # the CREATE, 2 commits
        ("START", "sales.orders.scan"), ("COMPLETE", "sales.orders.scan")]
    assert events[1]["outputs"][0]["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "CREATE"
    assert len(datasets) == 4 and all(ARN in d["facets"]["symlinks"]["identifiers"] for d in datasets)


def test_configured_account_wins_and_sts_failure_is_said_once_without_arn(glue_properties, sts_calls, tmp_path,
                                                                         caplog):
    from pyiceberg.catalog import load_catalog

    write_table(load_catalog("glue", **glue_properties), "sales.orders", 1)
    write_table(load_catalog("glue", **glue_properties), "sales.returns", 1)
    configured = CatalogSpec.of("configured", {**glue_properties, "glue.id": ACCOUNT})
    unreachable = CatalogSpec.of("unreachable", {**glue_properties, "sts.endpoint": "http://127.0.0.1:9"})

    symlinks = {}
    for spec in (configured, unreachable):
        sink = Recorder()
        with caplog.at_level(logging.WARNING), StateStore(tmp_path / f"{spec.name}.db") as state:
            summary = scan(ScanOptions(catalogs=(spec,)), Settings(), state, sink)
        assert summary.exit_code == 0, summary.failures
        assert sorted((e["eventType"], e["job"]["name"]) for e in sink.parsed) == [
            ("COMPLETE", "sales.orders.commit"), ("COMPLETE", "sales.returns.commit"),
            ("START", "sales.orders.commit"), ("START", "sales.returns.commit")]
        found = (e["outputs"][0]["facets"].get("symlinks", {}).get("identifiers", []) for e in sink.terminal)
        symlinks[spec.name] = {tuple((i["type"], i["namespace"]) for i in identifiers) for identifiers in found}
    arn = ("TABLE", f"arn:aws:glue:us-east-1:{ACCOUNT}")
    assert symlinks == {"configured": {(arn,)}, "unreachable": {()}}
    assert len(sts_calls) == 1  # for the catalog without a configured account only, and once for its two tables
    said = [r.getMessage() for r in caplog.records if "AWS account" in r.getMessage()]
    assert len(said) == 1 and said[0].startswith("catalog unreachable: cannot resolve its AWS account")
    assert "Glue tables get no ARN symlink" in said[0]


def test_a_rescan_lists_glue_tables_with_their_locations_and_loads_none(glue_properties, tmp_path):
    """Issue 32: GetTables gives each table's metadata location, up to 100 a page; an unchanged table costs no
    GetTable and no metadata read, and a changed one is read at that location, without a GetTable either. Counted
    as Glue calls per table, on the catalog's own client."""
    from collections import Counter

    from pyiceberg.catalog import load_catalog

    catalog = load_catalog("glue", **glue_properties)
    changing = write_table(catalog, "sales.orders", 2)
    for i in range(100):  # 101 tables (moto answers GetTables in one page; Glue in pages of up to 100)
        catalog.create_table(f"sales.empty_{i:03d}", schema=changing.schema())
    spec = CatalogSpec.of("glue", glue_properties)
    calls: Counter[str] = Counter()
    spec.load().glue.meta.events.register("before-call.glue", lambda model, **_: calls.update([model.name]))

    def rescan() -> tuple[int, int, Counter[str]]:
        calls.clear()
        sink = Recorder()
        with StateStore(tmp_path / "state.db") as state:
            summary = scan(ScanOptions(catalogs=(spec,)), Settings(), state, sink)
        assert summary.exit_code == 0, summary.failures
        return summary.unchanged, len(snapshot_ids(sink.terminal)), Counter(calls)

    unchanged, sent, first = rescan()
    assert (unchanged, sent, first["GetTable"], first["GetTables"]) == (100, 2, 0, 1)
    unchanged, sent, second = rescan()
    assert (unchanged, sent, second["GetTable"], second["GetTables"]) == (101, 0, 0, 1)
    assert sum(second.values()) <= 3, second  # GetDatabases and the GetTables page(s): 0.02 calls per table
    changing.append(changing.scan().to_arrow())
    unchanged, sent, third = rescan()
    assert (unchanged, sent, third["GetTable"]) == (100, 1, 0)
