"""The delivery outcome over Kafka (issue 28, finding 4): with no broker (a free port, a message timeout of two
seconds in the transport's configuration), ``scan``, ``events --emit`` and ``check --emit`` spool what was never
acknowledged and exit 3, where a scan used to exit 0 saying "12 emitted"; with the session's real broker, every event
has its delivery report and they exit 0. Every message is read back from the topic."""
from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

from iceberg_lineage.cli import main
from iceberg_lineage.cli.common import EXIT_OK, EXIT_SPOOLED
from tests.support.checks import new_table, rows
from tests.support.delivery import waiting_in
from tests.support.kafka import KafkaBroker
from tests.support.lineage_server import free_port
from tests.support.olschema import validate_event
from tests.support.userstate import USER_STATE
from tests.support.scan import catalog_env, write_table

SPOOL = USER_STATE / "spool"
#: librdkafka's message timeout in these tests: how long an unacknowledged message is waited for.
TIMEOUT_MS = 2000


def use_kafka(monkeypatch, tmp_path, kafka: KafkaBroker, topic: str, *, up: bool) -> None:
    """``openlineage.yml`` with a Kafka transport: the real broker, or a port nothing listens on."""
    transport = kafka.transport_config(topic, message_timeout_ms=TIMEOUT_MS)
    if not up:
        transport["config"]["bootstrap.servers"] = f"127.0.0.1:{free_port()}"
    config = tmp_path / "openlineage.yml"
    config.write_text(yaml.safe_dump({"transport": transport}))
    monkeypatch.setenv("OPENLINEAGE_CONFIG", str(config))


def waiting() -> int:
    return waiting_in(SPOOL)


def sent(kafka: KafkaBroker, topic: str) -> list[dict]:
    events = [json.loads(m.value) for m in kafka.read(topic)]
    for event in events:
        validate_event(event)
    return events


def scan(sql_catalog, monkeypatch) -> tuple[int, dict]:
    for key, value in catalog_env(sql_catalog).items():
        monkeypatch.setenv(key, value)
    result = CliRunner().invoke(main, ["scan", "--format", "json", "--no-progress"])
    return result.exit_code, json.loads(result.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("up", [False, True], ids=["no broker", "broker"])
def test_a_kafka_scan_counts_delivery_reports(kafka: KafkaBroker, sql_catalog, tmp_path, monkeypatch, up):
    write_table(sql_catalog, "db.orders", 4)
    write_table(sql_catalog, "db.items", 2)
    topic = kafka.new_topic()
    use_kafka(monkeypatch, tmp_path, kafka, topic, up=up)

    code, summary = scan(sql_catalog, monkeypatch)

    # six snapshots' runs, START and COMPLETE each, and the scan's own START and COMPLETE
    events = 6 * 2 + 2
    received = sent(kafka, topic)
    assert (code, summary["exit_code"]) == ((EXIT_OK, EXIT_OK) if up else (EXIT_SPOOLED, EXIT_SPOOLED))
    assert summary["snapshots"]["emitted"] == 6
    if up:
        assert len(received) == events and waiting() == 0
        assert (summary["snapshots"]["delivered"], summary["snapshots"]["spooled"], summary["spooled_events"]) == (
            6, 0, 0)
        assert received[-1]["run"]["facets"]["icebergLineageScan"]["exitCode"] == EXIT_OK
    else:
        assert received == [] and waiting() == events
        assert (summary["snapshots"]["delivered"], summary["snapshots"]["spooled"], summary["spooled_events"]) == (
            0, 6, events)


def events_args(sql_catalog) -> list[str]:
    table = write_table(sql_catalog, "db.orders", 2)
    return ["events", "--metadata", table.metadata_location, "--all-snapshots", "--emit"]


def check_args(sql_catalog) -> list[str]:
    table = new_table(sql_catalog, "checked")
    table.append(rows(0, 3))
    return ["check", "--metadata", table.metadata_location, "--emit", "--format", "json"]


@pytest.mark.parametrize(("args", "count"), [(events_args, 2 * 2), (check_args, 2)], ids=["events", "check"])
@pytest.mark.parametrize("up", [False, True], ids=["no broker", "broker"])
def test_events_and_check_emit_over_kafka(kafka: KafkaBroker, sql_catalog, tmp_path, monkeypatch, args, count, up):
    topic = kafka.new_topic()
    use_kafka(monkeypatch, tmp_path, kafka, topic, up=up)

    result = CliRunner().invoke(main, args(sql_catalog))

    assert result.exit_code == (EXIT_OK if up else EXIT_SPOOLED), result.output
    assert (len(sent(kafka, topic)), waiting()) == ((count, 0) if up else (0, count))
