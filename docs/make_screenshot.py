"""Render ``docs/notebook.png`` for docs/notebooks.md: the events table and the history plot a notebook shows.

Writes a demo table through an attached SQLite catalog in a temporary folder (as ``notebooks/quickstart.ipynb`` does),
then draws the session's events as a table above ``history_plot``. Usage: ``python docs/make_screenshot.py [OUT]``.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().with_name("notebook.png")
#: Events shown in the table (the latest ones).
ROWS = 10


def pixels(fig):
    """A Figure as an RGBA array, so figures drawn on their own can be stacked in one image."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())


def events_figure(events):
    """The notebook's events table (time, type, job, inputs, outputs), drawn with matplotlib."""
    from matplotlib.figure import Figure

    from iceberg_lineage.notebook.html import event_type_label

    shown = events[-ROWS:]
    fig = Figure(figsize=(11, 0.5 + 0.22 * (len(shown) + 1)))
    ax = fig.add_axes((0.01, 0.0, 0.98, 1 - 0.4 / fig.get_figheight()))
    ax.set_axis_off()
    rows = [[str(ev.data.get("eventTime", ""))[11:23], event_type_label(ev.data), ev.job, ", ".join(ev.inputs),
             ", ".join(ev.outputs)] for ev in shown]
    table = ax.table(cellText=rows, colLabels=["time (UTC)", "type", "job", "inputs", "outputs"], loc="upper left",
                     cellLoc="left", colWidths=[0.09, 0.13, 0.16, 0.31, 0.31], bbox=(0, 0, 1, 1))
    table.auto_set_font_size(False)
    table.set_fontsize(7.5)
    fig.suptitle(f"session.events: the last {len(shown)} of {len(events)} OpenLineage events sent", x=0.01,
                 y=1 - 0.05 / fig.get_figheight(), ha="left", va="top", fontsize=10)
    return fig


def main(out: Path = OUT) -> Path:
    from matplotlib.figure import Figure
    from openlineage.client import OpenLineageClient
    from openlineage.client.transport.file import FileConfig, FileTransport
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.expressions import GreaterThanOrEqual

    from iceberg_lineage import table_history
    from iceberg_lineage.demo.tables import write_demo_table
    from iceberg_lineage.notebook import attach, history_plot

    with tempfile.TemporaryDirectory(prefix="iceberg-lineage-screenshot-") as tmp:
        os.chdir(tmp)
        catalog = SqlCatalog("warehouse", uri=f"sqlite:///{tmp}/catalog.db", warehouse=f"file://{tmp}")
        client = OpenLineageClient(transport=FileTransport(FileConfig(log_file_path=f"{tmp}/events.jsonl")))
        session = attach(catalog, client=client)
        table = write_demo_table(catalog, "demo.orders", commits=10)
        table.scan(row_filter=GreaterThanOrEqual("amount", 90.0)).to_arrow()
        parts = [pixels(events_figure(session.events)), pixels(history_plot(table_history(table)))]
    heights = [p.shape[0] for p in parts]
    width = max(p.shape[1] for p in parts)
    dpi = 100
    sheet = Figure(figsize=(width / dpi, sum(heights) / dpi), dpi=dpi)
    axes = sheet.subplots(len(parts), 1, gridspec_kw={"height_ratios": heights, "hspace": 0})
    sheet.subplots_adjust(0, 0, 1, 1)
    for ax, part in zip(axes, parts):
        ax.imshow(part)
        ax.set_axis_off()
    sheet.savefig(out, dpi=dpi)
    return out


if __name__ == "__main__":
    print(main(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else OUT))
