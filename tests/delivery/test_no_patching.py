"""No module of ours sets an attribute on an openlineage-python object (issue 26): our delivery wraps its transports
and hands hardening to them through their configuration, and shaping makes new event objects. Every class of
openlineage-python's client, transports, configs, events and facets records the attribute writes made from our
code while the delivery paths run: there must be none."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from openlineage.client import OpenLineageClient
from openlineage.client.transport.http import HttpConfig, HttpTransport
from openlineage.client.transport.transport import Config, Transport
from openlineage.client.utils import RedactMixin
from tests.support.delivery import FAST, Answer, free_port, http_client, run_pairs
from tests.consumers.tables import linked_run, snapshot_event

from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.delivery import Delivery
from iceberg_lineage.delivery.preview import as_sent
from iceberg_lineage.delivery.replay import replay
from iceberg_lineage.lineage.shaping import shaped

PACKAGE = Path(__file__).resolve().parents[2] / "iceberg_lineage"


def _classes(*roots: type) -> set[type]:
    found, todo = set(), list(roots)
    while todo:
        cls = todo.pop()
        if cls not in found and cls.__module__.startswith("openlineage"):
            found.add(cls)
            todo.extend(cls.__subclasses__())
    return found


@pytest.fixture
def writes(monkeypatch):
    """(class, attribute, our module) of every attribute our code sets on an openlineage-python object."""
    seen: list[tuple[str, str, str]] = []
    for cls in _classes(OpenLineageClient, Transport, Config, RedactMixin):
        original = cls.__setattr__

        def spy(obj, name, value, _original=original):
            caller = sys._getframe(1).f_globals.get("__name__", "")
            if caller.startswith("iceberg_lineage") and type(obj).__module__.startswith("openlineage"):
                seen.append((type(obj).__name__, name, caller))
            _original(obj, name, value)

        monkeypatch.setattr(cls, "__setattr__", spy)
    return seen


def test_the_delivery_paths_set_no_attribute_on_openlineage_objects(writes, serve, tmp_path):
    settings = Settings().updated({"spool.path": str(tmp_path / "spool")})
    port = free_port()
    user = HttpTransport(HttpConfig.from_dict({"url": f"http://127.0.0.1:{port}", "retry": {"total": 0}}))
    delivery = Delivery(OpenLineageClient(transport=user), settings)
    assert {r.status for r in delivery.emit_many(run_pairs(2))} == {"spooled"}  # down: spooled, breaker open
    server = serve(port=port, script=lambda n, _body: Answer(200 if n else 400))
    replayed = replay(settings.spool.path, http_client(server.url, **FAST))  # the first refused, its run held back
    assert (replayed.delivered, replayed.remaining) == (2, 2)
    composite = {"type": "composite", "transports": {"a": {"type": "http", "url": server.url},
                                                     "b": {"type": "http", "url": f"http://127.0.0.1:{free_port()}",
                                                           "retry": {"total": 0}}}}
    fan_out = Delivery(OpenLineageClient(config={"transport": composite}), Settings().updated({"spool.path": str(tmp_path / "other"), "delivery.breaker_cooldown_s": 0}))
    assert fan_out.emit(run_pairs(1)[0]).status == "spooled"  # one target failed: kept for replay
    for profile in ("datahub", "dataplex", "openmetadata", "atlan", "datazone"):
        settings = Settings().updated({"consumer.profile": profile, "consumer.connection": "default/iceberg/1"})
        shaped(linked_run(150, 2), settings)
        shaped(snapshot_event(2000, doc="a column"), settings)
        as_sent([linked_run(150, 2), snapshot_event(2000, doc="a column")], settings)  # what printing commands show
    assert writes == []


def test_the_spy_sees_a_write_from_our_code(writes):
    transport = HttpTransport(HttpConfig(url="http://127.0.0.1:1"))
    exec(compile("transport.timeout = 1", str(PACKAGE / "delivery" / "x.py"), "exec"),
         {"__name__": "iceberg_lineage.delivery.x", "transport": transport})
    assert writes == [("HttpTransport", "timeout", "iceberg_lineage.delivery.x")]


def test_no_module_of_ours_patches_by_setattr_or_instance_dict():
    """What the runtime check cannot reach: ``setattr`` on a computed name, or writing an instance's ``__dict__``,
    appear nowhere in the delivery and lineage packages."""
    found = []
    for path in [*(PACKAGE / "delivery").rglob("*.py"), *(PACKAGE / "lineage").rglob("*.py"),
                 PACKAGE / "notebook" / "session.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("setattr", "object.__setattr__"):
                found.append(f"{path.name}:{node.lineno}")
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and "__dict__" in ast.unparse(node):
                found.append(f"{path.name}:{node.lineno}")
    assert found == []
