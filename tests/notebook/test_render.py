"""HTML renderers and plots on real tables: values shown as computed, every name and value escaped."""
from __future__ import annotations

import pyarrow as pa
import pytest

from iceberg_lineage import snapshot_stats, table_history
from iceberg_lineage.notebook import (
    columns_plot, events_html, file_sizes_plot, history_html, history_plot, snapshot_html,
)
from iceberg_lineage.notebook.html import event_html, human_bytes

HOSTILE = "<script>alert(1)</script>"
VALUE = "<img src=x onerror=alert(2)>"


@pytest.fixture
def hostile_table(sql_catalog):
    """Column names and values that would be markup if they were not escaped, over three commits."""
    schema = pa.schema([pa.field("id", pa.int64()), pa.field(HOSTILE, pa.string()), pa.field('a&b"c', pa.float64())])
    table = sql_catalog.create_table("db.t", schema=schema)
    table.append(pa.table({"id": [1, 2, 3], HOSTILE: [VALUE, None, "zz"], 'a&b"c': [1.0, None, None]}, schema=schema))
    table.append(pa.table({"id": [4], HOSTILE: ["m"], 'a&b"c': [2.5]}, schema=schema))
    table.delete("id == 4")
    return table


def test_snapshot_html_escapes_names_and_values(hostile_table):
    stats = snapshot_stats(hostile_table, hostile_table.metadata.snapshots[0].snapshot_id)
    html = snapshot_html(stats)
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerr…" in html  # the string column's min bound, truncated to 16 characters
    assert "a&amp;b&quot;c" in html
    # the column's row: 3 values, 1 null (33.3 %); the float column: 2 nulls of 3
    assert ">3</td>" in html and ">33.3</td>" in html and ">66.7</td>" in html
    assert 'class="iceberg-lineage-snapshot"' in html


def test_history_html_one_row_per_snapshot(hostile_table):
    history = table_history(hostile_table)
    html = history_html(history)
    assert html.count("<tr>") == 1 + len(hostile_table.metadata.snapshots) == 4
    current = hostile_table.metadata.current_snapshot_id
    assert f"<b>{current:,}</b>" in html
    assert [op in html for op in (">append<", ">delete<")] == [True, True]


def test_events_html_escapes_event_content():
    event = {
        "eventType": "COMPLETE", "eventTime": "2025-01-01T00:00:00Z",
        "job": {"namespace": "ns", "name": HOSTILE},
        "inputs": [{"namespace": "file", "name": "/w/t", "facets": {
            "symlinks": {"identifiers": [{"name": f"db.{VALUE}", "namespace": "x", "type": "TABLE"}]},
            "version": {"datasetVersion": "42"}}}],
        "outputs": [],
    }
    table = events_html([event])
    assert "<script" not in table and "<img" not in table
    assert f"db.{VALUE} @ 42".replace("<", "&lt;").replace(">", "&gt;") in table
    one = event_html(event)
    assert one.startswith("<details open><summary>COMPLETE ns/&lt;script&gt;")
    assert "<script" not in one and "&quot;datasetVersion&quot;: &quot;42&quot;" in one


def test_human_bytes():
    assert [human_bytes(n) for n in (None, 0, 1023, 1536, 2048, 268_435_456)] == \
        ["—", "0 B", "1023 B", "1.5 KiB", "2 KiB", "256 MiB"]


def test_history_plot_draws_each_figure_per_snapshot(hostile_table):
    history = table_history(hostile_table)
    fig = history_plot(history)
    records, data_files, total_bytes, delete_files = fig.axes
    assert list(records.lines[0].get_ydata()) == [s.records for s in history] == [3, 4, 3]
    assert list(data_files.lines[0].get_ydata()) == [s.data_files for s in history]
    assert list(total_bytes.lines[0].get_ydata()) == [s.total_files_size_bytes for s in history]
    assert list(delete_files.lines[0].get_ydata()) == [0, 0, 0]
    assert [t.get_text() for t in records.get_legend().get_texts()] == ["append", "delete"]
    assert [len(c.get_offsets()) for c in records.collections] == [2, 1]


def test_columns_plot_null_fraction(hostile_table):
    stats = snapshot_stats(hostile_table)
    fig = columns_plot(stats)
    (ax,) = fig.axes
    widths = {tick.get_text(): bar.get_width() for tick, bar in zip(ax.get_yticklabels(), ax.patches)}
    assert widths == pytest.approx({"id": 0.0, HOSTILE: 1 / 3, 'a&b"c': 2 / 3})


def test_file_sizes_plot_marks_threshold(hostile_table):
    stats = snapshot_stats(hostile_table)
    sizes = stats.file_sizes
    fig = file_sizes_plot(stats)
    (ax,) = fig.axes
    assert sorted((bar.get_x() + bar.get_width(), bar.get_height()) for bar in ax.patches) == \
        sorted((float(upper), float(count)) for upper, count in sizes.histogram.items())
    (threshold,) = ax.lines
    assert list(threshold.get_xdata()) == [sizes.small_file_threshold] * 2
    assert f"{sizes.small_files} file(s) below" in ax.get_legend().get_texts()[0].get_text()


def test_plots_of_summary_depth_stats_say_what_is_missing(hostile_table):
    stats = snapshot_stats(hostile_table, depth="summary")
    assert "no column metrics" in columns_plot(stats).axes[0].texts[0].get_text()
    assert "no file sizes" in file_sizes_plot(stats).axes[0].texts[0].get_text()
