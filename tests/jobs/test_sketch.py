"""The duration sketch's percentiles are within its stated relative error of the exact nearest-rank percentiles."""
from __future__ import annotations

import numpy as np
import pytest

from iceberg_lineage.jobs.sketch import GAMMA, MAX_S, MIN_S, RELATIVE_ERROR, DurationSketch

PERCENTILES = (1, 5, 25, 50, 75, 90, 95, 99, 100)


def sketch_of(values) -> DurationSketch:
    sketch = DurationSketch()
    for v in values:
        sketch.add(float(v))
    return sketch


@pytest.mark.parametrize("seed", range(4))
def test_percentiles_within_the_bound(seed):
    rng = np.random.default_rng(seed)
    values = np.concatenate([rng.lognormal(mean=seed, sigma=2.5, size=5000),  # 1 ms .. hours
                             rng.uniform(MIN_S, 0.5, size=500), np.zeros(50)])
    values = values[values < MAX_S]
    sketch = sketch_of(values)
    assert sketch.count == len(values)
    worst = 0.0
    for p in PERCENTILES:
        exact = float(np.percentile(values, p, method="inverted_cdf"))
        estimate = sketch.percentile(p)
        if exact < MIN_S:
            assert estimate == 0.0 and exact < MIN_S
            continue
        worst = max(worst, abs(estimate - exact) / exact)
    assert worst <= RELATIVE_ERROR * (1 + 1e-9)
    assert worst > RELATIVE_ERROR / 20  # the comparison measures something: the sketch is not exact


def test_bucket_edges_and_the_range():
    edges = [MIN_S * GAMMA ** k for k in (0, 1, 100, 1000)]
    for edge in edges:
        assert abs(sketch_of([edge]).percentile(50) - edge) <= RELATIVE_ERROR * edge * (1 + 1e-9)
    assert sketch_of([0.0, 0.0004]).percentile(100) == 0.0  # under 1 ms: 0, off by less than 1 ms
    assert sketch_of([-3.0]).percentile(50) == 0.0  # a terminal event stamped before its START
    assert sketch_of([5 * MAX_S]).percentile(50) == MAX_S
    assert DurationSketch().percentile(50) is None


def test_nearest_rank():
    sketch = sketch_of([1.0] * 19 + [100.0])
    assert sketch.percentile(95) == pytest.approx(1.0, rel=RELATIVE_ERROR)  # the 19th of 20
    assert sketch.percentile(96) == pytest.approx(100.0, rel=RELATIVE_ERROR)
