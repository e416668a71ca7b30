"""``timestamp_ns`` bounds are compared and printed in whole nanoseconds: two bounds within one microsecond never
tie, and a maximum is never cut below the real value (numpy's ``datetime64[ns]`` is the independent reference)."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from iceberg_lineage.stats.forms import bound_to_json
from iceberg_lineage.stats.partials import PartialContext, summarize_entries

FIELD = 1


def _entry(low: int, high: int) -> dict:
    raw = struct.Struct("<q").pack
    return {"status": 1, "snapshot_id": 7, "data_file": {
        "content": 0, "file_path": f"s3://b/{low}.parquet", "record_count": 2, "file_size_in_bytes": 100,
        "value_counts": [{"key": FIELD, "value": 2}], "null_value_counts": [{"key": FIELD, "value": 0}],
        "lower_bounds": [{"key": FIELD, "value": raw(low)}], "upper_bounds": [{"key": FIELD, "value": raw(high)}],
    }}


@pytest.mark.parametrize("type_name,suffix", [("timestamp_ns", ""), ("timestamptz_ns", "+00:00")])
@pytest.mark.parametrize("order", [1, -1])
def test_bounds_within_one_microsecond_do_not_tie(type_name, suffix, order):
    files = [(750_007_001, 750_007_433), (750_007_000, 750_007_432), (750_007_999, 750_007_999)][::order]
    ctx = PartialContext(bound_types=((FIELD, type_name),), small_file_threshold=0)
    column = summarize_entries(iter([_entry(*f) for f in files]), 0, ctx, "m.avro").columns[FIELD]
    low, high = min(lo for lo, _ in files), max(hi for _, hi in files)
    assert bound_to_json(column.lower) == str(np.datetime64(low, "ns")) + suffix == "1970-01-01T00:00:00.750007000" + suffix
    assert bound_to_json(column.upper) == str(np.datetime64(high, "ns")) + suffix == "1970-01-01T00:00:00.750007999" + suffix
