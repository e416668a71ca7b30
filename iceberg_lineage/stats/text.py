"""How statistics read to people: the values, figure rows and column rows that the CLI's text tables and the
notebook's HTML tables share (each adds only its own markup).

It sits below the model (whose ``_repr_html_`` renders through it), so it takes the model's objects without
importing their classes.
"""
from __future__ import annotations

from typing import Any

from iceberg_lineage.stats.forms import bound_to_json, declared_figures

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")

#: Headings of the per-column table; :func:`column_row` gives the cells in this order.
COLUMN_HEADINGS = ("column", "type", "values", "nulls", "null %", "NaNs", "min", "max", "distinct")


def format_value(value: object) -> str:
    """``—`` for unknown, thousands separators for counts, the JSON form of bounds."""
    if value is None:
        return "—"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(bound_to_json(value))


def human_bytes(n: int | float | None) -> str:
    """Bytes in binary units (``1.5 MiB``), for people; JSON and the CLI keep exact bytes."""
    if n is None:
        return "—"
    exponent = min((int(abs(n)).bit_length() - 1) // 10, len(_UNITS) - 1) if n else 0
    if exponent == 0:
        return f"{int(n)} B"
    return f"{n / 1024 ** exponent:.1f}".removesuffix(".0") + f" {_UNITS[exponent]}"


def figure_rows(stats: Any) -> list[tuple[str, str, str]]:
    """``(label, value, source)`` of each shown figure of a SnapshotStats, in declaration order."""
    return [
        (figure.label, format_value(getattr(stats, name)), stats.sources.get(name, ""))
        for name, figure in declared_figures(type(stats)).items()
        if figure.shown
    ]


def column_row(name: str, column: Any) -> tuple[str, ...]:
    """The cells of one ColumnStats under :data:`COLUMN_HEADINGS`; ``…`` marks a bound that may be truncated."""
    nulls = None
    if column.null_count is not None and column.value_count:
        nulls = f"{100 * column.null_count / column.value_count:.1f}"
    low_cut = "…" if column.lower_truncated else ""
    high_cut = "…" if column.upper_truncated else ""
    return (name, column.type, format_value(column.value_count), format_value(column.null_count),
            format_value(nulls), format_value(column.nan_count), format_value(column.min) + low_cut,
            format_value(column.max) + high_cut, format_value(column.distinct_count))
