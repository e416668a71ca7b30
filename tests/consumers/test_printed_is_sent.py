"""What is printed is what is sent (issue 28, finding 5): under every consumer profile, ``events`` and ``scan
--dry-run`` print exactly the events that ``events --emit`` and a real scan deliver to a real HTTP endpoint, after
the profile and the byte budget (one shaping function). The table is wide enough for datazone's 300,000-byte budget
to trim it, and its STARTs have no parent, which openmetadata fixes (or drops the START)."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest
from click.testing import CliRunner

from iceberg_lineage.cli import main
from iceberg_lineage.config import PROFILE_NAMES
from iceberg_lineage.lineage.facets.scan import SCAN_KEY
from tests.support.lineage_server import LineageServer
from tests.support.olschema import validate_event
from tests.support.scan import catalog_env

COLUMNS = 1500
#: The scan's own run: a fresh runId and the times and summary of each scan (a dry run says so in it).
SCANNER_JOB = "iceberg-lineage.scan"


@pytest.fixture(scope="module")
def wide(tmp_path_factory) -> dict[str, str]:
    """A PyIceberg SQLite catalog with one table of 1,500 documented columns and two snapshots: each snapshot's
    event is about 400,000 bytes as built; the catalog's environment configuration is returned."""
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    root = tmp_path_factory.mktemp("wide")
    (root / "warehouse").mkdir()
    catalog = SqlCatalog("wide", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}/warehouse")
    catalog.create_namespace("db")
    fields = [NestedField(i, f"measurement_{i:04d}_of_a_rather_long_descriptive_name",
                          StringType() if i % 2 else LongType(), required=False,
                          doc=f"the {i}th measurement, documented at length for the catalog")
              for i in range(1, COLUMNS + 1)]
    table = catalog.create_table("db.wide", schema=Schema(*fields))
    arrow = table.schema().as_arrow()
    for k in range(2):
        columns = [pa.array([f"value {k} {i}"] * 3 if i % 2 else [i + k, None, 3 * i], type=arrow.field(i - 1).type)
                   for i in range(1, COLUMNS + 1)]
        table.append(pa.Table.from_arrays(columns, schema=arrow))
    return catalog_env(catalog)


@pytest.fixture
def server(monkeypatch, tmp_path, wide):
    """A real OpenLineage HTTP endpoint, configured for every command of the test, with the catalog, the state and
    the spool in the test's folder."""
    with LineageServer() as lineage:
        for name, value in {**wide, "OPENLINEAGE__TRANSPORT__TYPE": "http",
                            "OPENLINEAGE__TRANSPORT__URL": lineage.url,
                            "ICEBERG_LINEAGE__STATE__PATH": str(tmp_path / "state" / "state.db"),
                            "ICEBERG_LINEAGE__SPOOL__PATH": str(tmp_path / "state" / "spool"),
                            "ICEBERG_LINEAGE__CONSUMER__CONNECTION": "default/iceberg/1764590400"}.items():
            monkeypatch.setenv(name, value)
        yield lineage


def invoke(*args: str) -> list[dict]:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def received(server: LineageServer) -> list[dict]:
    events = server.events()
    server.clear()
    for event in events:
        validate_event(event)
    return events


def per_run_fields_dropped(event: dict) -> dict:
    """``event`` without what differs from one command to the next: when the table's metrics were captured (the
    ``dataQualityMetrics`` facet's ``captureDate``: now), and the scan's own run's runId, times and summary."""
    if event.get("job", {}).get("name") == SCANNER_JOB:
        run = {**event["run"], "runId": None, "facets": {k: v for k, v in event["run"].get("facets", {}).items()
                                                          if k != SCAN_KEY}}
        return {**event, "eventTime": None, "run": run}
    return {**event, "outputs": [
        {**o, "facets": {k: ({**v, "captureDate": None} if k == "dataQualityMetrics" else v)
                         for k, v in o.get("facets", {}).items()}}
        for o in event.get("outputs", [])]}


def size(event: dict) -> int:
    return len(json.dumps(event, separators=(",", ":")).encode())


@pytest.mark.parametrize("profile", PROFILE_NAMES)
def test_events_prints_what_events_emit_sends(server, monkeypatch, profile):
    monkeypatch.setenv("ICEBERG_LINEAGE__CONSUMER__PROFILE", profile)
    table = ("--catalog", "wide", "--table", "db.wide", "--all-snapshots")

    printed = invoke("events", *table)
    assert invoke("events", *table, "--emit") == []
    sent = received(server)

    assert [per_run_fields_dropped(e) for e in printed] == [per_run_fields_dropped(e) for e in sent]
    assert len(sent) >= 2
    biggest = max(size(e) for e in sent)
    if profile == "datazone":
        assert biggest <= 300_000  # trimmed to the budget
    else:
        assert biggest > 300_000
    if profile == "openmetadata":  # a START without a parent is dropped, the COMPLETEs get the table's parent
        assert [e["eventType"] for e in sent] == ["COMPLETE", "COMPLETE"]
        assert all("parent" in e["run"]["facets"] for e in sent)


@pytest.mark.parametrize("profile", PROFILE_NAMES)
def test_scan_dry_run_prints_what_a_scan_sends(server, monkeypatch, profile):
    monkeypatch.setenv("ICEBERG_LINEAGE__CONSUMER__PROFILE", profile)
    scan = ("scan", "--catalog", "wide", "--no-progress")

    printed = invoke(*scan, "--dry-run")
    assert received(server) == []
    assert invoke(*scan) == []
    sent = received(server)

    assert [per_run_fields_dropped(e) for e in printed] == [per_run_fields_dropped(e) for e in sent]
    tables = [e for e in sent if e["job"]["name"] != SCANNER_JOB]
    assert len(tables) >= 2
    if profile == "datazone":
        assert max(size(e) for e in tables) <= 300_000
    if profile == "openmetadata":
        assert all("parent" in e["run"]["facets"] for e in tables)


def test_printing_needs_no_transport_and_shows_events_while_openlineage_is_disabled(server, monkeypatch):
    """A preview shows what would be sent: with OPENLINEAGE_DISABLED it still prints the same events."""
    table = ("events", "--catalog", "wide", "--table", "db.wide", "--all-snapshots")
    printed = invoke(*table)
    monkeypatch.setenv("OPENLINEAGE_DISABLED", "true")
    assert [per_run_fields_dropped(e) for e in invoke(*table)] == [per_run_fields_dropped(e) for e in printed]
    assert len(printed) == 4


def test_an_event_with_tags_of_its_own_prints_and_sends_the_same(server, tmp_path):
    """A worker's JSON event with a ``tags`` run facet (the client adds its own tag to it, in place) goes through
    the printing sink and the delivery sink alike."""
    from openlineage.client.facet_v2 import tags_run

    from iceberg_lineage.config import Settings
    from iceberg_lineage.delivery.client import make_client
    from iceberg_lineage.delivery.delivery import Delivery
    from iceberg_lineage.lineage.serde import to_json
    from iceberg_lineage.scan.sinks import delivery_sink, printing_sink
    from tests.support.delivery import run_event

    event = run_event()
    event.run.facets["tags"] = tags_run.TagsRunFacet(tags=[tags_run.TagsRunFacetFields("team", "sales", "USER")])
    text = to_json(event)
    lines: list[str] = []
    settings = Settings().updated({"spool.path": str(tmp_path / "spool")})
    assert printing_sink(lines.append, settings)([text]) == ["printed"]
    client = make_client()
    assert delivery_sink(Delivery(client, settings))([text]) == ["delivered"]
    client.close()
    [sent] = received(server)
    assert [json.loads(line) for line in lines] == [sent]
    assert [(t["key"], t["source"]) for t in sent["run"]["facets"]["tags"]["tags"]] == [
        ("team", "USER"), ("openlineage_client_version", "OPENLINEAGE_CLIENT")]


@pytest.mark.parametrize("columns", [1300, 1400])
def test_the_budget_counts_what_the_openlineage_client_adds(server, tmp_path, columns):
    """Trimmed as far as needed, an event lands just under datazone's 300,000 bytes; the client's own tags facet
    (added at send time) must not push it over: the body the server receives fits, and is the one printed."""
    from iceberg_lineage.config import Settings
    from iceberg_lineage.delivery.client import make_client
    from iceberg_lineage.delivery.delivery import Delivery
    from iceberg_lineage.delivery.preview import as_sent
    from iceberg_lineage.lineage.serde import to_json
    from tests.consumers.tables import size as built_size, snapshot_event

    event = snapshot_event(columns, doc="a column")
    assert built_size(event) > 350_000
    settings = Settings().updated({"consumer.profile": "datazone", "spool.path": str(tmp_path / "spool")})
    [printed] = [json.loads(to_json(e)) for e in as_sent([event], settings)]
    client = make_client()
    assert Delivery(client, settings).emit(snapshot_event(columns, doc="a column")).status == "delivered"
    client.close()
    [body] = server.received
    assert 299_000 < len(body) <= 300_000
    assert per_run_fields_dropped(json.loads(body)) == per_run_fields_dropped(printed)  # built twice: captureDate
    assert "tags" in printed["run"]["facets"]
    validate_event(body.decode())
