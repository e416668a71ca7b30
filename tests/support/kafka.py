"""A real Apache Kafka broker (KRaft, one node as broker and controller) for the tests, from the jars ``make provision``
copies into ``.cache/interop/kafka/lib``; the Python side is confluent-kafka, openlineage-python's Kafka client.

The session fixture ``kafka`` starts it once on free ports of 127.0.0.1 and stops it at the end. A test can stop it
and start it again on the same ports and log (:meth:`KafkaBroker.stop`, :meth:`KafkaBroker.start`): what it
acknowledged survives, as in production.
"""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from tests.support.processes import stop_process_group, wait_started
from tests.support.engines import INTEROP, _provision_error, require
from tests.support.lineage_server import free_port

KAFKA_LIB = INTEROP / "kafka" / "lib"
#: Seconds the broker may take to answer after its start (it takes about 8 here).
START_TIMEOUT_S = 60.0
_JAVA_OPTIONS = ["-Xms128m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                 "-Djava.awt.headless=true"]
_LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.file.ref = file
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{HH:mm:ss}} %p %c{{1}}: %m%n
"""


def missing_kafka() -> str | None:
    """Why the broker or its client cannot run here (one line), or None."""
    if not shutil.which("java"):
        return "no java on PATH"
    if not any(KAFKA_LIB.glob("kafka_2.13-*.jar")):
        return f"no Kafka jars in {KAFKA_LIB} (make provision){_provision_error('kafka')}"
    if importlib.util.find_spec("confluent_kafka") is None:
        return "confluent-kafka is not installed (make provision)"
    return None


@dataclass(frozen=True)
class Message:
    key: str | None
    value: str
    partition: int
    offset: int


class KafkaBroker:
    """One KRaft node whose log lives in ``root``; ``start``/``stop`` may be called again and again."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port, self.controller_port = free_port(), free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None
        self._properties = root / "server.properties"
        self._log = root / "broker.log"
        root.mkdir(parents=True, exist_ok=True)
        (root / "log4j2.properties").write_text(_LOG4J2.format(log=self._log))
        self._properties.write_text("\n".join([
            "process.roles=broker,controller",
            "node.id=1",
            f"controller.quorum.voters=1@127.0.0.1:{self.controller_port}",
            f"listeners=PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
            f"advertised.listeners=PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names=CONTROLLER",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            f"log.dirs={root / 'data'}",
            "num.partitions=1",
            "offsets.topic.replication.factor=1",
            "offsets.topic.num.partitions=1",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "group.initial.rebalance.delay.ms=0",
            "auto.create.topics.enable=true",
        ]) + "\n")
        with open(self._log, "ab") as log:
            subprocess.run(self._command("kafka.tools.StorageTool", "format", "-t", _cluster_id(), "-c",
                                         str(self._properties)), stdout=log, stderr=log, check=True, timeout=120)

    def _command(self, main: str, *args: str) -> list[str]:
        return ["java", *_JAVA_OPTIONS, f"-Dlog4j2.configurationFile=file:{self.root / 'log4j2.properties'}",
                "-cp", f"{KAFKA_LIB}/*", main, *args]

    def start(self) -> None:
        """Start the broker and wait until it answers and leads the partitions of its log again."""
        assert self._process is None, "already running"
        with open(self._log, "ab") as log:
            self._process = subprocess.Popen(self._command("kafka.Kafka", str(self._properties)), stdout=log,
                                             stderr=log, start_new_session=True)
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap, "log_level": 0})
        wait_started(self._process, lambda: _answers(admin), timeout=START_TIMEOUT_S, what="Kafka",
                     output=lambda: f"see {self._log}", stop=self.stop)

    def stop(self) -> None:
        """Stop the broker (SIGTERM: a clean shutdown, its log kept), SIGKILL if it takes too long."""
        process, self._process = self._process, None
        if process is None:
            return
        stop_process_group(process, timeout=30)

    def new_topic(self) -> str:
        """A topic of its own for a test (one partition), created before anything is sent to it."""
        from confluent_kafka.admin import AdminClient, NewTopic

        topic = f"lineage-{uuid.uuid4().hex[:12]}"
        admin = AdminClient({"bootstrap.servers": self.bootstrap, "log_level": 0})
        admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])[topic].result(30)
        return topic

    def read(self, topic: str, timeout: float = 20.0) -> list[Message]:
        """Every message of the topic, from the start, in offset order (read until the end offset is reached)."""
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": f"read-{uuid.uuid4().hex}",
                             "enable.auto.commit": False, "auto.offset.reset": "earliest", "log_level": 0})
        deadline = time.monotonic() + timeout
        try:
            end = _end_offset(consumer, TopicPartition(topic, 0), deadline)
            consumer.assign([TopicPartition(topic, 0, 0)])
            messages: list[Message] = []
            while len(messages) < end and time.monotonic() < deadline:
                msg = consumer.poll(0.5)
                if msg is None or msg.error():
                    continue
                messages.append(Message(msg.key().decode() if msg.key() is not None else None,
                                        msg.value().decode(), msg.partition(), msg.offset()))
            return messages
        finally:
            consumer.close()

    def transport_config(self, topic: str, message_timeout_ms: int = 3000) -> dict:
        """An openlineage-python Kafka transport configuration for ``topic``, with a short message timeout."""
        return {"type": "kafka", "topic": topic, "config": {
            "bootstrap.servers": self.bootstrap, "message.timeout.ms": str(message_timeout_ms),
            "acks": "all", "log_level": "0"}}


def _end_offset(consumer, partition, deadline: float) -> int:
    """The partition's end offset, asked again while a restarted broker is still loading it."""
    from confluent_kafka import KafkaException

    while True:
        try:
            return int(consumer.get_watermark_offsets(partition, timeout=max(1.0, deadline - time.monotonic()))[1])
        except KafkaException:
            if time.monotonic() >= deadline:  # NOT_LEADER_FOR_PARTITION, though not flagged retriable, passes
                raise
            time.sleep(0.2)


def _answers(admin) -> bool:
    try:
        return _ready(admin.list_topics(timeout=1))
    except Exception:  # noqa: BLE001 - not up yet
        return False


def _ready(metadata) -> bool:
    """The broker answers, and leads every partition of the topics it had before a restart."""
    return bool(metadata.brokers) and all(
        p.leader >= 0 and p.error is None for t in metadata.topics.values() for p in t.partitions.values())


def _cluster_id() -> str:
    """A KRaft cluster id: 16 random bytes in URL-safe base64 without padding, as ``random-uuid`` prints."""
    import base64

    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


@pytest.fixture(scope="session")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """The session's Kafka broker (started once, stopped at the end)."""
    require("kafka")
    broker = KafkaBroker(tmp_path_factory.mktemp("kafka"))
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()
