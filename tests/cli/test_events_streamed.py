"""``events --all-snapshots`` on a long history (issue 31, item 17): the events are built as they are printed, so the
memory is the figures' (each snapshot's statistics) and a few events, not every event at once (23 KB a snapshot).
Counted by tracemalloc, not timed; the time is measured in ``benchmarks/long_metadata.py``."""
from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

from click.testing import CliRunner
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.manifest import write_manifest_list

from iceberg_lineage.cli import main
from iceberg_lineage.cli.common import settings_and_table
from iceberg_lineage.cli.events import build_events
from iceberg_lineage.stats import table_history
from tests.support.olschema import validate_event

SNAPSHOTS = 300


def _long_table(tmp_path: Path) -> Path:
    """A chain of ``SNAPSHOTS`` appends, each naming one manifest list without manifests."""
    manifest_list = tmp_path / "snap.avro"
    with write_manifest_list(format_version=2, output_file=PyArrowFileIO().new_output(str(manifest_list)),
                             snapshot_id=1, parent_snapshot_id=None, sequence_number=1,
                             avro_compression="null") as writer:
        writer.add_manifests([])
    snaps = [{"snapshot-id": i, "sequence-number": i, "timestamp-ms": 1_700_000_000_000 + i * 1000,
              "manifest-list": str(manifest_list), "schema-id": 0,
              "summary": {"operation": "append", "added-records": "10", "total-records": str(10 * i)},
              **({"parent-snapshot-id": i - 1} if i > 1 else {})} for i in range(1, SNAPSHOTS + 1)]
    doc = {"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": str(tmp_path),
           "last-sequence-number": SNAPSHOTS, "last-updated-ms": 1_800_000_000_000, "last-column-id": 1,
           "current-schema-id": 0, "schemas": [{"schema-id": 0, "type": "struct", "fields": [
               {"id": 1, "name": "s", "required": False, "type": "string"}]}],
           "current-snapshot-id": SNAPSHOTS, "refs": {"main": {"snapshot-id": SNAPSHOTS, "type": "branch"}},
           "snapshots": snaps}
    path = tmp_path / "metadata" / "v1.metadata.json"
    path.parent.mkdir()
    path.write_text(json.dumps(doc))
    return path


def test_every_snapshot_has_its_run_in_commit_order(tmp_path):
    result = CliRunner().invoke(main, ["events", "--metadata", str(_long_table(tmp_path)), "--all-snapshots"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2 * SNAPSHOTS
    for line in lines[:2] + lines[-2:]:
        validate_event(line)
    events = [json.loads(line) for line in lines]
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"] * SNAPSHOTS
    versions = [e["outputs"][0]["facets"]["version"]["datasetVersion"] for e in events[1::2]]
    assert versions == [str(i) for i in range(1, SNAPSHOTS + 1)]
    assert len({e["run"]["runId"] for e in events}) == SNAPSHOTS


def test_the_events_are_built_as_they_are_printed_not_held_together(tmp_path):
    """On main the events were a list: the printing peaked at the figures plus 23 KB a snapshot."""
    path = str(_long_table(tmp_path))
    settings, loaded = settings_and_table(path, None, None, (), None, True, None, (), (), None)
    next(iter(build_events(loaded, settings, None, False, False)))  # modules and caches warm, outside the count
    tracemalloc.start()
    try:
        history = table_history(loaded, columns=settings.column_stats)
        figures = tracemalloc.get_traced_memory()[0]
        del history
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        count = sum(1 for _ in build_events(loaded, settings, None, True, False))
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    assert count == 2 * SNAPSHOTS
    assert peak < figures + 2_000 * SNAPSHOTS, (peak, figures)
