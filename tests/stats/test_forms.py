"""Each figure is declared once, on its SnapshotStats field; the JSON forms, the facet and the tables follow it."""
from __future__ import annotations

from dataclasses import dataclass, fields
from types import MappingProxyType

from iceberg_lineage.lineage.facets import statistics_facet, statistics_schema
from iceberg_lineage.stats.forms import CAMEL, SNAKE, as_json, figure, json_field, not_json
from iceberg_lineage.stats.model import FIGURES, ColumnStats, FileSizeStats, SnapshotStats
from iceberg_lineage.stats.text import COLUMN_HEADINGS, column_row, figure_rows


def _stats(**figures: int) -> SnapshotStats:
    return SnapshotStats(snapshot_id=1, parent_id=None, operation="append", timestamp_ms=0, sequence_number=1,
                         schema_id=0, sources=MappingProxyType({name: "summary" for name in figures}), **figures)


def test_figures_are_the_declared_fields_in_json_order():
    declared = SnapshotStats.figures()
    assert FIGURES == tuple(declared)
    json_keys = list(_stats().to_json())
    assert [k for k in json_keys if k in declared] == list(FIGURES)
    assert len({f.path for f in declared.values()}) == len(declared)


def test_every_figure_path_is_in_the_shipped_facet_schema():
    props = statistics_schema()["$defs"]["IcebergTableStatisticsDatasetFacet"]["allOf"][1]["properties"]
    for name, fig in SnapshotStats.figures().items():
        group, _, key = fig.path.partition(".")
        assert group in props, name
        assert not key or key in props[group]["properties"], name


def test_a_figure_reaches_the_facet_at_its_path_with_its_source():
    facet = statistics_facet(_stats(records=7, data_files_size_bytes=10, dv_files=2))
    assert (facet.records, facet.bytes, facet.deleteFiles) == (7, {"data": 10}, {"dv": 2})
    assert facet.sources == {"records": "summary", "bytes.data": "summary", "deleteFiles.dv": "summary"}


def test_text_rows_follow_the_declarations():
    rows = figure_rows(_stats(records=1234))
    shown = [f.label for f in SnapshotStats.figures().values() if f.shown]
    assert [label for label, _, _ in rows] == shown
    assert ("records", "1,234", "summary") in rows and ("data files", "—", "") in rows


def test_column_forms():
    col = ColumnStats(field_id=3, name="c", type="long", value_count=4, null_count=1, min=b"\x01", max=9,
                      has_metrics=True)
    assert col.to_json() == {"field_id": 3, "type": "long", "value_count": 4, "null_count": 1, "nan_count": None,
                             "min": "01", "max": 9, "distinct_count": None, "lower_truncated": False,
                             "upper_truncated": False, "bounds_truncated": False, "has_metrics": True}
    assert "boundsTruncated" not in as_json(col, CAMEL) and "hasMetrics" not in as_json(col, CAMEL)
    assert as_json(col, CAMEL)["fieldId"] == 3
    assert dict(zip(COLUMN_HEADINGS, column_row("c", col)))["null %"] == "25.0"


def test_truncation_flags_per_bound():
    """``bounds_truncated`` is the "or" of the two flags, in both forms; the text marks each bound on its own."""
    col = ColumnStats(field_id=2, name="s", type="string", min="ab", max="b", upper_truncated=True)
    assert (col.lower_truncated, col.upper_truncated, col.bounds_truncated) == (False, True, True)
    camel = as_json(col, CAMEL)
    assert "lowerTruncated" not in camel and camel["upperTruncated"] is True and camel["boundsTruncated"] is True
    row = dict(zip(COLUMN_HEADINGS, column_row("s", col)))
    assert (row["min"], row["max"]) == ("ab", "b…")


def test_file_sizes_derive_the_median_for_json_only():
    sizes = FileSizeStats(count=3, min=1, max=900, mean=300.0, histogram={1024: 3, 2: 0}, small_file_threshold=8,
                          small_files=1)
    assert sizes.approx_median == 900
    assert list(sizes.to_json())[4:6] == ["approx_median", "histogram"]
    assert sizes.to_json()["histogram"] == {"2": 0, "1024": 3}
    assert "approxMedian" not in as_json(sizes, CAMEL) and as_json(sizes, CAMEL)["smallFileThreshold"] == 8


def test_forms_of_a_new_model_come_from_its_declaration():
    @dataclass(frozen=True)
    class Model:
        some_count: int | None = figure("some count", "someCount")
        note: str | None = json_field(default=None, omit_empty=(SNAKE,))
        raw: str = not_json(default="x")

    assert as_json(Model(1)) == {"some_count": 1}
    assert as_json(Model(1, "n"), CAMEL) == {"someCount": 1, "note": "n"}
    assert [f.name for f in fields(Model)] == ["some_count", "note", "raw"]
