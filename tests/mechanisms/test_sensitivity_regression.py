"""Brute force of the replace-one sensitivities behind the DP regression metrics.

Every data set of ``N <= 3`` rows over a grid of labels and predictions in ``[lo, hi]``
(the endpoints included, where the worst cases lie), every single-row replacement: the
largest change of ``SSE``, ``SAE`` and ``SST`` must not exceed
:func:`regression_sum_sensitivities`, and the ``SSE``/``SAE`` bounds are attained.
The sums are computed here from their definitions.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from skdp.mechanisms.sensitivity import regression_sum_sensitivities


def _sums(rows):
    y = np.array([r[0] for r in rows])
    p = np.array([r[1] for r in rows])
    return {
        "sse": float(np.sum((y - p) ** 2)),
        "sae": float(np.sum(np.abs(y - p))),
        "sst": float(np.sum((y - y.mean()) ** 2)),
    }


@pytest.mark.parametrize(("lo", "hi"), [(0.0, 1.0), (-2.0, 3.0)])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_replace_one_bounds_hold_and_error_bounds_are_tight(lo, hi, n):
    grid = np.linspace(lo, hi, 3)
    cells = list(itertools.product(grid, grid))
    bound = regression_sum_sensitivities(lo, hi)
    worst = dict.fromkeys(bound, 0.0)
    for rows in itertools.product(cells, repeat=n):
        base = _sums(rows)
        for new in cells:  # replace the first row (the sums are symmetric in the rows)
            other = _sums((new, *rows[1:]))
            for k in worst:
                worst[k] = max(worst[k], abs(other[k] - base[k]))
    for k in worst:
        assert worst[k] <= bound[k] * (1 + 1e-12), (k, worst[k], bound[k])
    assert worst["sse"] == pytest.approx(bound["sse"])
    assert worst["sae"] == pytest.approx(bound["sae"])
    if n >= 2:  # the SST bound is within a factor 2 of the worst case here
        assert worst["sst"] >= bound["sst"] / 2


@pytest.mark.parametrize("bounds", [(1.0, 1.0), (2.0, 1.0), (0.0, np.inf), (np.nan, 1.0)])
def test_degenerate_ranges_are_refused(bounds):
    with pytest.raises(ValueError, match="bounds_y"):
        regression_sum_sensitivities(*bounds)
