"""Table builders for the scan_reporters tests: real PyIceberg tables on a SqlCatalog with a local warehouse.

Day and bucket partitions are written as one Parquet file per commit, one partition each, and committed with
``fast_append().append_data_file`` with the partition computed in Python: ``append`` would need the optional
``pyiceberg-core`` package for those transforms and ``add_files`` cannot infer bucket partitions. Delete files PyIceberg cannot write (position
deletes, DVs, equality deletes) are committed with a hand-written delete manifest through the public
``commit_table`` path.
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform
from pyiceberg.typedef import Record
from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestampType

import scan_reporters
from scan_reporters.reporters.memory import InMemoryMetricsReporter

# Fixtures live here rather than in a conftest.py: other test folders do ``from conftest import ...``, and one
# more ``conftest`` module would compete for that name. Test modules import the fixtures they use.


@pytest.fixture
def catalog(tmp_path):
    """PyIceberg SqlCatalog on SQLite with a local warehouse, uninstrumented again afterwards."""
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog("t", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}/wh")
    cat.create_namespace("db")
    yield cat
    scan_reporters.uninstrument(cat)


@pytest.fixture
def memory():
    return InMemoryMetricsReporter()


@pytest.fixture
def instrumented(catalog, memory):
    """The catalog, instrumented with an in-memory reporter."""
    return scan_reporters.instrument(catalog, memory)


@pytest.fixture(autouse=True)
def no_install_leak():
    yield
    scan_reporters.uninstall()


SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "cat", StringType(), required=False),
    NestedField(3, "ts", TimestampType(), required=False),
    NestedField(4, "v", DoubleType(), required=False),
)
SPEC = PartitionSpec(
    PartitionField(2, 1000, IdentityTransform(), "cat"),
    PartitionField(3, 1001, DayTransform(), "ts_day"),
    PartitionField(1, 1002, BucketTransform(4), "id_bucket"),
)
CATS = ("a", "b", "c")
DAY0 = dt.datetime(2024, 1, 1)
DAY0_DAYS = (DAY0.date() - dt.date(1970, 1, 1)).days
BUCKET = BucketTransform(4).transform(LongType())


def arrow_rows(ids: list[int], cat: str, day: int) -> pa.Table:
    from pyiceberg.io.pyarrow import schema_to_pyarrow

    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "cat": pa.array([cat] * len(ids), pa.string()),
            "ts": pa.array([DAY0 + dt.timedelta(days=day, minutes=i) for i in ids], pa.timestamp("us")),
            "v": pa.array([float(i) / 3 for i in ids], pa.float64()),
        },
        schema=schema_to_pyarrow(SCHEMA),
    )


def append_partition_file(table: Table, path: Path, rows: pa.Table, partition: Record) -> None:
    """Write ``rows`` (one partition) to ``path`` and fast-append it as a data file with computed statistics."""
    from pyiceberg.io.pyarrow import compute_statistics_plan, data_file_statistics_from_parquet_metadata, parquet_path_to_id_mapping
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat

    pq.write_table(rows, path)
    stats = data_file_statistics_from_parquet_metadata(
        parquet_metadata=pq.read_metadata(path),
        stats_columns=compute_statistics_plan(table.schema(), table.metadata.properties),
        parquet_column_mapping=parquet_path_to_id_mapping(table.schema()),
    )
    data_file = DataFile.from_args(
        content=DataFileContent.DATA,
        file_path=f"file://{path}",
        file_format=FileFormat.PARQUET,
        partition=partition,
        file_size_in_bytes=path.stat().st_size,
        **stats.to_serialized_dict(),
    )
    data_file.spec_id = table.spec().spec_id
    with table.transaction() as tx:
        with tx.update_snapshot().fast_append() as append:
            append.append_data_file(data_file)


def build_partitioned_table(catalog: Catalog, root: Path, name: str = "db.parts") -> Table:
    """12 commits, each one file of one (cat, day, bucket) partition: 12 data manifests with one entry each."""
    table = catalog.create_table(name, SCHEMA, partition_spec=SPEC)
    root.mkdir(parents=True, exist_ok=True)
    n = 0
    for cat_index, cat in enumerate(CATS):
        for day in range(2):
            for bucket in range(2):
                ids = [i for i in range(n * 40, n * 40 + 200) if BUCKET(i) == bucket][:5]
                n += 1
                path = root / f"{cat}-{day}-{bucket}-{uuid.uuid4().hex}.parquet"
                append_partition_file(table, path, arrow_rows(ids, cat, day + cat_index), Record(cat, day + cat_index + DAY0_DAYS, bucket))
    return table


def simple_table(catalog: Catalog, name: str, batches: int = 4) -> Table:
    """Identity-partitioned by ``cat``; one append (one file, one manifest) per batch, 10 rows each."""
    table = catalog.create_table(name, SCHEMA, partition_spec=PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "cat")))
    for i in range(batches):
        table.append(arrow_rows(list(range(i * 10, i * 10 + 10)), "abcd"[i % 4], i))
    return table


def position_delete_file(table: Table, data_path: str, positions: list[int], *, path_scoped: bool) -> Any:
    """A real position-delete Parquet file and its v3-layout DataFile (path bounds set when path-scoped)."""
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat

    out = f"{table.location()}/data/pos-del-{uuid.uuid4().hex}.parquet"
    pq.write_table(
        pa.table({"file_path": pa.array([data_path] * len(positions)), "pos": pa.array(positions, pa.int64())}),
        out.removeprefix("file://"),
    )
    bounds = {2147483546: data_path.encode()} if path_scoped else None
    return DataFile.from_args(
        _table_format_version=3,
        content=DataFileContent.POSITION_DELETES,
        file_path=out,
        file_format=FileFormat.PARQUET,
        partition=_partition_of(table, data_path),
        record_count=len(positions),
        file_size_in_bytes=Path(out.removeprefix("file://")).stat().st_size,
        lower_bounds=bounds,
        upper_bounds=bounds,
    )


def dv_file(table: Table, data_path: str, *, cardinality: int, offset: int, size: int) -> Any:
    """A deletion-vector entry (Puffin, v3 fields); only planned, never read."""
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat

    return DataFile.from_args(
        _table_format_version=3,
        content=DataFileContent.POSITION_DELETES,
        file_path=f"{table.location()}/data/dvs-{uuid.uuid4().hex}.puffin",
        file_format=FileFormat.PUFFIN,
        partition=_partition_of(table, data_path),
        record_count=cardinality,
        file_size_in_bytes=10_000,
        referenced_data_file=data_path,
        content_offset=offset,
        content_size_in_bytes=size,
    )


def equality_delete_file(table: Table, partition: Record, size: int = 777) -> Any:
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat

    return DataFile.from_args(
        _table_format_version=3,
        content=DataFileContent.EQUALITY_DELETES,
        file_path=f"{table.location()}/data/eq-del-{uuid.uuid4().hex}.parquet",
        file_format=FileFormat.PARQUET,
        partition=partition,
        record_count=1,
        file_size_in_bytes=size,
        equality_ids=[1],
    )


def _partition_of(table: Table, data_path: str) -> Record:
    for task in table.scan().plan_files():
        if task.file.file_path == data_path:
            return task.file.partition
    raise KeyError(data_path)


def commit_delete_files(table: Table, delete_files: list[Any]) -> int:
    """Commit a ``delete`` snapshot whose manifest list adds one delete manifest (written with the v3 schema)."""
    from pyiceberg.avro.file import AvroOutputFile
    from pyiceberg.manifest import (
        ManifestContent,
        ManifestEntry,
        ManifestEntryStatus,
        ManifestWriterV2,
        write_manifest_list,
    )
    from pyiceberg.table.metadata import _generate_snapshot_id
    from pyiceberg.table.snapshots import Operation, Snapshot, Summary
    from pyiceberg.table.update import AddSnapshotUpdate, AssertRefSnapshotId, SetSnapshotRefUpdate

    class DeleteManifestWriter(ManifestWriterV2):
        def content(self) -> ManifestContent:
            return ManifestContent.DELETES

        def new_writer(self) -> AvroOutputFile[ManifestEntry]:
            return AvroOutputFile[ManifestEntry](
                output_file=self._output_file,
                file_schema=self._with_partition(3),
                record_schema=self._with_partition(3),
                schema_name="manifest_entry",
                metadata={**self._meta, "content": "deletes"},
            )

    parent = table.current_snapshot()
    assert parent is not None
    snapshot_id = _generate_snapshot_id()
    sequence_number = table.metadata.next_sequence_number()
    meta = f"{table.location()}/metadata"
    writer = DeleteManifestWriter(table.spec(), table.schema(), table.io.new_output(f"{meta}/{uuid.uuid4()}-m0.avro"), snapshot_id, "null")
    with writer:
        for f in delete_files:
            writer.add(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=snapshot_id, data_file=f))
    manifest_list = f"{meta}/snap-{snapshot_id}-{uuid.uuid4()}.avro"
    with write_manifest_list(2, table.io.new_output(manifest_list), snapshot_id, parent.snapshot_id, sequence_number, "null") as lw:
        lw.add_manifests([*parent.manifests(table.io), writer.to_manifest_file()])
    snapshot = Snapshot(
        snapshot_id=snapshot_id,
        parent_snapshot_id=parent.snapshot_id,
        sequence_number=sequence_number,
        timestamp_ms=int(time.time() * 1000),
        manifest_list=manifest_list,
        summary=Summary(Operation.DELETE, **{"added-delete-files": str(len(delete_files))}),
        schema_id=table.schema().schema_id,
    )
    with table.transaction() as tx:
        tx._apply(
            (
                AddSnapshotUpdate(snapshot=snapshot),
                SetSnapshotRefUpdate(snapshot_id=snapshot_id, parent_snapshot_id=parent.snapshot_id, ref_name="main", type="branch"),
            ),
            (AssertRefSnapshotId(snapshot_id=parent.snapshot_id, ref="main"),),
        )
    return snapshot_id


FIXTURE_TABLES = Path(__file__).parents[1] / "fixtures" / "iceberg-tables"
#: where each Java/Hive-written fixture table lived when it was written (prefix of every path in its metadata)
FIXTURE_PREFIXES = {
    "impala_spark_v3_deletion_vectors": "hdfs://localhost:20500/test-warehouse/iceberg_v3_deletion_vectors",
    "impala_hive_pos_deletes_6snaps": "/test-warehouse/iceberg_test/hadoop_catalog/ice/"
    "iceberg_v2_positional_not_all_data_files_have_delete_files",
    "duckdb_java_spark_eq_deletes": "data/persistent/equality_deletes/warehouse/mydb/mytable",
}


def fixture_scan(name: str) -> Any:
    """A DataScan of the latest metadata of a fixture table, read through a FileIO that maps its old paths."""
    from pyiceberg.io.pyarrow import PyArrowFileIO
    from pyiceberg.serializers import FromInputFile
    from pyiceberg.table import DataScan

    root, prefix = FIXTURE_TABLES / name, FIXTURE_PREFIXES[name]

    class RelocatingIO(PyArrowFileIO):
        def new_input(self, location: str) -> Any:
            if prefix in location:
                location = str(root) + location[location.index(prefix) + len(prefix) :]
            return super().new_input(location)

    io = RelocatingIO()
    latest = max((root / "metadata").glob("v*.metadata.json"), key=lambda p: int(p.name[1:].split(".")[0]))
    return DataScan(table_metadata=FromInputFile.table_metadata(io.new_input(str(latest))), io=io)
