"""``--relocate OLD=NEW``: ``file:/x``, ``file:///x``, ``file://localhost/x`` and ``/x`` are one path, and a trailing
slash on either side does not matter. Spark records a table's ``location`` as ``file:///w/t`` but every path inside
as ``file:/w/t/...``: relocating the declared location must reach all of them."""
from __future__ import annotations

import json
import shutil
from itertools import product

import pytest
from click.testing import CliRunner

from iceberg_lineage.cli import main
from iceberg_lineage.read.files import local_path
from iceberg_lineage.read.source import RelocatingIO
from tests.support.engines import HADOOP

SPELLINGS = ("file:/w/t", "file:///w/t", "file://localhost/w/t", "/w/t")


def stats_json(*args: str) -> dict:
    result = CliRunner().invoke(main, ["stats", "--format", "json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("recorded, old", list(product(SPELLINGS, SPELLINGS)))
def test_every_local_spelling_is_one_path(recorded, old):
    for old_slash, new in product(("", "/"), ("/copy/t", "/copy/t/", "file:///copy/t", "file:/copy/t/")):
        io = RelocatingIO(None, {old + old_slash: new})
        assert local_path(io.resolve(f"{recorded}/metadata/snap-1.avro")) == "/copy/t/metadata/snap-1.avro"
        assert local_path(io.resolve(recorded)) == "/copy/t"


def test_only_whole_path_segments_are_relocated():
    io = RelocatingIO(None, {"file:///w/t/": "/copy/t"})
    assert io.resolve("file:/w/tt/data/1.parquet") == "file:/w/tt/data/1.parquet"
    assert io.resolve("hdfs://nn/w/t/data/1.parquet") == "hdfs://nn/w/t/data/1.parquet"


def test_the_longest_matching_prefix_wins_whatever_its_spelling():
    io = RelocatingIO(None, {"/w": "/a", "file:///w/t/": "/b"})
    assert io.resolve("file:/w/t/x") == "/b/x"
    assert io.resolve("file:/w/u/x") == "/a/u/x"


def test_a_remote_prefix_with_trailing_slashes(tmp_path):
    io = RelocatingIO(None, {"hdfs://nn:8020/w/t/": f"{tmp_path}/"})
    assert io.resolve("hdfs://nn:8020/w/t/metadata/m.avro") == f"{tmp_path}/metadata/m.avro"
    assert io.resolve("hdfs://nn:8020/w/t") == str(tmp_path)


def test_fixture_tables_relocated_with_other_spellings():
    """Impala's table records ``/test-warehouse/...``; the Spark-written v3 table ``hdfs://localhost:20500/...``."""
    from tests.support.fixture_tables import FIXTURES

    puffin = FIXTURES / "impala_v1_trino_puffin_stats"
    doc = stats_json("--metadata", str(puffin),
                     "--relocate", f"file:///test-warehouse/iceberg_with_puffin_stats/=file://{puffin}/")
    assert [(s["records"], s["data_files"]) for s in doc["snapshots"]] == [(2, 1)]
    dv = FIXTURES / "impala_spark_v3_deletion_vectors"
    doc = stats_json("--metadata", str(dv), "--all-snapshots",
                     "--relocate", f"hdfs://localhost:20500/test-warehouse/iceberg_v3_deletion_vectors/={dv}/")
    assert [(s["records"], s["data_files"], s["dv_files"]) for s in doc["snapshots"]] == [(5, 5, 0), (5, 5, 2)]


@pytest.fixture(scope="module")
def spark_table(spark, tmp_path_factory):
    """A table Spark writes live (Hadoop catalog), then moved away from where it was written: nothing is left at
    the recorded paths, so only a relocation can read it."""
    table = f"{HADOOP}.relocate_test.t"
    spark.sql("CREATE NAMESPACE IF NOT EXISTS hadoop.relocate_test")
    spark.sql(f"CREATE TABLE {table} (id BIGINT, name STRING) USING iceberg")
    spark.sql(f"INSERT INTO {table} SELECT /*+ COALESCE(1) */ * FROM VALUES (1, 'a'), (2, 'b') AS v(id, name)")
    spark.sql(f"INSERT INTO {table} SELECT /*+ COALESCE(1) */ * FROM VALUES (3, 'c') AS v(id, name)")
    written = spark.root / "hadoop" / "relocate_test" / "t"
    declared = json.loads(sorted((written / "metadata").glob("v*.metadata.json"))[-1].read_text())["location"]
    copy = tmp_path_factory.mktemp("relocated") / "t"
    shutil.move(written, copy)
    return declared, written, copy


def test_a_live_spark_table_relocated_with_every_spelling(spark_table):
    declared, written, copy = spark_table
    assert declared == f"file://{written}"  # and every path inside is file:{written}/...
    for old, new in [(declared, str(copy)), (f"file:{written}/", f"{copy}/"), (f"file://localhost{written}", str(copy)),
                     (f"{written}/", f"file://{copy}")]:
        doc = stats_json("--metadata", str(copy / "metadata"), "--all-snapshots", "--relocate", f"{old}={new}")
        assert [(s["records"], s["data_files"], s["added_records"]) for s in doc["snapshots"]] == [(2, 1, 2), (3, 2, 1)]
