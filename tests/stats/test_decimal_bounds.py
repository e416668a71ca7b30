"""decimal(38,10) bounds are exact at any precision; the JSON-number form in dataQualityMetrics stays a bound."""
from __future__ import annotations

import datetime as dt
import decimal
import json
import math

import pyarrow as pa
import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import DecimalType, NestedField

from iceberg_lineage.lineage import facets as fb
from iceberg_lineage.read.bounds import decoder_for
from iceberg_lineage.stats import snapshot_stats

LOW = decimal.Decimal("-9999999999999999999999999999.9999999999")
HIGH = decimal.Decimal("99999999999999999999999999.0000000001")


def _bytes(value: decimal.Decimal, scale: int) -> bytes:
    unscaled = int(value.scaleb(scale, decimal.Context(prec=50)))
    return unscaled.to_bytes(16, "big", signed=True)


@pytest.mark.parametrize("value", [LOW, HIGH, decimal.Decimal("0.0000000001"), decimal.Decimal("-1.0000000000")])
def test_decimal_bounds_decode_exactly(value):
    decoded = decoder_for("decimal(38, 10)")(_bytes(value, 10))
    assert decoded == value and str(decoded) == str(value)


def test_a_table_of_decimal_38_10_reports_its_real_extremes(sql_catalog):
    schema = Schema(NestedField(1, "amount", DecimalType(38, 10), required=False))
    table = sql_catalog.create_table("db.money", schema=schema)
    values = pa.array([LOW, decimal.Decimal("1.5"), HIGH], pa.decimal128(38, 10))
    table.append(pa.table({"amount": values}))
    stats = snapshot_stats(table)
    column = stats.columns["amount"]
    assert (column.min, column.max) == (LOW, HIGH)
    assert json.loads(json.dumps(stats.to_json()))["columns"]["amount"]["max"] == str(HIGH)

    metrics = fb.data_quality_facet(stats, dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)).columnMetrics["amount"]
    # JSON numbers are doubles: the min is rounded down and the max up to the nearest double, so they stay bounds.
    assert decimal.Decimal(metrics.min) <= LOW < decimal.Decimal(math.nextafter(metrics.min, math.inf))
    assert decimal.Decimal(math.nextafter(metrics.max, -math.inf)) < HIGH <= decimal.Decimal(metrics.max)


def test_json_number_bounds_are_rounded_outward(sql_catalog):
    """0.1 and 0.3 have no double: the nearest ones are 0.1000...055 (above) and 0.2999...889 (below), on the wrong
    side of a minimum and a maximum; the facet takes the next double outward."""
    schema = Schema(NestedField(1, "rate", DecimalType(9, 4), required=False))
    table = sql_catalog.create_table("db.rates", schema=schema)
    table.append(pa.table({"rate": pa.array([decimal.Decimal("0.1"), decimal.Decimal("0.3")], pa.decimal128(9, 4))}))
    stats = snapshot_stats(table)
    metrics = fb.data_quality_facet(stats, dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)).columnMetrics["rate"]
    assert decimal.Decimal(float("0.1")) > decimal.Decimal("0.1") > decimal.Decimal(metrics.min)
    assert decimal.Decimal(float("0.3")) < decimal.Decimal("0.3") < decimal.Decimal(metrics.max)
    assert (metrics.min, metrics.max) == (math.nextafter(0.1, -math.inf), math.nextafter(0.3, math.inf))
