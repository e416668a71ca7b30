"""Sample tables shaped as other engines write them, built with PyIceberg in a folder of the caller's, so the
``foreign_tables`` notebook runs from an installed package: a table whose rows are deleted with equality-delete
files (as Flink and Spark's merge-on-read write them; PyIceberg plans no scan over them), and a table whose
partition spec evolved with files live under both specs."""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.table import Table

EQ_DELETES = "samples.eq_deletes"
PARTITION_EVOLUTION = "samples.partition_evolution"


def sample_catalog(root: Path | str) -> SqlCatalog:
    """A SQLite catalog with its warehouse under ``root`` (created), holding the sample tables once written."""
    from pyiceberg.catalog.sql import SqlCatalog

    root = Path(root).resolve()
    (root / "warehouse").mkdir(parents=True, exist_ok=True)
    return SqlCatalog("samples", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}/warehouse")


def write_sample_tables(root: Path | str) -> dict[str, Table]:
    """Both sample tables in :func:`sample_catalog` of ``root``, by identifier."""
    catalog = sample_catalog(root)
    catalog.create_namespace_if_not_exists("samples")
    return {EQ_DELETES: write_eq_deletes_table(catalog), PARTITION_EVOLUTION: write_partition_evolution_table(catalog)}


def write_eq_deletes_table(catalog: SqlCatalog, identifier: str = EQ_DELETES) -> Table:
    """Two appends of three rows each, then four snapshots that each delete one ``id`` with an equality-delete file
    (a Parquet file of ``id`` values, in a delete manifest): six snapshots."""
    import pyarrow as pa

    rows = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "data": pa.array(["a", "b", "c"], pa.string())})
    table = catalog.create_table(identifier, schema=rows.schema, properties={"format-version": "2"})
    table.append(rows)
    table.append(pa.table({"id": pa.array([4, 5, 6], pa.int64()), "data": pa.array(["d", "e", "f"], pa.string())}))
    for deleted in (2, 3, 5, 6):
        table = _commit_equality_delete(table, "id", deleted)
    return table


def _commit_equality_delete(table: Table, column: str, value: int) -> Table:
    """Commit a snapshot whose only change is an equality-delete file removing the rows where ``column == value``.
    PyIceberg writes no such file itself: the Parquet file and its delete manifest are written with its own
    writers, the snapshot with its producer."""
    import uuid

    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat, ManifestContent, ManifestWriterV2
    from pyiceberg.table.snapshots import Operation
    from pyiceberg.table.update.snapshot import _FastAppendFiles
    from pyiceberg.typedef import Record

    class DeleteManifestWriter(ManifestWriterV2):
        def content(self) -> ManifestContent:
            return ManifestContent.DELETES

        @property
        def _meta(self) -> dict[str, str]:
            return {**super()._meta, "content": "deletes"}

    class EqualityDelete(_FastAppendFiles):
        def new_manifest_writer(self, spec):  # type: ignore[no-untyped-def]
            return DeleteManifestWriter(spec, self.schema(), self.new_manifest_output(), self._snapshot_id,
                                        self._compression)

    field = table.schema().find_field(column)
    keys = pa.table({column: pa.array([value], pa.int64())})
    path = f"{table.location()}/data/eq-delete-{uuid.uuid4()}.parquet"
    with table.io.new_output(path).create() as out:
        pq.write_table(keys, out)
    delete_file = DataFile.from_args(
        content=DataFileContent.EQUALITY_DELETES, file_path=path, file_format=FileFormat.PARQUET,
        partition=Record(), record_count=1, file_size_in_bytes=len(table.io.new_input(path)),
        equality_ids=[field.field_id], column_sizes={}, value_counts={}, null_value_counts={},
        nan_value_counts={}, lower_bounds={}, upper_bounds={}, split_offsets=None, sort_order_id=None,
    )
    delete_file.spec_id = table.spec().spec_id
    with table.transaction() as tx:
        producer = EqualityDelete(operation=Operation.DELETE, transaction=tx, io=table.io)
        producer.append_data_file(delete_file)
        producer.commit()
    return table.refresh()


def write_partition_evolution_table(catalog: SqlCatalog, identifier: str = PARTITION_EVOLUTION) -> Table:
    """Partitioned by ``event_date`` (two days, a file each), then by ``event_date`` and ``event_type`` (two days
    and two types, a file each): files under both specs stay live."""
    import pyarrow as pa
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import DateType, LongType, NestedField, StringType

    def events(days: tuple[int, ...], types: tuple[str, ...]) -> pa.Table:
        cells = [(dt.date(2026, 1, d), t) for d in days for t in types for _ in range(3)]
        return pa.table({"event_date": pa.array([c[0] for c in cells], pa.date32()),
                         "event_type": pa.array([c[1] for c in cells], pa.string()),
                         "value": pa.array(range(len(cells)), pa.int64())})

    schema = Schema(NestedField(1, "event_date", DateType()), NestedField(2, "event_type", StringType()),
                    NestedField(3, "value", LongType()))
    by_date = PartitionSpec(PartitionField(1, 1000, IdentityTransform(), "event_date"))
    table = catalog.create_table(identifier, schema=schema, partition_spec=by_date)
    table.append(events((1, 2), ("click", "view")))
    with table.update_spec() as update:
        update.add_identity("event_type")
    table.append(events((3, 4), ("click", "view")))
    return table
