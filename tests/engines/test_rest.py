"""Iceberg Java on a REST catalog (SeaweedFS, files in S3): ``iceberg-lineage stats --catalog seaweed --table ...``
(the catalog configured in ``.pyiceberg.yaml``, as a user does) against Spark's metadata tables, every snapshot.

The CLI takes no FileIO properties for a bare ``s3://`` metadata path; a REST catalog hands PyIceberg the table's
S3 settings (its ``config``) and the catalog's own, so the catalog is the way to read such a table.
"""
from __future__ import annotations

from tests.engines.test_exactness import compare


def test_v2_merge_on_read_through_rest_catalog(v2_rest):
    ours = compare(v2_rest)
    java = [v2_rest.java[s["snapshot_id"]] for s in v2_rest.snapshots]
    assert v2_rest.metadata.startswith("s3://warehouse/exactness/v2_merge_on_read")
    assert [s["operation"] for s in v2_rest.snapshots] == ["append", "append", "delete", "overwrite", "overwrite"]
    # As in the JDBC catalog: file-scoped position deletes, one per data file, replaced by each change.
    assert [j["position_delete_files"] for j in java] == [0, 0, 2, 2, 2]
    assert [j["removed_delete_files"] for j in java] == [0, 0, 0, 2, 1]
    assert [j["live_records"] for j in java] == [20, 40, 30, 30, 36]
    last = list(ours.values())[-1]
    assert last["partitions"] == [{"spec_id": 0, "partitions": 2, "files": java[-1]["data_files"]}]
    assert last["data_files_size_bytes"] == java[-1]["data_files_size_bytes"] > 0
