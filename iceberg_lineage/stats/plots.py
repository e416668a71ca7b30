"""Matplotlib figures of table statistics (extra ``iceberg-lineage[notebook]``).

Each function builds a :class:`matplotlib.figure.Figure` directly, without pyplot: nothing is drawn on screen or
registered in a global figure list unless the caller displays it. In IPython a returned Figure shows as a PNG.
matplotlib is imported only when a plot is drawn. This module sits below the model (whose ``plot*`` methods call it),
so it takes the model's objects without importing their classes.
"""
from __future__ import annotations

import datetime as dt
import sys
from typing import TYPE_CHECKING, Any

from iceberg_lineage.extras import require
from iceberg_lineage.stats.forms import declared_figures
from iceberg_lineage.stats.text import human_bytes

if TYPE_CHECKING:
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure

#: Marker per snapshot operation, so appends, overwrites and deletes read apart on every panel.
OPERATION_MARKERS = {"append": "o", "overwrite": "s", "delete": "x", "replace": "D"}
_OTHER_MARKER = "^"
#: The figures of the history plot, one panel each, labelled as the figure declares.
_HISTORY_PANELS = ("records", "data_files", "total_files_size_bytes", "delete_files")


def show_figures_as_png() -> None:
    """In an IPython shell, display Figures as PNG. IPython registers that formatter only once pyplot or
    ``%matplotlib`` was used, and these figures never touch pyplot; a formatter already there is kept."""
    require("plots", "matplotlib")
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return
    from IPython.core.pylabtools import print_figure
    from matplotlib.figure import Figure

    png = shell.display_formatter.formatters["image/png"]
    try:
        png.lookup_by_type(Figure)
    except KeyError:
        png.for_type(Figure, lambda fig: print_figure(fig, "png", bbox_inches="tight"))


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    show_figures_as_png()
    return Figure(figsize=(width, height), layout="constrained")


def _bytes_axis(axis: Axis) -> None:
    from matplotlib.ticker import FuncFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _pos: human_bytes(v)))


def _counts_axis(axis: Axis) -> None:
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def history_plot(history: Any) -> Figure:
    """A TableHistory's records, data files, total bytes and delete files over the snapshot timeline; markers by
    operation.

    Unknown figures (``None``, e.g. a snapshot whose manifest list is gone) are left out rather than drawn as 0.
    """
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

    snapshots = history.snapshots
    fig = _figure(9, 7)
    axes = fig.subplots(len(_HISTORY_PANELS), 1, sharex=True)
    operations = sorted({s.operation or "?" for s in snapshots})
    figures = declared_figures(type(snapshots[0])) if snapshots else {}
    for ax, key in zip(axes, _HISTORY_PANELS):
        known = [(s.timestamp, getattr(s, key), s.operation or "?") for s in snapshots if getattr(s, key) is not None]
        ax.plot([t for t, _, _ in known], [v for _, v, _ in known], color="#8aa", linewidth=1, zorder=1)
        for op in operations:
            points = [(t, v) for t, v, o in known if o == op]
            if points:
                marker = OPERATION_MARKERS.get(op, _OTHER_MARKER)
                ax.scatter([t for t, _ in points], [v for _, v in points], marker=marker, label=op, zorder=2)
        top = max(ax.get_ylim()[1], 1)
        ax.set_ylim(-0.04 * top, top)  # from zero (a change reads at its true scale), markers at 0 left whole
        ax.set_ylabel(figures[key].label if figures else key)
        ax.grid(alpha=0.3)
        if key.endswith("bytes"):
            _bytes_axis(ax.yaxis)
        else:
            _counts_axis(ax.yaxis)
    locator = AutoDateLocator()
    axes[-1].xaxis.set_major_locator(locator)
    axes[-1].xaxis.set_major_formatter(ConciseDateFormatter(locator, tz=dt.timezone.utc))
    axes[-1].set_xlabel("snapshot committed (UTC)")
    axes[0].legend(title="operation", loc="upper left", fontsize="small")
    fig.suptitle(f"{history.table.name or history.table.location}: {len(snapshots)} snapshot(s)")
    return fig


def columns_plot(stats: Any) -> Figure:
    """A SnapshotStats' null fraction per column (nulls / values over live data files); columns without metrics are listed apart."""
    measured = [(name, c.null_count / c.value_count) for name, c in stats.columns.items()
                if c.has_metrics and c.null_count is not None and c.value_count]
    fig = _figure(7, 1.2 + 0.3 * max(len(measured), 1))
    ax = fig.subplots()
    names = [name for name, _ in measured]
    fractions = [fraction for _, fraction in measured]
    bars = ax.barh(names, fractions, color="#48a")
    ax.bar_label(bars, labels=[f"{100 * f:.1f} %" for f in fractions], padding=3, fontsize="small")
    ax.set_xlim(0, 1.15)
    ax.invert_yaxis()
    ax.set_xlabel("null fraction")
    title = f"snapshot {stats.snapshot_id}: nulls per column"
    unmeasured = [name for name in stats.columns if name not in names]
    if not measured:
        ax.text(0.5, 0.5, "no column metrics (statistics below entries depth, or metrics off)", ha="center",
                transform=ax.transAxes)
    elif unmeasured:
        title += f"\n(no metrics: {', '.join(unmeasured)})"
    ax.set_title(title, fontsize="medium")
    return fig


def file_sizes_plot(stats: Any) -> Figure:
    """A SnapshotStats' histogram of live data file sizes (power-of-two buckets) with the small-file threshold marked."""
    fig = _figure(7, 3.2)
    ax = fig.subplots()
    sizes = stats.file_sizes
    if sizes is None or not sizes.histogram:
        ax.set_axis_off()
        ax.text(0.5, 0.5, "no file sizes (statistics at summary depth, or no data files)", ha="center",
                transform=ax.transAxes)
        return fig
    uppers = sorted(sizes.histogram)
    lefts = [upper / 2 for upper in uppers]
    colors = ["#c64" if upper <= sizes.small_file_threshold else "#48a" for upper in uppers]
    ax.bar(lefts, [sizes.histogram[u] for u in uppers], width=[u - left for u, left in zip(uppers, lefts)],
           align="edge", color=colors, edgecolor="white")
    ax.set_xscale("log", base=2)
    threshold = human_bytes(sizes.small_file_threshold)
    ax.axvline(sizes.small_file_threshold, color="#c64", linestyle="--",
               label=f"small-file threshold ({threshold}): {sizes.small_files} file(s) below")
    _bytes_axis(ax.xaxis)
    ax.set_xlabel("file size (bucket upper bound)")
    ax.set_ylabel("data files")
    _counts_axis(ax.yaxis)
    ax.legend(fontsize="small")
    ax.set_title(f"snapshot {stats.snapshot_id}: {sizes.count} data file(s)", fontsize="medium")
    return fig


__all__ = ["OPERATION_MARKERS", "columns_plot", "file_sizes_plot", "history_plot", "show_figures_as_png"]
