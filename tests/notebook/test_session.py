"""attach(): the hook's events reach the configured transport and the session's log, identical to what was sent;
preview_scan(): the scanner's dry run, kept; %lineage on a real IPython shell."""
from __future__ import annotations

import socket

import pyarrow as pa
import pytest
from openlineage.client import OpenLineageClient
from openlineage.client.transport.file import FileConfig, FileTransport
from openlineage.client.transport.http import HttpConfig, HttpTransport
from pyiceberg.expressions import GreaterThan

from iceberg_lineage.notebook import attach, preview_scan, session as session_module
from tests.support.userstate import USER_STATE

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])


def write_and_read(catalog) -> None:
    """Create, two appends and one filtered scan: 4 runs, START and COMPLETE each (8 events)."""
    table = catalog.create_table("db.t", schema=SCHEMA)
    table.append(pa.table({"id": [1, 2], "name": ["a", None]}, schema=SCHEMA))
    table.append(pa.table({"id": [3], "name": ["c"]}, schema=SCHEMA))
    assert table.scan(row_filter=GreaterThan("id", 1)).to_arrow().num_rows == 2


def test_log_holds_exactly_what_the_transport_received(sql_catalog, tmp_path):
    path = tmp_path / "sent.jsonl"
    client = OpenLineageClient(transport=FileTransport(FileConfig(log_file_path=str(path), append=True)))
    session = attach(sql_catalog, client=client)
    write_and_read(sql_catalog)
    events = session.events  # waits for the hook's queue first
    assert [ev.json for ev in events] == path.read_text().splitlines()
    assert [(ev.event_type, ev.job) for ev in events] == [
        *[("START", "db.t.pyiceberg"), ("COMPLETE", "db.t.pyiceberg")] * 3, ("START", "db.t.scan"),
        ("COMPLETE", "db.t.scan"),
    ]
    snapshots = [s.snapshot_id for s in sql_catalog.load_table("db.t").metadata.snapshots]
    assert [ev.outputs for ev in events[1:6:2]] == [["db.t"], *[[f"db.t @ {sid}"] for sid in snapshots]]
    assert events[-1].inputs == [f"db.t @ {snapshots[-1]}"]
    assert client.transport.kind == "file" and session.configured is client  # the caller's client is untouched
    status = session.status()
    assert (status.emitted, status.delivered, status.spooled, status.failed) == (8, 8, 0, 0)
    assert status.transport == f"file {path}"
    html = events._repr_html_()
    assert html.count("<tr>") == 1 + 8 and f"db.t @ {snapshots[-1]}" in html
    report = events.of_job(".scan")[-1].facet("icebergScanReport")
    assert report.data["snapshotId"] == snapshots[-1] and report.data["scanMetrics"]["resultDataFiles"] == 2
    assert events[-1]._repr_html_().startswith("<details open><summary>COMPLETE iceberg-lineage/db.t.scan")
    with pytest.raises(KeyError):
        events[-1].facet("noSuchFacet")


def test_default_client_writes_the_embedded_file(sql_catalog, tmp_path):
    session = attach(sql_catalog)
    write_and_read(sql_catalog)
    logged = [ev.json for ev in session.events]  # waits for the hook's queue first
    assert logged == (tmp_path / USER_STATE / "events.jsonl").read_text().splitlines() and len(logged) == 8
    assert session_module.current_session() is session


def test_unreachable_endpoint_is_spooled_and_still_logged(sql_catalog, tmp_path):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = OpenLineageClient(transport=HttpTransport(HttpConfig(
        url=f"http://127.0.0.1:{port}", timeout=2, retry={"total": 0})))
    session = attach(sql_catalog, client=client)
    write_and_read(sql_catalog)
    status = session.status()
    # The first event meets the closed port; the circuit breaker then spools the other seven without trying.
    assert (status.emitted, status.delivered, status.spooled, status.failed) == (1, 0, 8, 0)
    assert status.transport == f"http http://127.0.0.1:{port}"


def test_disabled_sends_and_logs_nothing(sql_catalog, monkeypatch):
    monkeypatch.setenv("OPENLINEAGE_DISABLED", "true")
    session = attach(sql_catalog)
    write_and_read(sql_catalog)
    assert len(session.events) == 0
    assert session.events._repr_html_() == "<div>no OpenLineage events yet</div>"
    assert session.status().transport == "nowhere (OPENLINEAGE_DISABLED)"


def test_preview_scan_sends_and_records_nothing(sql_catalog, tmp_path):
    from iceberg_lineage.demo.tables import write_demo_table

    table = write_demo_table(sql_catalog, "db.orders", commits=6)
    preview = preview_scan(sql_catalog)
    commits = preview.events.of_job(".commit")  # and the schema change's checks run (issue 18)
    runs = [ev for ev in commits if ev.data["eventType"] == "COMPLETE"]  # each after its START
    assert [ev.data["eventType"] for ev in commits] == ["START", "COMPLETE"] * len(runs)
    checks = preview.events.of_job(".checks")
    assert [(ev.data["eventType"], ev.job) for ev in checks] == [("START", "db.orders.checks"),
                                                                 ("COMPLETE", "db.orders.checks")]
    assert len(runs) == len(table.metadata.snapshots) == preview.summary.snapshots_emitted
    # what `scan --dry-run` prints: the scan's own run too, a START and a COMPLETE
    assert [ev.data["eventType"] for ev in preview.events.of_job(".scan")] == ["START", "COMPLETE"]
    assert len(preview.events) == 2 * len(runs) + 2 + 2
    assert [ev.data["outputs"][0]["facets"]["version"]["datasetVersion"] for ev in runs] == \
        [str(s.snapshot_id) for s in table.metadata.snapshots]
    assert not (tmp_path / USER_STATE).exists()
    assert "iceberg-lineage scan (dry run)" in preview._repr_html_()


@pytest.fixture
def shell(monkeypatch, tmp_path):
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    (tmp_path / "home").mkdir(exist_ok=True)
    monkeypatch.setattr(session_module, "_LATEST", session_module.LatestSession())
    config = Config()
    config.HistoryManager.enabled = False  # no history database nor its writer thread
    shell = InteractiveShell.instance(config=config)
    shell.run_line_magic("load_ext", "iceberg_lineage.notebook")
    yield shell
    InteractiveShell.clear_instance()


def test_lineage_magic(shell, sql_catalog):
    from IPython.utils.capture import capture_output

    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match="no session"):
        shell.run_line_magic("lineage", "status")
    for wrong in ("bogus", "stats", "events db.t"):
        with pytest.raises(UsageError, match="usage: %lineage"):
            shell.run_line_magic("lineage", wrong)
    session = attach(sql_catalog)
    write_and_read(sql_catalog)
    assert shell.run_line_magic("lineage", "status").emitted == 8
    assert [ev.json for ev in shell.run_line_magic("lineage", "events")] == [ev.json for ev in session.events]
    with capture_output() as shown:
        assert shell.run_line_magic("lineage", "stats db.t") is None
    kinds = [sorted(set(out.data) - {"text/plain"}) for out in shown.outputs]
    assert kinds == [["text/html"], ["text/html"], ["image/png"], ["image/png"], ["image/png"]]
    assert 'class="iceberg-lineage-snapshot"' in shown.outputs[0].data["text/html"]
