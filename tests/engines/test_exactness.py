"""``iceberg-lineage stats --all-snapshots`` against Iceberg Java's own metadata tables, for every snapshot of
tables Spark wrote.

Both sides define every compared figure the same way, but for these (see docs/contributing.md, real engines):
- ``records`` is the rows in live data files before deletes, as ``sum(record_count)`` of ``data_files`` (and the
  summary's ``total-records``); the rows a reader sees are ``live_records``, compared with ``count(*)``.
- ``position_deletes`` includes the rows deleted by DVs (the summary's ``total-position-deletes``); DVs alone are
  ``dv_files`` and ``dv_deletes``. A DV's bytes are its blob's ``content_size_in_bytes``, not the Puffin file's.
- Iceberg keeps NaN counts for float and double only; for other types the package has none (null).
- String bounds equal the stored, truncated bounds exactly, and are flagged ``lower_truncated`` /
  ``upper_truncated`` by docs/stats.md's rule under ``truncate(16)``: a lower bound 16 long, an upper bound at most 16
  long that is no file's lower bound.
"""
from __future__ import annotations

import json

from tests.support.engines import JDBC
from tests.support.iceberg_java import differences, lineage_stats, run_cli


def compare(table, ignore: set[str] = frozenset()) -> dict[int, dict]:
    """Every snapshot of ``table`` through the CLI, compared figure by figure; returns the CLI's snapshots by id."""
    ours, problems = compared(table, ignore)
    assert problems == [], f"{table.name}:\n" + "\n".join(problems)
    return ours


def compared(table, ignore: set[str] = frozenset()) -> tuple[dict[int, dict], list[str]]:
    """The CLI's snapshots of ``table`` by id, and every figure where they differ from Iceberg Java's."""
    ours = {s["snapshot_id"]: s for s in table.stats["snapshots"]}
    assert list(ours) == [s["snapshot_id"] for s in table.snapshots]
    problems = []
    for snapshot in table.snapshots:
        mine = ours[snapshot["snapshot_id"]]
        for key in ("parent_id", "operation", "timestamp_ms"):
            if mine[key] != snapshot[key]:
                problems.append(f"{snapshot['snapshot_id']} {key}: ours {mine[key]!r}, Iceberg Java {snapshot[key]!r}")
        assert mine["available"] and mine["depth"] == "entries"
        java = table.java[snapshot["snapshot_id"]]
        problems += [f"{snapshot['snapshot_id']} {snapshot['operation']} {line}"
                     for line in differences(mine, java, ignore)]
    return ours, problems


def test_v2_merge_on_read_delete_update_merge(v2_merge_on_read):
    ours = compare(v2_merge_on_read)
    java = [v2_merge_on_read.java[s["snapshot_id"]] for s in v2_merge_on_read.snapshots]
    assert [s["operation"] for s in v2_merge_on_read.snapshots] == ["append", "append", "delete", "overwrite",
                                                                    "overwrite"]
    # v2 deletes are file-scoped in Iceberg 1.10: one position-delete file per data file, replaced by each change.
    assert [j["position_delete_files"] for j in java] == [0, 0, 2, 2, 2]
    assert [j["removed_delete_files"] for j in java] == [0, 0, 0, 2, 1]
    assert all(j["dv_files"] == 0 for j in java) and java[-1]["live_records"] < java[-1]["records"]
    assert list(ours.values())[-1]["partitions"] == [{"spec_id": 0, "partitions": 2, "files": java[-1]["data_files"]}]


def test_v3_deletion_vector_replaced_then_whole_file_deleted(v3_deletion_vectors):
    compare(v3_deletion_vectors)
    java = [v3_deletion_vectors.java[s["snapshot_id"]] for s in v3_deletion_vectors.snapshots]
    first_merge, second_merge, whole_file = java[2], java[3], java[4]
    assert first_merge["dv_files"] >= 1 and first_merge["position_delete_files"] == 0
    assert second_merge["removed_delete_files"] >= 1  # the new DV replaces the old one of the same data file
    assert second_merge["dv_deletes"] > first_merge["dv_deletes"]
    assert whole_file["removed_data_files"] == 1 and whole_file["records"] < second_merge["records"]


def test_v1_overwrite(v1_overwrite):
    compare(v1_overwrite)
    java = [v1_overwrite.java[s["snapshot_id"]] for s in v1_overwrite.snapshots]
    assert [s["operation"] for s in v1_overwrite.snapshots] == ["append", "append", "overwrite", "overwrite"]
    assert java[2]["removed_data_files"] == 1 and java[2]["live_records"] == 15
    assert all(j["delete_files"] == 0 for j in java)


def test_maintenance_procedures_and_expired_snapshots(maintained):
    before = compare(maintained.before)
    operations = [s["operation"] for s in maintained.before.snapshots]
    assert operations == ["append"] * 4 + ["delete", "replace", "replace", "replace"]
    # Read again from the metadata file written just before expire_snapshots: the expired snapshots are listed, their
    # manifest lists deleted; what the package still knows (the summary) must equal what Java said before.
    expired = lineage_stats(maintained.before.metadata)["snapshots"]
    kept = maintained.after.snapshots[0]["snapshot_id"]
    assert [s["snapshot_id"] for s in expired] == list(before)
    problems = []
    for snap in expired:
        java = maintained.before.java[snap["snapshot_id"]]
        if snap["snapshot_id"] == kept:
            assert snap["available"]
            continue
        assert not snap["available"] and snap["depth"] == "summary", snap
        known = {key: value for key, value in snap.items() if key in java and value is not None}
        assert {"data_files", "records", "position_deletes", "total_files_size_bytes"} <= set(known)
        problems += [f"{snap['snapshot_id']} {line}" for line in
                     differences({**known, "columns": {}}, {**{k: java[k] for k in known}, "columns": {}})]
    assert problems == []
    compare(maintained.after)


def test_partition_and_schema_evolution(evolved):
    ours = compare(evolved)
    last = list(ours.values())[-1]
    assert [p["spec_id"] for p in last["partitions"]] == [0, 1, 2]
    assert "full_name" in last["columns"] and last["columns"]["extra"]["type"] == "long"


def test_spark_commits_name_their_engine(spark, v2_merge_on_read):
    """Read through PyIceberg's SqlCatalog on the JDBC catalog's database: one run per Spark snapshot, its job
    ``<namespace>.<table>.spark``, ``spark.app.id`` as ``externalQuery`` and Spark's version as the engine."""
    catalog = {"PYICEBERG_CATALOG__JDBC__TYPE": "sql",
               "PYICEBERG_CATALOG__JDBC__URI": f"sqlite:///{spark.root}/catalog.db"}
    proc = run_cli("events", "--catalog", JDBC, "--table", "db.v2_merge_on_read", "--all-snapshots", env=catalog)
    printed = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [e["eventType"] for e in printed] == ["START", "COMPLETE"] * len(v2_merge_on_read.snapshots)
    events = printed[1::2]  # the COMPLETEs (each START carries the same run facets)
    app_id = spark.session.sparkContext.applicationId
    assert {s["summary"]["spark.app.id"] for s in v2_merge_on_read.snapshots} == {app_id}
    for event in events:
        facets = event["run"]["facets"]
        assert event["job"]["name"] == "db.v2_merge_on_read.spark"
        assert (facets["externalQuery"]["externalQueryId"], facets["externalQuery"]["source"]) == (app_id, "spark")
        engine = facets["processing_engine"]
        assert (engine["name"], engine["version"]) == ("spark", spark.session.version)


def test_flink_tables(flink_tables):
    """Flink's appends and upserts (equality deletes) in the REST catalog."""
    for table in flink_tables.tables.values():
        compare(table)


def test_trino_tables(trino_tables):
    """Trino's CREATE, INSERT, DELETE, UPDATE, MERGE, ADD COLUMN, optimize and INSERT ... SELECT.

    SeaweedFS's ``metadata-log`` of ``a`` has holes (tests/engines/test_trino.py), so by the truncation rule the
    modes that applied to its files are unknown: any ``truncate(N)`` could have cut a string bound. Where Iceberg Java
    (the reference computes the flags knowing ``truncate(16)``) says a bound is whole, ours may then say "possibly
    truncated", never the other way round; every other figure is equal."""
    unknown_modes = []
    for table in trino_tables.tables.values():
        _, problems = compared(table)
        cautious = [p for p in problems if p.endswith("_truncated: ours True, Iceberg Java False")]
        assert [p for p in problems if p not in cautious] == [], table.name
        unknown_modes += [table.name] if cautious else []
    assert "seaweed.trinons.a" in unknown_modes
