"""Delivery to a real Apache Kafka broker (KRaft), confirmed per message by its delivery report.

Every event is read back with a consumer and compared with what was sent, its key with openlineage-python's own
keying of the typed event. The outage test stops the broker between two tables of a scan: nothing is lost, the
scan stops trying once its (short) delivery deadline passed, and ``replay`` after the restart delivers the rest,
with the keys they would have had.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Sequence

import pytest
import yaml
from openlineage.client import __version__ as openlineage_version
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import Job, Run, RunEvent, RunState
from openlineage.client.facet_v2 import parent_run
from openlineage.client.serde import Serde
from openlineage.client.transport.kafka import KafkaConfig, KafkaTransport

from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.client import make_client
from iceberg_lineage.delivery.delivery import Delivery, DeliveryStats
from iceberg_lineage.delivery.kafka import DEFAULT_MESSAGE_TIMEOUT_MS, message_key
from iceberg_lineage.delivery.pipeline import configured
from iceberg_lineage.delivery.replay import ReplayResult, replay
from iceberg_lineage.lineage.serde import from_json
from iceberg_lineage.scan.driver import ScanOptions, scan
from iceberg_lineage.scan.sinks import delivery_sink
from iceberg_lineage.state.store import StateStore
from tests.support.kafka import KafkaBroker
from tests.support.lineage_server import free_port
from tests.support.olschema import validate_event
from tests.support.scan import catalog_env, cli, spec_of, write_table

PRODUCER = "https://github.com/example/iceberg-lineage/tests"


#: openlineage-python's keying, on a transport that connects nowhere (its key methods read nothing of it).
KEYER = KafkaTransport.__new__(KafkaTransport)


def their_key(text: str) -> str | None:
    """openlineage-python's key for the typed event (its ``KafkaTransport`` keys only typed events)."""
    return KEYER._get_message_key(from_json(text))


def as_built(value: str) -> dict:
    """A message's event without the tag openlineage-python's client adds to every event it emits (the facet goes
    when that tag was its only one: the hook's runs carry a tag of their own)."""
    doc = json.loads(value)
    facets = doc["run"]["facets"]
    client_tag = {"key": "openlineage_client_version", "source": "OPENLINEAGE_CLIENT", "value": openlineage_version}
    assert facets["tags"]["tags"][-1] == client_tag
    facets["tags"]["tags"].pop()
    if not facets["tags"]["tags"]:
        del facets["tags"]
    return doc


def kafka_client(config: dict) -> OpenLineageClient:
    """openlineage-python's Kafka transport (on a copy: ``Delivery`` adds a default message timeout to it)."""
    return OpenLineageClient(transport=KafkaTransport(KafkaConfig.from_dict(
        {**config, "config": dict(config["config"])})))


class Sent:
    """The scan's sink through ``Delivery``, keeping every event JSON it was handed and each one's status."""

    def __init__(self, delivery: Delivery, after_first_table=None) -> None:
        self._sink = delivery_sink(delivery)
        self.texts: list[str] = []
        self.statuses: list[str] = []
        self._after_first_table = after_first_table

    def __call__(self, texts: Sequence[str]) -> Sequence[str]:
        statuses = self._sink(texts)
        self.texts += texts
        self.statuses += statuses
        if self._after_first_table is not None:
            self._after_first_table()
            self._after_first_table = None
        return statuses


def test_openlineage_python_alone_counts_an_unreachable_broker_as_sent():
    """The defect: its emit neither raises nor says anything when the broker never acknowledged the message."""
    transport = KafkaTransport(KafkaConfig.from_dict({"topic": "t", "config": {
        "bootstrap.servers": f"127.0.0.1:{free_port()}", "message.timeout.ms": "500", "log_level": "0"}}))
    assert transport.emit(RunEvent(eventType=RunState.START, eventTime="2026-12-01T00:00:00+00:00",
                                   run=Run("01932b4f-0000-7000-8000-000000000001"), job=Job("ns", "job"),
                                   producer=PRODUCER)) is None
    assert transport.producer is not None and len(transport.producer) == 0  # dropped after its timeout


def test_an_unacknowledged_message_is_spooled_with_the_reason_and_a_bounded_timeout(tmp_path):
    client = kafka_client({"topic": "t", "config": {"bootstrap.servers": f"127.0.0.1:{free_port()}",
                                                    "message.timeout.ms": "500", "log_level": "0"}})
    delivery = Delivery(client, Settings().updated({"spool.path": str(tmp_path / "spool")}))
    event = RunEvent(eventType=RunState.COMPLETE, eventTime="2026-12-01T00:00:00+00:00",
                     run=Run("01932b4f-0000-7000-8000-000000000002"), job=Job("ns", "job"), producer=PRODUCER)
    result = delivery.emit(event)
    assert (result.status, result.error) == ("spooled", "KafkaNotAcknowledged: _MSG_TIMED_OUT")
    # a configuration without a message timeout gets ours, not librdkafka's 300 s
    bare = kafka_client({"topic": "t", "config": {"bootstrap.servers": "127.0.0.1:1", "log_level": "0"}})
    ours = configured(bare.transport).transport.transport  # tap -> confirming wrapper -> openlineage's KafkaTransport
    assert ours.kafka_config.config["message.timeout.ms"] == DEFAULT_MESSAGE_TIMEOUT_MS == 30_000
    assert "message.timeout.ms" not in bare.transport.kafka_config.config  # the client's own transport is untouched


_PARENT = {"run": parent_run.Run("01932b4f-0000-7000-8000-00000000000a"), "job": parent_run.Job("airflow", "dag.task")}
_ROOT = parent_run.Root(run=parent_run.RootRun("01932b4f-0000-7000-8000-00000000000b"),
                        job=parent_run.RootJob("airflow", "dag"))


@pytest.mark.parametrize(("facets", "expected"), [
    ({}, "run:ns/job"),
    ({"parent": parent_run.ParentRunFacet(**_PARENT)}, "run:airflow/dag.task"),
    ({"parent": parent_run.ParentRunFacet(**_PARENT, root=_ROOT)}, "run:airflow/dag"),
])
def test_our_key_is_openlineage_pythons_key_of_the_typed_event(facets, expected):
    event = RunEvent(eventType=RunState.START, eventTime="2026-12-01T00:00:00+00:00",
                     run=Run("01932b4f-0000-7000-8000-000000000003", facets=facets), job=Job("ns", "job"),
                     producer=PRODUCER)
    assert KEYER._get_message_key(event) == expected
    assert message_key(json.loads(Serde.to_json(event))) == expected


def _scan(catalog, settings: Settings, state_path: Path, sink) -> object:
    with StateStore(state_path) as state:
        return scan(ScanOptions(catalogs=(spec_of(catalog),)), settings, state, sink)


def test_a_scan_through_openlineage_yml_delivers_every_event_with_its_key(kafka: KafkaBroker, sql_catalog, tmp_path,
                                                                          monkeypatch, state_path):
    topic = kafka.new_topic()
    config = tmp_path / "openlineage.yml"
    config.write_text(yaml.safe_dump({"transport": kafka.transport_config(topic)}))
    monkeypatch.setenv("OPENLINEAGE_CONFIG", str(config))
    write_table(sql_catalog, "db.orders", 3)
    write_table(sql_catalog, "db.items", 2)
    settings = Settings().updated({"spool.path": str(tmp_path / "spool")})
    delivery = Delivery(make_client(), settings)
    sink = Sent(delivery)

    summary = _scan(sql_catalog, settings, state_path, sink)

    assert summary.snapshots_emitted == 5 and sink.statuses == ["delivered"] * len(sink.texts)
    read = kafka.read(topic)
    assert [as_built(m.value) for m in read] == [json.loads(t) for t in sink.texts]
    assert [m.key for m in read] == [their_key(t) for t in sink.texts]
    assert sorted(m.key for m in read) == ["run:iceberg-lineage/db.items.commit"] * 2 * 2 + [
        "run:iceberg-lineage/db.orders.commit"] * 3 * 2  # each run's START and COMPLETE
    for message in read:
        validate_event(json.loads(message.value))
    assert delivery.stats == DeliveryStats(delivered=2 * 5)  # five runs, START and COMPLETE


def test_the_broker_stopped_mid_scan_loses_nothing_and_replay_delivers_the_rest(kafka: KafkaBroker, sql_catalog,
                                                                                tmp_path, state_path):
    topic = kafka.new_topic()
    for name in ("db.a", "db.b", "db.c"):
        write_table(sql_catalog, name, 2)
    config = kafka.transport_config(topic, message_timeout_ms=2000)
    # a short delivery deadline: after the first unacknowledged message the scan stops trying
    settings = Settings().updated({"spool.path": str(tmp_path / "spool"), "scan.delivery_deadline_s": 1.0,
                                   "delivery.breaker_cooldown_s": 0.0})
    delivery = Delivery(kafka_client(config), settings)
    sink = Sent(delivery, after_first_table=kafka.stop)
    try:
        summary = _scan(sql_catalog, settings, state_path, sink)
    finally:
        kafka.start()

    # each snapshot's run: START and COMPLETE
    assert sink.statuses == ["delivered"] * 4 + ["spooled"] * 8
    assert summary.delivery.deadline_passed and summary.failed == 0
    assert len(kafka.read(topic)) == 4
    with StateStore(state_path) as state:  # a spooled snapshot is the spool's to deliver: the scan moves on
        assert sum(len(state.watermark(t.identity).emitted) for t in state.tables(sql_catalog.name)) == 6

    assert replay(settings.spool.path, kafka_client(config)) == ReplayResult(8, 0)

    read = kafka.read(topic)
    assert [as_built(m.value) for m in read] == [json.loads(t) for t in sink.texts]
    assert [m.key for m in read] == [their_key(t) for t in sink.texts]
    assert len({(json.loads(m.value)["run"]["runId"], json.loads(m.value)["eventType"]) for m in read}) == 12


def test_the_cli_spools_what_an_unreachable_broker_did_not_acknowledge_and_replay_sends_it(kafka: KafkaBroker,
                                                                                           sql_catalog, tmp_path):
    """The user's path: ``scan`` and ``replay`` with the transport in ``openlineage.yml``."""
    write_table(sql_catalog, "db.orders", 2)
    topic = kafka.new_topic()
    down = kafka.transport_config(topic, message_timeout_ms=500)
    down["config"] = {**down["config"], "bootstrap.servers": f"127.0.0.1:{free_port()}"}
    (tmp_path / "down.yml").write_text(yaml.safe_dump({"transport": down}))
    (tmp_path / "up.yml").write_text(yaml.safe_dump({"transport": kafka.transport_config(topic)}))
    env = {**catalog_env(sql_catalog), "HOME": str(tmp_path)}

    scanned = cli("--catalog", sql_catalog.name, "--format", "json", "--no-progress",
                  env={**env, "OPENLINEAGE_CONFIG": str(tmp_path / "down.yml")}, cwd=tmp_path)
    summary = json.loads(scanned.stderr.strip().splitlines()[-1])  # the summary goes to stderr
    assert kafka.read(topic) == []

    def replay_cli(config: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "iceberg_lineage.cli", "replay"], cwd=tmp_path, text=True,
                              env={**os.environ, **env, "OPENLINEAGE_CONFIG": str(tmp_path / config)},
                              capture_output=True, timeout=120)

    still_down = replay_cli("down.yml")
    replayed = replay_cli("up.yml")

    assert still_down.returncode == 1 and "KafkaNotAcknowledged: _MSG_TIMED_OUT" in still_down.stderr

    # the work was done, the events wait in the spool: exit 3 (issue 28)
    assert (scanned.returncode, summary["snapshots"]["emitted"], summary["snapshots"]["spooled"]) == (3, 2, 2), \
        scanned.stderr
    # two runs, START and COMPLETE, and the scan's own run
    assert summary["events"].startswith("kafka (6 spooled to ")
    assert "KafkaNotAcknowledged: _MSG_TIMED_OUT" in scanned.stderr
    assert replayed.returncode == 0, replayed.stderr
    read = kafka.read(topic)
    assert [json.loads(m.value)["eventType"] for m in read] == ["START", *["START", "COMPLETE"] * 2, "COMPLETE"]
    assert [m.key for m in read] == ["run:iceberg-lineage/iceberg-lineage.scan",
                                     *["run:iceberg-lineage/db.orders.commit"] * 4,
                                     "run:iceberg-lineage/iceberg-lineage.scan"]
    assert [m.key for m in read] == [their_key(json.dumps(as_built(m.value))) for m in read]


def test_a_hooked_pyiceberg_writer_delivers_through_kafka(kafka: KafkaBroker, sql_catalog):
    """The hook's emitter thread goes through the same confirmed delivery: the CREATE's START and COMPLETE, then
    the append's, each acknowledged, in order, keyed as openlineage-python keys them."""
    from iceberg_lineage import hook
    from iceberg_lineage.delivery.emitter import EMITTERS
    from tests.support.hook import SCHEMA, rows

    topic = kafka.new_topic()
    EMITTERS.shutdown()
    try:
        hook.observe(sql_catalog, client=kafka_client(kafka.transport_config(topic)))
        sql_catalog.create_table("db.hooked", SCHEMA).append(rows(1, 2))
        assert EMITTERS.flush_all(30)
    finally:
        EMITTERS.shutdown()
    read = kafka.read(topic)
    events = [as_built(m.value) for m in read]
    assert [(e["job"]["name"], e["eventType"]) for e in events] == [
        ("db.hooked.pyiceberg", "START"), ("db.hooked.pyiceberg", "COMPLETE")] * 2
    assert [m.key for m in read] == [their_key(json.dumps(e)) for e in events] == [
        "run:iceberg-lineage/db.hooked.pyiceberg"] * 4
    for event in events:
        validate_event(event)
