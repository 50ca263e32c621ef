"""DPStandardScaler and DPSimpleImputer with the patient as the privacy unit
(``fit(X, groups=)`` and ``max_rows_per_group``, doc/patients.rst)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skdp.datasets import LONGITUDINAL_EHR_BOUNDS, make_longitudinal_ehr
from skdp.preprocessing import DPSimpleImputer, DPStandardScaler
from skdp.preprocessing import _imputer as imputer_module


def _ehr(n_patients=300, seed=0):
    X, _, _, groups = make_longitudinal_ehr(n_patients, random_state=seed)
    return X, groups


def _with_missing(X, seed=0):
    X = X.copy()
    X[np.random.default_rng(seed).random(X.shape) < 0.2] = np.nan
    return X


def _one_value_per_patient():
    """Patient ``i`` has ``i % 4 + 1`` identical rows of value ``i`` (so a fit at
    ``epsilon=inf`` shows which rows were kept)."""
    values = np.arange(40.0)
    counts = np.arange(40) % 4 + 1
    return np.repeat(values, counts)[:, None], np.repeat(np.arange(40), counts), values, counts


B = LONGITUDINAL_EHR_BOUNDS()


def test_scaler_patient_level_fit_scales_the_sensitivities_and_records_the_unit():
    X, groups = _ehr()
    row = DPStandardScaler(bounds=B, random_state=0).fit(X)
    assert row.privacy_unit_ == "row" and row.max_rows_per_group_ is None
    for k in (1, 3):
        pat = DPStandardScaler(bounds=B, max_rows_per_group=k, random_state=0)
        pat.fit(X, groups=groups)
        assert pat.privacy_unit_ == "group" and pat.max_rows_per_group_ == k
        assert pat.epsilon_spent_ == 1.0 and sum(pat.privacy_breakdown_.values()) == 1.0
        for key in ("mean", "variance"):
            assert pat.noise_scale_[key] == k * row.noise_scale_[key]
        # at most k rows a patient are summed, and divided by their number
        assert pat.n_public_ == np.minimum(np.bincount(groups), k).sum()


def test_imputer_patient_level_fit_scales_the_sensitivities(monkeypatch):
    X, groups = _ehr()
    X = _with_missing(X)
    d = X.shape[1]
    seen = []

    def spy(name, fn):
        def wrapped(*args, **kw):
            seen.append((name, kw.get("sensitivity", kw.get("epsilon"))))
            return fn(*args, **kw)

        return wrapped

    for name in ("add_laplace", "add_geometric", "private_quantile"):
        monkeypatch.setattr(imputer_module, name, spy(name, getattr(imputer_module, name)))
    k = 3
    row = DPSimpleImputer(bounds=B, random_state=0).fit(X)
    pat = DPSimpleImputer(bounds=B, max_rows_per_group=k, random_state=0).fit(X, groups=groups)
    assert seen == [("add_laplace", d), ("add_geometric", d)] + [
        ("add_laplace", k * d),
        ("add_geometric", k * d),
    ]
    assert (row.privacy_unit_, pat.privacy_unit_) == ("row", "group")
    assert pat.max_rows_per_group_ == k and pat.privacy_breakdown_ == row.privacy_breakdown_
    seen.clear()
    # the median: one exponential mechanism per column with epsilon / (d k)
    DPSimpleImputer(strategy="median", bounds=B, max_rows_per_group=k, random_state=0).fit(
        X, groups=groups
    )
    assert seen == [("private_quantile", 1.0 / (d * k))] * d


def test_at_most_k_rows_a_patient_enter_the_statistics():
    """At epsilon = inf the released mean is that of the kept rows: with patients of
    identical rows, every patient weighs min(rows, k)."""
    X, groups, values, counts = _one_value_per_patient()
    for k in (1, 2, 4):
        w = np.minimum(counts, k)
        want = (w * values).sum() / w.sum()
        sc = DPStandardScaler(
            epsilon=math.inf, bounds=(0, 40), with_std=False, max_rows_per_group=k
        ).fit(X, groups=groups)
        assert sc.mean_[0] == pytest.approx(want, rel=1e-12)
        imp = DPSimpleImputer(epsilon=math.inf, bounds=(0, 40), max_rows_per_group=k)
        imp.fit(X, groups=groups)
        assert imp.statistics_[0] == pytest.approx(want, rel=1e-12)


def test_rows_beyond_k_are_dropped_at_random_not_the_first_ones():
    """One patient with rows 0, 1, ..., 9 and k = 1: the kept row varies with the seed
    (never always the first), so the order of the rows is not what decides."""
    X = np.arange(10.0)[:, None]
    kept = {
        DPStandardScaler(
            epsilon=math.inf, bounds=(0, 10), with_std=False, max_rows_per_group=1, random_state=s
        )
        .fit(X, groups=np.zeros(10))
        .mean_[0]
        for s in range(40)
    }
    assert len(kept) > 5 and kept <= set(range(10))


@pytest.mark.parametrize("make", [DPStandardScaler, DPSimpleImputer])
def test_without_groups_the_bound_changes_nothing(make):
    """groups=None: the row-level release, bit for bit (max_rows_per_group at None
    stays out of the seed material); a bound without groups is a row-level fit too."""
    X, _ = _ehr()
    X = _with_missing(X) if make is DPSimpleImputer else X
    a = make(bounds=B, random_state=0).fit(X)
    b = make(bounds=B, max_rows_per_group=None, random_state=0).fit(X, groups=None)
    assert b.privacy_unit_ == "row" and b.max_rows_per_group_ is None
    stat = "mean_" if make is DPStandardScaler else "statistics_"
    np.testing.assert_array_equal(getattr(a, stat), getattr(b, stat))
    c = make(bounds=B, max_rows_per_group=3, random_state=0).fit(X)
    assert c.privacy_unit_ == "row" and c.max_rows_per_group_ is None


@pytest.mark.parametrize("make", [DPStandardScaler, DPSimpleImputer])
def test_the_grouping_is_in_the_seed_material(make):
    """The same rows under two groupings get other noise (the labels are private
    inputs); the same call twice gives the same release."""
    X, groups = _ehr()
    X = _with_missing(X) if make is DPSimpleImputer else X
    stat = "mean_" if make is DPStandardScaler else "statistics_"

    def fit(g):
        est = make(bounds=B, max_rows_per_group=50, random_state=0)
        return getattr(est.fit(X, groups=g), stat)

    assert not np.allclose(fit(groups % 7), fit(groups % 11))
    np.testing.assert_array_equal(fit(groups % 7), fit(groups % 7))


def test_constant_imputer_with_groups_spends_nothing():
    X, groups = _ehr()
    imp = DPSimpleImputer(strategy="constant", max_rows_per_group=2).fit(
        _with_missing(X), groups=groups
    )
    assert imp.epsilon_spent_ == 0.0 and imp.privacy_unit_ == "group"


_SECRET = "patient-7731"  # a label that must never appear in a message


@pytest.mark.parametrize("make", [DPStandardScaler, DPSimpleImputer])
@pytest.mark.parametrize(
    ("params", "groups", "error", "match"),
    [
        ({}, np.arange(10) // 2, ValueError, "needs max_rows_per_group"),
        ({"max_rows_per_group": 2}, np.arange(9), ValueError, "9 labels for 10 rows"),
        (
            {"max_rows_per_group": 2},
            [None] * 10,
            ValueError,
            "groups has missing or non-finite labels",
        ),
        ({"max_rows_per_group": 2}, np.r_[np.nan, np.ones(9)], ValueError, "groups has"),
        ({"max_rows_per_group": 2}, [[_SECRET]] * 10, ValueError, "groups must be 1-d"),
        ({"max_rows_per_group": 2}, [{_SECRET: 1}] * 10, TypeError, "groups labels must"),
        ({"max_rows_per_group": 2}, _SECRET, TypeError, "groups must be an array-like"),
        ({"max_rows_per_group": 0}, np.arange(10), ValueError, "max_rows_per_group"),
        ({"max_rows_per_group": 2.5}, np.arange(10), ValueError, "max_rows_per_group"),
        ({"max_rows_per_group": "2"}, np.arange(10), ValueError, "max_rows_per_group"),
    ],
)
def test_bad_patient_level_input_is_refused(make, params, groups, error, match):
    X = np.random.default_rng(0).uniform(0, 1, (10, 2))
    est = make(bounds=(0, 1), **params)
    with pytest.raises(error, match=match) as info:
        est.fit(X, groups=groups)
    assert _SECRET not in str(info.value)


@pytest.mark.parametrize("bounds", [None, "private"])
def test_scaler_estimates_its_bounds_per_patient(bounds):
    # the estimate runs on the kept rows with its queries calibrated to eps_b / k; it
    # spends its stated share, and the reliability rule sees eps_b / k
    X, groups = _ehr(n_patients=2000)
    est = DPStandardScaler(epsilon=5.0, bounds=bounds, max_rows_per_group=3, random_state=0)
    est.fit(X, groups=groups)
    assert est.privacy_unit_ == "group" and est.epsilon_spent_ == 5.0
    assert est.privacy_breakdown_["bounds"] == pytest.approx(0.5)
    lo, hi = est.bounds_
    assert np.all(lo < np.median(X, axis=0)) and np.all(np.median(X, axis=0) < hi)
    if bounds is None:
        # 2000 one-row patients, 2 columns, epsilon 2: n * 0.01 * (0.2 / 4) / k is 1 at
        # k = 1 (reliable, >= 0.5) and 1/3 at k = 3 (refused before any row is read)
        Z = np.random.default_rng(0).normal(size=(2000, 2))
        ids = np.arange(2000)
        DPStandardScaler(epsilon=2.0, max_rows_per_group=1).fit(Z, groups=ids)
        with pytest.raises(ValueError, match=r"bounds=None: estimating bounds privately"):
            DPStandardScaler(epsilon=2.0, max_rows_per_group=3).fit(Z, groups=ids)


def test_imputer_median_refuses_dask_input():
    da = pytest.importorskip("dask.array")
    X = da.from_array(np.random.default_rng(0).uniform(0, 1, (20, 2)), chunks=10)
    est = DPSimpleImputer(strategy="median", bounds=(0, 1), max_rows_per_group=2)
    with pytest.raises(ValueError, match="strategy='median' is not supported for Dask"):
        est.fit(X, groups=np.arange(20) // 2)


@pytest.mark.parametrize("make", [DPStandardScaler, DPSimpleImputer])
def test_dask_groups_beside_in_memory_rows_are_refused(make):
    da = pytest.importorskip("dask.array")
    X = np.random.default_rng(0).uniform(0, 1, (20, 2))
    est = make(bounds=(0, 1), max_rows_per_group=2)
    with pytest.raises(ValueError, match="groups is a Dask collection but the data are in"):
        est.fit(X, groups=da.from_array(np.arange(20) // 2, chunks=10))


def test_fit_transform_and_a_pipeline_step_take_groups():
    from sklearn.pipeline import Pipeline

    X, groups = _ehr()
    Z = DPStandardScaler(bounds=B, max_rows_per_group=3, random_state=0).fit_transform(
        X, groups=groups
    )
    assert Z.shape == X.shape
    pipe = Pipeline([("scale", DPStandardScaler(bounds=B, max_rows_per_group=3))])
    pipe.fit(X, scale__groups=groups)
    assert pipe.named_steps["scale"].privacy_unit_ == "group"


def test_a_dp_pipeline_routes_groups_to_the_scaler_and_the_imputer():
    from skdp.linear_model import DPLinearRegression
    from skdp.pipeline import make_dp_pipeline

    X, y, _, groups = make_longitudinal_ehr(300, random_state=0)
    pipe = make_dp_pipeline(
        DPSimpleImputer(epsilon=0.25, bounds=B, max_rows_per_group=3, random_state=0),
        DPStandardScaler(epsilon=0.25, bounds=B, max_rows_per_group=3, random_state=0),
        DPLinearRegression(bounds_X=(-5, 5), bounds_y=(0, 150), max_rows_per_group=3),
    )
    pipe.fit(_with_missing(X), y, groups=groups)
    assert [step.privacy_unit_ for _, step in pipe.steps] == ["group"] * 3
    assert pipe.privacy_unit_ == "group" and pipe.epsilon_spent_ == 1.5
