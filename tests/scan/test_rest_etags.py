"""A REST catalog's listing gives no metadata location, so a rescan asks each table's ``loadTable`` with the ETag the
catalog sent when the table was fully emitted, and skips it on 304 (issue 32, section 1). Against Apache Iceberg's own
REST server (1.11, which sends ETags), with every event delivered to a real local HTTP server and every loadTable
answer counted on the catalog's own session."""
from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from tests.support.delivery import Answer, LineageServer
from tests.support.proxy import start_proxy
from tests.support.rescan import in_order, scan_to, snapshots_sent
from tests.support.scan import lifecycle, write_table

from iceberg_lineage.read.catalogs import CatalogSpec
from iceberg_lineage.scan.discovery import TableFilter
from iceberg_lineage.scan.summary import ScanSummary
from iceberg_lineage.state.store import StateStore


class Answers:
    """The status of every ``loadTable`` answer the scan's catalog got (GET of a table), and whether it was asked
    with ``If-None-Match``."""

    def __init__(self, spec: CatalogSpec) -> None:
        self._lock = threading.Lock()
        self._seen: list[tuple[int, bool]] = []
        spec.load()._session.hooks["response"].append(self._hook)

    def _hook(self, response: Any, *_args: Any, **_kwargs: Any) -> None:
        request = response.request
        if request.method == "GET" and "/tables/" in request.url:
            with self._lock:
                self._seen.append((response.status_code, "If-None-Match" in request.headers))

    def take(self) -> list[tuple[int, bool]]:
        """(status, asked with an ETag) of each load since the last call, sorted."""
        with self._lock:
            seen, self._seen = self._seen, []
        return sorted(seen)


@dataclass(frozen=True)
class Rest:
    """A test's catalog on the session's server, under a name of its own (so the process-wide client is this
    test's), and its namespace of its own (the only one its scans look at)."""

    catalog: Any
    spec: CatalogSpec
    ns: str

    def scan(self, server: LineageServer, state_path, tmp_path, settings: dict | None = None,
             **options: Any) -> ScanSummary:
        return scan_to(server, self.spec, state_path, tmp_path, settings,
                       filters=TableFilter(namespaces=(self.ns,)), **options)

    def asked_and_unchanged(self, server: LineageServer, state_path, tmp_path, answers: Answers,
                            **options: Any) -> tuple[int, list, list[tuple[int, bool]]]:
        """A rescan of a one-table namespace: (tables unchanged, what the server received, the loadTable answers);
        ``(1, [], [NOT_MODIFIED])`` when the table was asked with its ETag, answered 304 and nothing was sent."""
        unchanged = self.scan(server, state_path, tmp_path, **options).unchanged
        return unchanged, server.received, answers.take()


def rest_on(catalog: Any, properties: dict[str, str]) -> Rest:
    """A test's :class:`Rest` on the catalog ``properties`` name (written through ``catalog``)."""
    name = f"rest_{uuid.uuid4().hex[:8]}"
    return Rest(catalog, CatalogSpec.of(name, {"type": "rest", **properties}), f"ns_{uuid.uuid4().hex[:8]}")


@pytest.fixture
def rest(iceberg_rest) -> Rest:
    return rest_on(iceberg_rest.catalog(), {"uri": iceberg_rest.uri})


def etags(state_path, spec: CatalogSpec) -> dict[str, str | None]:
    """The ETag recorded for each table of the catalog, by name."""
    with StateStore(state_path, readonly=True) as state:
        return {".".join(t.identifier): t.etag for t in state.tables(spec.name)}


FRESH, NOT_MODIFIED, CHANGED = (200, False), (304, True), (200, True)
#: A one-table rescan that asked with the ETag, got 304 and sent nothing.
UNCHANGED = (1, [], [NOT_MODIFIED])


def test_a_rescan_asks_each_table_and_loads_only_the_changed_one(rest, state_path, tmp_path):
    catalog, spec, ns = rest.catalog, rest.spec, rest.ns
    tables = {name: write_table(catalog, f"{ns}.{name}", 2) for name in ("a", "b", "c")}
    answers = Answers(spec)
    with LineageServer() as server:
        first = rest.scan(server, state_path, tmp_path)
        assert sorted(snapshots_sent(server)) == sorted(s for t in tables.values() for s in in_order(t))
        assert (first.updated, answers.take()) == (3, [FRESH] * 3)
        recorded = etags(state_path, spec)
        assert sorted(recorded) == [f"{ns}.{n}" for n in "abc"] and all(recorded.values())

        again = rest.scan(server, state_path, tmp_path)
        assert (snapshots_sent(server), again.unchanged, answers.take()) == ([], 3, [NOT_MODIFIED] * 3)

        write_table(catalog, f"{ns}.b", 1, start=100)
        third = rest.scan(server, state_path, tmp_path)
        assert snapshots_sent(server) == in_order(tables["b"])[-1:]
        assert (third.updated, third.unchanged, answers.take()) == (1, 2, [CHANGED, NOT_MODIFIED, NOT_MODIFIED])
        assert etags(state_path, spec)[f"{ns}.b"] not in (None, recorded[f"{ns}.b"])
        assert rest.scan(server, state_path, tmp_path).unchanged == 3 and answers.take() == [NOT_MODIFIED] * 3


def test_a_stop_mid_table_asks_without_an_etag_until_everything_was_sent(rest, state_path, tmp_path):
    catalog, spec, ns = rest.catalog, rest.spec, rest.ns
    order = in_order(write_table(catalog, f"{ns}.t", 4))
    answers = Answers(spec)
    with LineageServer(script=lambda n, _body: Answer(200 if n < 3 else 500)) as failing:
        stopped = rest.scan(failing, state_path, tmp_path, {"spool.max_bytes": 1})
        assert snapshots_sent(failing)[:1] == order[:1]
    assert (stopped.failed, stopped.snapshots_emitted, answers.take()) == (1, 1, [FRESH])
    assert etags(state_path, spec)[f"{ns}.t"]  # recorded with the location, but that location is not fully emitted
    with LineageServer() as server:
        retry = rest.scan(server, state_path, tmp_path)
        assert (snapshots_sent(server), retry.exit_code, answers.take()) == (order[1:], 0, [FRESH])
        assert rest.asked_and_unchanged(server, state_path, tmp_path, answers) == UNCHANGED


def test_current_mode_then_history_sends_the_whole_history(rest, state_path, tmp_path):
    catalog, spec, ns = rest.catalog, rest.spec, rest.ns
    order = in_order(write_table(catalog, f"{ns}.t", 3))
    answers = Answers(spec)
    with LineageServer() as server:
        rest.scan(server, state_path, tmp_path, mode="current")
        [dataset_event] = server.events()
        server.clear()
        assert dataset_event["dataset"]["facets"]["version"]["datasetVersion"] == str(order[-1])
        assert answers.take() == [FRESH]
        history = rest.scan(server, state_path, tmp_path)
        assert (snapshots_sent(server), history.snapshots_emitted, answers.take()) == (order, 3, [FRESH])
        for mode in ("history", "current"):  # each mode has its own mark, at the same location
            assert rest.asked_and_unchanged(server, state_path, tmp_path, answers, mode=mode) == UNCHANGED


def test_a_table_dropped_and_created_again_is_sent_once(rest, state_path, tmp_path):
    catalog, spec, ns = rest.catalog, rest.spec, rest.ns
    write_table(catalog, f"{ns}.t", 2)
    answers = Answers(spec)
    with LineageServer() as server:
        rest.scan(server, state_path, tmp_path)
        server.clear()
        catalog.drop_table(f"{ns}.t")
        again = write_table(catalog, f"{ns}.t", 1, start=500)
        answers.take()
        rest.scan(server, state_path, tmp_path)
        # asked with the old table's ETag: another table, another location, so another ETag
        assert (snapshots_sent(server), answers.take()) == (in_order(again), [CHANGED])
        assert rest.asked_and_unchanged(server, state_path, tmp_path, answers) == UNCHANGED


def test_a_renamed_table_gets_its_rename_then_is_asked_under_its_new_name(rest, state_path, tmp_path):
    catalog, spec, ns = rest.catalog, rest.spec, rest.ns
    write_table(catalog, f"{ns}.old", 2)
    answers = Answers(spec)
    with LineageServer() as server:
        rest.scan(server, state_path, tmp_path)
        server.clear()
        catalog.rename_table(f"{ns}.old", f"{ns}.new")
        answers.take()
        renamed = rest.scan(server, state_path, tmp_path)
        assert [lifecycle(e) for e in server.events() if e["eventType"] != "START"] == ["RENAME"]
        assert (renamed.renames, renamed.snapshots_emitted) == (1, 0)
        assert FRESH in answers.take()  # nothing known under the new name: loaded without an ETag
        server.clear()
        assert rest.asked_and_unchanged(server, state_path, tmp_path, answers) == UNCHANGED


def test_through_the_bridge_the_upstream_s_etags_and_304s_pass_unchanged(iceberg_rest, state_path, tmp_path):
    with LineageServer() as bridge_lineage, LineageServer() as server:
        proxy = start_proxy(iceberg_rest.uri, tmp_path / "bridge", bridge_lineage.url)
        try:
            rest = rest_on(iceberg_rest.catalog(), {"uri": proxy.uri})
            order = in_order(write_table(rest.catalog, f"{rest.ns}.t", 2))
            answers = Answers(rest.spec)
            rest.scan(server, state_path, tmp_path)
            assert (snapshots_sent(server), answers.take()) == (order, [FRESH])
            assert rest.asked_and_unchanged(server, state_path, tmp_path, answers) == UNCHANGED
        finally:
            proxy.stop()
        assert "Traceback" not in proxy.output() and "ERROR" not in proxy.output()


def test_a_catalog_that_sends_no_etag_has_each_table_loaded(seaweed, state_path, tmp_path):
    rest = rest_on(seaweed.catalog(), seaweed.catalog_properties())
    order = in_order(write_table(rest.catalog, f"{rest.ns}.t", 2))
    answers = Answers(rest.spec)
    with LineageServer() as server:
        for sent in (order, []):  # SeaweedFS sends no ETag: nothing to ask with, so a plain load every time
            summary = rest.scan(server, state_path, tmp_path)
            assert (snapshots_sent(server), summary.exit_code, answers.take()) == (sent, 0, [FRESH])
            assert etags(state_path, rest.spec) == {f"{rest.ns}.t": None}


def test_a_pyiceberg_without_the_internals_it_needs_loads_with_load_table(rest, state_path, tmp_path, monkeypatch):
    import pyiceberg.catalog.rest.response as response

    catalog, spec, ns = rest.catalog, rest.spec, rest.ns
    order = in_order(write_table(catalog, f"{ns}.t", 2))
    monkeypatch.delattr(response, "_handle_non_200_response")  # as if another PyIceberg had moved it
    answers = Answers(spec)
    with LineageServer() as server:
        for sent in (order, []):
            summary = rest.scan(server, state_path, tmp_path)
            assert (snapshots_sent(server), summary.exit_code, answers.take()) == (sent, 0, [FRESH])
        assert etags(state_path, spec) == {f"{ns}.t": None}
