"""Sinks: a table's events go to ``Delivery.emit_many`` as one batch, in commit order, and the watermark stops
before the first event that was neither delivered nor spooled."""
from __future__ import annotations

import json

from openlineage.client.serde import Serde

from iceberg_lineage.config import Settings
from iceberg_lineage.delivery.delivery import DeliveryResult
from iceberg_lineage.scan.driver import ScanOptions, scan
from iceberg_lineage.scan.sinks import delivery_sink, event_sink, printing_sink, taken
from iceberg_lineage.state.store import StateStore

from tests.support.delivery import run_event
from tests.support.scan import run_scan, snapshot_ids, spec_of, write_table


class BatchDelivery:
    """Stands in for ``Delivery``: records each ``emit_many`` batch and answers with the given statuses."""

    synchronous = True

    def __init__(self, statuses: list[str]) -> None:
        self.batches: list[list[dict]] = []
        self._statuses = statuses

    def emit_many(self, events) -> list[DeliveryResult]:
        batch = [json.loads(Serde.to_json(e)) for e in events]
        self.batches.append(batch)
        return [DeliveryResult(self._statuses.pop(0) if self._statuses else "delivered") for _ in batch]


def test_a_table_is_one_emit_many_batch_and_the_watermark_stops_at_the_first_failure(sql_catalog, state_path):
    table = write_table(sql_catalog, "db.t", 4)
    order = [s.snapshot_id for s in sorted(table.refresh().snapshots(), key=lambda s: s.sequence_number)]
    # per snapshot its START and its COMPLETE: the third snapshot's START fails
    delivery = BatchDelivery(["delivered", "delivered", "spooled", "spooled", "failed", *["spooled"] * 3])

    with StateStore(state_path) as state:
        summary = scan(ScanOptions(catalogs=(spec_of(sql_catalog),)), Settings(), state, delivery_sink(delivery))
        recorded = [s.snapshot_id for s in state.emitted(str(table.metadata.table_uuid))]

    [batch] = delivery.batches
    assert snapshot_ids(batch) == order
    assert recorded == order[:2] and summary.snapshots_emitted == 2 and summary.exit_code == 1
    assert f"delivery failed for snapshot {order[2]}" in summary.failures[0].reason
    again, sink = run_scan(sql_catalog, state_path)
    assert snapshot_ids(sink.parsed) == order[2:]  # the rest comes again, from the failed one on
    assert again.exit_code == 0


def test_taken_and_the_one_event_sinks():
    assert taken(["delivered", "spooled", "printed"], 3) == (3, None)
    assert taken(["delivered", "failed", "spooled"], 3) == (1, "failed")
    assert taken(["disabled"], 1) == (0, "disabled")
    assert taken(["delivered"], 2) == (1, "failed")  # a sink that stopped without saying why
    sent: list[str] = []
    assert event_sink(lambda e: sent.append(e) or ("failed" if e == "b" else "delivered"))(["a", "b", "c"]) == [
        "delivered", "failed"]
    assert sent == ["a", "b"]
    lines: list[str] = []
    texts = [Serde.to_json(run_event()), Serde.to_json(run_event())]
    assert printing_sink(lines.append, Settings())(texts) == ["printed", "printed"]
    printed = [json.loads(line) for line in lines]
    # the generic profile sends an event as it was built; the OpenLineage client adds its version tag
    assert [p["run"]["facets"].pop("tags")["tags"][0]["key"] for p in printed] == ["openlineage_client_version"] * 2
    assert printed == [json.loads(t) for t in texts]
