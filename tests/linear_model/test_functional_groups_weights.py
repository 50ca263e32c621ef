"""DPLinearRegression with groups and contribution="weight": every row of a patient with
n_p rows weighted by min(1, k / n_p) in every statistic (skdp.linear_model.
_functional_weights). Brute-force sensitivity over neighbours, exactness, the Dask path,
and the old random choice kept reachable (contribution="sample")."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from skdp.linear_model import DPLinearRegression
from skdp.linear_model._functional_plan import FunctionalPlan
from skdp.linear_model._functional_release import (
    _Centre,
    _gram_index,
    _scaled_gram,
    _Scaling,
    _statistics,
    _target_moments,
)
from skdp.linear_model._functional_weights import patient_weights

BOUNDS = (-1.0, 1.0)


def _scaling(p, fit_intercept=True):
    lo, hi = np.full(p, -1.0), np.full(p, 1.0)
    return _Scaling.build(lo, hi, -1.0, 1.0, fit_intercept=fit_intercept)


def _released(X, y, groups, k, *, mechanism, fit_intercept=True, centre_mean=0.1):
    """The three weighted releases' exact inputs on (X, y, groups): the statistics'
    vector ``(upper(M) without the corner, w b)``, the target moments ``(sum y~,
    sum (y~^2 - 1/2))`` and the smallest eigenvalue of ``M`` (the released mean of the
    centring held fixed: each release is conditioned on the earlier ones)."""
    p = X.shape[1]
    sc = _scaling(p, fit_intercept)
    codes = np.unique(groups, return_inverse=True)[1]
    X, y, sizes, n = patient_weights(X, y, codes, k, False)
    weights = (sizes, k)
    plan = patient_plan(p, k, mechanism=mechanism, fit_intercept=fit_intercept, n=max(n, 1000))
    centre = _Centre(centre_mean if fit_intercept else 0.0, 0.2, 1.0)
    M, b = _statistics(X, y, sc, centre, plan, list(range(p)), True, weights)
    rows, cols = _gram_index(M.shape[0], fit_intercept)
    stats = np.concatenate([M[rows, cols], plan.target_weight * b])
    s1, s2 = _target_moments(X, y, *sc.args(), clip=True, columns=None, weights=weights)
    moments = np.array([s1, s2 - 0.5 * n])
    return plan, stats, moments, float(np.linalg.eigvalsh(M)[0]), n


def patient_plan(p, k, *, mechanism, fit_intercept=True, epsilon=1.0, n=1000, contribution=None):
    """The plan of a patient-level fit from public facts only (the sensitivities do not
    read ``n``); ``contribution="clip"`` for the clipped statistics."""
    return FunctionalPlan.build(
        n=n,
        p=p,
        epsilon=epsilon,
        delta=1e-6 if mechanism == "gaussian" else 0.0,
        eps_bounds=0.0,
        fit_intercept=fit_intercept,
        mechanism=mechanism,
        adaptive=True,
        secure_mode=False,
        max_rows_per_group=k,
        contribution=contribution,
    )


def _table(seed=0):
    """Seven patients of 1 to 7 rows, values anywhere in the box, two at its corners."""
    rng = np.random.default_rng(seed)
    sizes = [1, 2, 3, 4, 5, 6, 7]
    groups = np.repeat(np.arange(len(sizes)), sizes)
    X = rng.uniform(-1.2, 1.2, (groups.size, 2))  # some clipped to the bounds
    y = rng.uniform(-1.2, 1.2, groups.size)
    X[groups == 5], y[groups == 5] = 1.0, -1.0  # a patient of 6 corner rows
    X[groups == 6] = np.where(rng.random((7, 2)) < 0.5, -1.0, 1.0)
    y[groups == 6] = 1.0
    return X, y, groups


@pytest.mark.parametrize("mechanism", ["functional", "gaussian"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_brute_force_sensitivity_over_every_neighbour(mechanism, fit_intercept, k):
    """Remove each patient, and each pair of patients (a removal then the other's
    addition: the weights of the others stay as they were): every change of the
    statistics' vector (L1 for Laplace, L2 for Gaussian noise), of the target moments
    (L1) and of the smallest eigenvalue is within the plan's sensitivity, ``k`` times
    the row's; and a patient of ``k`` or more corner rows attains it."""
    X, y, groups = _table()
    norm = 2 if mechanism == "gaussian" else 1
    plan, s0, m0, e0, n0 = _released(
        X, y, groups, k, mechanism=mechanism, fit_intercept=fit_intercept
    )
    worst = 0.0
    for out in itertools.chain(
        ([g] for g in np.unique(groups)), itertools.combinations(np.unique(groups), 2)
    ):
        keep = ~np.isin(groups, out)
        _, s1, m1, e1, n1 = _released(
            X[keep], y[keep], groups[keep], k, mechanism=mechanism, fit_intercept=fit_intercept
        )
        units = len(out)  # removing u patients: at most u times a patient's change
        change = np.linalg.norm(s0 - s1, ord=norm)
        assert change <= units * plan.sensitivity * (1 + 1e-9)
        assert np.abs(m0 - m1).sum() <= units * plan.centre_sensitivity * (1 + 1e-9)
        assert abs(e0 - e1) <= units * plan.eigenvalue_sensitivity * (1 + 1e-9)
        assert 0 <= n0 - n1 <= units * k
        if units == 1:
            worst = max(worst, change / plan.sensitivity)
    if not fit_intercept and k <= 6:  # a corner patient with >= k rows: the bound is tight
        assert worst == pytest.approx(1.0, rel=1e-9)


def test_weighted_statistics_are_the_weighted_float_sums():
    X, y, groups = _table(1)
    k = 2
    sc = _scaling(2)
    codes = np.unique(groups, return_inverse=True)[1]
    _, _, sizes, n = patient_weights(X, y, codes, k, False)
    S = _scaled_gram(X, y, *sc.args(), clip=True, columns=None, weights=(sizes, k))
    Z = np.column_stack(
        [np.clip(X, -1, 1) * sc.ax + sc.cx, np.clip(y, -1, 1) * sc.ay + sc.cy, np.ones(len(y))]
    )
    w = np.minimum(1.0, k / sizes)
    np.testing.assert_allclose(S, (Z * w[:, None]).T @ Z, rtol=0, atol=1e-9)  # 2^-39 grid
    assert n == int(np.minimum(np.bincount(codes), k).sum()) == S[-1, -1]


def test_exact_whatever_the_order_and_unweighted_when_no_patient_exceeds_k():
    X, y, groups = _table(2)
    sc = _scaling(2)
    codes = np.unique(groups, return_inverse=True)[1]
    sizes = np.bincount(codes)[codes]
    args = (*sc.args(),)
    a = _scaled_gram(X, y, *args, clip=True, columns=None, weights=(sizes, 3))
    perm = np.random.default_rng(0).permutation(len(y))
    b = _scaled_gram(X[perm], y[perm], *args, clip=True, columns=None, weights=(sizes[perm], 3))
    np.testing.assert_array_equal(a, b)  # exact rationals: bit for bit
    unweighted = _scaled_gram(X, y, *args, clip=True, columns=None)
    full = _scaled_gram(X, y, *args, clip=True, columns=None, weights=(sizes, 7))
    np.testing.assert_array_equal(full, unweighted)


def _fit_data(seed=0, n_patients=120):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 12, n_patients)
    groups = np.repeat(np.arange(n_patients), sizes)
    X = rng.uniform(-1, 1, (groups.size, 2))
    y = X @ [0.5, -0.3] + 0.1 * rng.normal(size=groups.size)
    return X, y, groups


_KW = dict(bounds_X=BOUNDS, bounds_y=(-1.5, 1.5), max_rows_per_group=3, random_state=0)


def test_weight_is_the_default_and_sample_stays_reachable():
    X, y, groups = _fit_data()
    default = DPLinearRegression(**_KW).fit(X, y, groups=groups)
    weight = DPLinearRegression(contribution="weight", **_KW).fit(X, y, groups=groups)
    sample = DPLinearRegression(contribution="sample", **_KW).fit(X, y, groups=groups)
    np.testing.assert_array_equal(default.coef_, weight.coef_)
    assert not np.array_equal(sample.coef_, weight.coef_)
    for est in (weight, sample):  # the same plan: sensitivities, noise and budget
        assert est.privacy_unit_ == "group" and est.max_rows_per_group_ == 3
        assert est.epsilon_spent_ == 1.0
    assert weight.sensitivity_ == sample.sensitivity_
    assert weight.noise_scale_ == sample.noise_scale_
    assert weight.privacy_breakdown_ == sample.privacy_breakdown_


def test_non_private_weighted_fit_is_weighted_least_squares():
    X, y, groups = _fit_data(1)
    kw = dict(_KW, epsilon=np.inf, fit_intercept=True)
    est = DPLinearRegression(**kw).fit(X, y, groups=groups)
    sizes = np.bincount(groups)[groups]
    w = np.minimum(1.0, 3 / sizes)
    A = np.column_stack([X, np.ones(len(y))])
    sw = np.sqrt(w)[:, None]
    coef = np.linalg.lstsq(A * sw, y * sw[:, 0], rcond=None)[0]
    np.testing.assert_allclose(est.coef_, coef[:2], atol=1e-8)
    assert est.intercept_ == pytest.approx(coef[2], abs=1e-8)
    assert est.released_statistics_["target_sum_sq"] is not None
    assert est.conf_int().shape == (3, 2)


def test_private_bounds_with_weights():
    """A private bound estimate runs on at most k rows of each patient (chosen at
    random), the statistics on every row, weighted."""
    X, y, groups = _fit_data(2, n_patients=2000)
    est = DPLinearRegression(
        epsilon=3.0, bounds_X="private", bounds_y="private", max_rows_per_group=3, random_state=0
    )
    est.fit(X, y, groups=groups)
    assert est.privacy_breakdown_["bounds"] > 0 and est.epsilon_spent_ == pytest.approx(3.0)


def test_clip_false_checks_every_row_with_weights():
    X, y, groups = _fit_data(3)
    X[5, 0] = 4.0
    with pytest.raises(ValueError, match="outside the declared bounds in column"):
        DPLinearRegression(clip=False, **_KW).fit(X, y, groups=groups)


def test_bad_contribution_is_refused_by_name():
    X, y, groups = _fit_data()
    with pytest.raises(ValueError, match="contribution"):
        DPLinearRegression(contribution="drop", **_KW).fit(X, y, groups=groups)


def _dask_fits(X, y, groups, layouts, **params):
    """One fit per ``(row order, X/y chunk rows, groups chunk rows or None)`` on Dask
    input, no row brought to the client (the guard of ``tests/dask``)."""
    pytest.importorskip("dask.dataframe")
    import dask
    import dask.array as da

    from tests.dask._guard import no_full_compute

    fits = []
    with dask.config.set(scheduler="sync"), no_full_compute(max_rows=X.shape[1] + 2):
        for order, rows, labels in layouts:
            Xd = da.from_array(X[order], chunks=(rows, X.shape[1]))
            yd = da.from_array(y[order], chunks=rows)
            gd = groups[order] if labels is None else da.from_array(groups[order], chunks=labels)
            fits.append(DPLinearRegression(**params).fit(Xd, yd, groups=gd))
    return fits


@pytest.mark.slow
def test_dask_weighted_fit_matches_in_memory():
    """On Dask the patient sizes are counted on the workers after Dask's shuffle by
    patient: the same exact statistics as in memory, bit for bit, with patients far
    above k; a seeded release reads the rows as a multiset."""
    X, y, groups = _fit_data(4)
    ident, perm = np.arange(len(y)), np.random.default_rng(0).permutation(len(y))
    memory = DPLinearRegression(**dict(_KW, epsilon=np.inf)).fit(X, y, groups=groups)
    (exact,) = _dask_fits(X, y, groups, [(ident, 97, 61)], **dict(_KW, epsilon=np.inf))
    np.testing.assert_array_equal(exact.coef_, memory.coef_)
    assert exact.intercept_ == memory.intercept_
    a, b = _dask_fits(X, y, groups, [(ident, 100, None), (perm, 77, 50)], **_KW)
    np.testing.assert_array_equal(a.coef_, b.coef_)
