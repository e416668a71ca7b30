"""Runs over time by state, as a matplotlib Figure built without pyplot (see :mod:`iceberg_lineage.stats.plots`).
It sits below the model, so it takes the report without importing its class."""
from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from iceberg_lineage.jobs.text import STATES
from iceberg_lineage.stats.plots import show_figures_as_png

if TYPE_CHECKING:
    from matplotlib.figure import Figure

COLOURS = {"completed": "#4a4", "failed": "#c33", "aborted": "#e90", "open": "#999"}


def runs_plot(report: Any) -> Figure:
    """Stacked bars of runs per time interval: completed, failed, aborted (at their terminal event) and open (at
    their first event)."""
    show_figures_as_png()
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(9, 3.5), layout="constrained")
    ax = fig.subplots()
    bins = report.timeline
    if not bins:
        ax.set_axis_off()
        ax.text(0.5, 0.5, "no runs in these events", ha="center", transform=ax.transAxes)
        return fig
    starts = [b.start for b in bins]
    width = dt.timedelta(seconds=bins[0].width_s)
    bottom = [0] * len(bins)
    for state in STATES:
        counts = [getattr(b, state) for b in bins]
        if any(counts):
            ax.bar(starts, counts, width=width, bottom=bottom, align="edge", color=COLOURS[state], label=state)
            bottom = [low + n for low, n in zip(bottom, counts)]
    locator = AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator, tz=dt.timezone.utc))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel(f"runs per {_width_label(bins[0].width_s)}")
    ax.set_xlabel("time (UTC)")
    ax.legend(loc="upper left", fontsize="small")
    ax.grid(alpha=0.3, axis="y")
    ax.set_title(f"{sum(bottom)} run(s) of {len(report.jobs)} job(s)", fontsize="medium")
    return fig


def _width_label(seconds: float) -> str:
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g} {unit}(s)"
    return f"{seconds:g} s"


__all__ = ["COLOURS", "runs_plot"]
