"""DPLinearRegression with groups and contribution="clip": each patient's summed
statistics, count included, scaled to the clip norm (skdp.linear_model._functional_clip).
Brute-force sensitivity over neighbours (the bound holds and is reached), the released
count read downstream, the refusals and groups=None."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skdp.linear_model import DPLinearRegression
from skdp.linear_model._functional_clip import clipped_statistics
from skdp.linear_model._functional_release import _Centre, _release, _Scaling
from tests.linear_model.test_functional_groups_weights import patient_plan

BOUNDS = (-1.0, 1.0)


def _plan(p, k, *, mechanism="functional", fit_intercept=True, epsilon=1.0):
    return patient_plan(
        p, k, mechanism=mechanism, fit_intercept=fit_intercept, epsilon=epsilon, contribution="clip"
    )


def _released(X, y, codes, plan, centre_mean=0.1):
    """The clipped statistics' vector ``(upper(M) with the corner, w b)`` and ``M`` (the
    released mean of the centring held fixed: the release is conditioned on it)."""
    p = X.shape[1]
    sc = _Scaling.build(
        np.full(p, -1.0), np.full(p, 1.0), -1.0, 1.0, fit_intercept=plan.fit_intercept
    )
    centre = _Centre(centre_mean if plan.fit_intercept else 0.0, 0.2, 1.0)
    M, b = clipped_statistics(X, y, sc, centre, plan, list(range(p)), True, codes)
    rows, cols = np.triu_indices(M.shape[0])
    return np.concatenate([M[rows, cols], plan.target_weight * b]), M


def _corner_table(seed, p=2, n_patients=9, max_rows=7):
    """Rows at corners of the box, patients of 1..max_rows rows, some with every row at
    one corner (the bound reached), some mixed (cancellations inside the patient)."""
    rng = np.random.default_rng(seed)
    X, y, g = [], [], []
    for q in range(n_patients):
        m = int(rng.integers(1, max_rows + 1))
        if q % 3 == 0:  # one corner, repeated
            X.append(np.tile(rng.choice([-1.0, 1.0], p), (m, 1)))
            y.append(np.full(m, rng.choice([-1.0, 1.0])))
        else:
            X.append(rng.choice([-1.0, 1.0], (m, p)))
            y.append(rng.choice([-1.0, 1.0], m))
        g.append(np.full(m, q))
    X.append(np.ones((max_rows, p)))  # a patient of max_rows rows at the top corner
    y.append(np.ones(max_rows))
    g.append(np.full(max_rows, n_patients))
    return np.vstack(X), np.concatenate(y), np.concatenate(g)


@pytest.mark.parametrize(
    ("mechanism", "fit_intercept", "norm"),
    [("functional", True, 1), ("gaussian", True, 2), ("functional", False, 1)],
)
@pytest.mark.parametrize("k", [1, 3])
def test_removing_any_patient_moves_the_release_by_at_most_the_clip_norm(
    mechanism, fit_intercept, norm, k
):
    plan = _plan(2, k, mechanism=mechanism, fit_intercept=fit_intercept)
    worst_stats = worst_eig = 0.0
    for seed in range(4):
        X, y, g = _corner_table(seed)
        full, M = _released(X, y, g, plan)
        lam = np.linalg.eigvalsh(M)[0]
        for q in np.unique(g):
            keep = g != q
            part, Mq = _released(X[keep], y[keep], g[keep], plan)
            worst_stats = max(worst_stats, np.linalg.norm(full - part, ord=norm))
            worst_eig = max(worst_eig, abs(lam - np.linalg.eigvalsh(Mq)[0]))
    assert worst_stats <= plan.sensitivity * (1 + 1e-12)
    # the bound is reached: a patient of >= k rows at one corner is clipped onto it
    assert worst_stats >= plan.sensitivity * (1 - 1e-9)
    assert worst_eig <= plan.eigenvalue_sensitivity * (1 + 1e-12)


def test_the_clip_norm_holds_the_count_and_is_k_times_the_row_bound():
    weight = patient_plan(3, 4, mechanism="functional")
    clip = _plan(3, 4)
    assert clip.count_released and not weight.count_released
    assert clip.sensitivity == pytest.approx(weight.sensitivity + 4)  # k * (B + 1)
    assert clip.eigenvalue_sensitivity == weight.eigenvalue_sensitivity
    no_intercept = patient_plan(3, 4, mechanism="functional", fit_intercept=False)
    assert _plan(3, 4, fit_intercept=False).sensitivity == no_intercept.sensitivity


def test_a_patient_under_the_clip_norm_enters_whole():
    # patients of n_p <= k rows inside the box: c_p = 1 up to the float margin, so the
    # clipped statistics are the plain sums (every row at weight 1)
    rng = np.random.default_rng(1)
    X = rng.uniform(-0.5, 0.5, (60, 2))
    y = rng.uniform(-0.5, 0.5, 60)
    g = np.repeat(np.arange(20), 3)
    stats, M = _released(X, y, g, _plan(2, 3))
    Z = np.column_stack([X, np.ones(60)])
    np.testing.assert_allclose(M, Z.T @ Z, rtol=1e-12)
    assert M[-1, -1] == pytest.approx(60.0)


def test_the_released_count_is_clamped_to_one():
    plan = _plan(1, 2, epsilon=math.inf)
    M = np.array([[0.5, 0.1], [0.1, -5.0]])  # a count released below 1
    rel = _release(M, np.zeros(2), plan, streams={})
    assert rel["n"] == 1.0 and rel["gram"][-1, -1] == 1.0


def _data(n=2000, seed=0, patients=200):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, patients, n)
    X = rng.uniform(-1, 1, (n, 2))
    y = X @ [0.5, -0.3] + 0.1 + rng.normal(0, 0.1, n)
    return X, y, g


def _est(**kw):
    kw = {"epsilon": 5.0, "bounds_X": BOUNDS, "bounds_y": (-2, 2), "random_state": 0, **kw}
    return DPLinearRegression(**kw)


@pytest.mark.parametrize("mechanism", ["functional", "gaussian"])
def test_fit_reads_the_released_count(mechanism):
    X, y, g = _data()
    est = _est(max_rows_per_group=2, contribution="clip", mechanism=mechanism, delta=1e-7)
    est.fit(X, y, groups=g)
    n = est.released_statistics_["n"]
    assert isinstance(n, float) and n >= 1.0
    assert est.released_statistics_["gram"][-1, -1] == n
    # patients of about 10 rows, k = 2: the clipped count is above sum_p min(n_p, k)
    assert n > 200 * 2
    assert est.privacy_unit_ == "group" and est.epsilon_spent_ == 5.0
    assert np.all(np.isfinite(est.coef_)) and np.all(np.abs(est.coef_ - [0.5, -0.3]) < 0.2)


def test_without_an_intercept_no_count_is_released():
    X, y, g = _data()
    est = _est(max_rows_per_group=2, contribution="clip", fit_intercept=False).fit(X, y, groups=g)
    assert est.released_statistics_["n"] is None
    assert (
        est.sensitivity_
        == _est(max_rows_per_group=2, fit_intercept=False).fit(X, y, groups=g).sensitivity_
    )


def test_secure_mode_releases_the_clipped_vector_on_the_grid():
    X, y, g = _data()
    est = _est(max_rows_per_group=2, contribution="clip", secure_mode=True, delta=0.0)
    est.fit(X, y, groups=g)
    assert est.released_statistics_["n"] >= 1.0 and np.all(np.isfinite(est.coef_))


def test_without_groups_clip_is_the_row_level_fit():
    # as "weight" without groups: n public, the row-level sensitivities, inference allowed
    X, y, _ = _data()
    clip = _est(contribution="clip").fit(X, y)
    default = _est().fit(X, y)
    assert clip.privacy_unit_ == "row" and clip.released_statistics_["n"] == 2000
    assert clip.sensitivity_ == default.sensitivity_
    assert clip.conf_int().shape == (3, 2)
    exact = _est(contribution="clip", epsilon=math.inf).fit(X, y)
    np.testing.assert_array_equal(exact.coef_, _est(epsilon=math.inf).fit(X, y).coef_)


def test_inference_is_refused_naming_contribution():
    X, y, g = _data()
    est = _est(max_rows_per_group=2, contribution="clip").fit(X, y, groups=g)
    for call in (est.conf_int, est.summary):
        with pytest.raises(ValueError, match="contribution='clip'"):
            call()
    with pytest.raises(ValueError, match="contribution='clip'"):
        _est(max_rows_per_group=2, contribution="clip", inference=True).fit(X, y, groups=g)


def test_unknown_contribution_is_refused():
    X, y, g = _data()
    with pytest.raises(ValueError, match="contribution"):
        _est(max_rows_per_group=2, contribution="clipped").fit(X, y, groups=g)


def test_dask_input_is_refused_naming_contribution():
    da = pytest.importorskip("dask.array")
    X, y, g = _data()
    est = _est(max_rows_per_group=2, contribution="clip")
    with pytest.raises(ValueError, match="contribution='clip' is not supported for Dask"):
        est.fit(da.from_array(X, chunks=500), da.from_array(y, chunks=500), groups=g)


def test_a_non_private_clip_fit_keeps_no_weighted_sum_of_squares():
    # epsilon=inf: the clipped statistics exactly, the count released as it is; the
    # weighted sum u^2 of "weight" (read by the OLS interval only) is not theirs
    X, y, g = _data()
    est = _est(max_rows_per_group=2, contribution="clip", epsilon=math.inf).fit(X, y, groups=g)
    assert est.released_statistics_["target_sum_sq"] is None
    assert est.released_statistics_["n"] == pytest.approx(est.released_statistics_["gram"][-1, -1])
