"""Private bounds per patient: with at most k rows a patient, every count behind the
bounds' queries (the sparse-vector threshold queries and the quantile utility) moves by
at most k when a patient is added or removed, so ``resolve_bounds(...,
max_rows_per_group=k)`` calibrates them to ``epsilon_b / k`` and charges ``epsilon_b``."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from skdp.linear_model import DPLinearRegression
from skdp.mechanisms import resolve_bounds
from skdp.mechanisms._quantiles import _threshold_queries, grid_quantile_utilities
from skdp.mechanisms.sensitivity import group_sensitivity, quantile_utility_sensitivity

CANDIDATES = np.arange(-1.5, 7.0, 0.5)


def _deltas(base, patient, q):
    """Largest change of every query over the candidates when ``patient`` is added."""
    both = np.r_[base, patient]
    out = [
        np.abs(
            grid_quantile_utilities(both, q, CANDIDATES)
            - grid_quantile_utilities(base, q, CANDIDATES)
        ).max()
    ]
    for side in ("lower", "upper"):
        g0 = _threshold_queries(base, q, CANDIDATES, side)[0]
        g1 = _threshold_queries(both, q, CANDIDATES, side)[0]
        out.append(np.abs(g1 - g0).max())
    return max(out)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_brute_force_sensitivity_per_patient_is_k(k):
    bound = group_sensitivity(quantile_utility_sensitivity(), k)
    assert bound == k
    rng = np.random.default_rng(k)
    values = [-1, 0, 2, 3, 5, 7]  # below, inside and above the base data's range
    worst = 0.0
    for _ in range(6):
        base = rng.integers(0, 6, size=int(rng.integers(0, 9))).astype(float)
        for size in range(1, k + 1):  # every patient of at most k rows
            for patient in itertools.combinations_with_replacement(values, size):
                for q in (0.0, 0.01, 0.5, 1.0):
                    worst = max(worst, _deltas(base, np.array(patient, float), q))
    assert worst <= bound + 1e-12
    assert worst >= bound - 0.5  # attained up to max(q, 1 - q) >= 1/2: k is needed


@pytest.mark.parametrize("bounds", [None, "private"])
@pytest.mark.parametrize("k", [2, 5])
def test_resolve_bounds_per_patient_is_the_estimate_at_epsilon_over_k(bounds, k):
    X = np.random.default_rng(0).normal(size=(20000, 3))
    lo, hi, used = resolve_bounds(
        bounds, X, epsilon=4.0, rng=np.random.default_rng(1), max_rows_per_group=k
    )
    lo_k, hi_k, used_k = resolve_bounds(bounds, X, epsilon=4.0 / k, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(lo, lo_k)
    np.testing.assert_array_equal(hi, hi_k)
    assert used == pytest.approx(0.4) and used_k == pytest.approx(0.4 / k)  # charged in full


def test_row_level_estimate_unchanged():
    X = np.random.default_rng(0).normal(size=(5000, 2))
    a = resolve_bounds(None, X, epsilon=2.0, rng=np.random.default_rng(3))
    b = resolve_bounds(None, X, epsilon=2.0, rng=np.random.default_rng(3), max_rows_per_group=None)
    for u, v in zip(a[:2], b[:2], strict=True):
        np.testing.assert_array_equal(u, v)
    assert a[2] == b[2] == 0.2


def test_linear_regression_estimates_its_bounds_per_patient():
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(4000), 3)
    X = rng.normal(size=(groups.size, 2))
    y = X @ [1.0, -1.0] + rng.normal(size=groups.size)
    est = DPLinearRegression(epsilon=2.0, max_rows_per_group=3, random_state=0)
    est.fit(X, y, groups=groups)
    assert est.privacy_unit_ == "group" and est.epsilon_spent_ == pytest.approx(2.0)
    assert est.privacy_breakdown_["bounds"] == pytest.approx(0.2)
    lo, hi = est.bounds_X_
    assert np.all(lo < -1.0) and np.all(hi > 1.0)
    assert est.bounds_y_[0] < -1.0 < 1.0 < est.bounds_y_[1]
    np.testing.assert_allclose(est.coef_, [1.0, -1.0], atol=0.3)
