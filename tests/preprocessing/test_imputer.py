"""DPSimpleImputer: NaN accepted; public constant fill, DP mean (noisy count) and median."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.pipeline import make_pipeline

from skdp.exceptions import PrivacyLeakWarning
from skdp.preprocessing import DPSimpleImputer, PublicOneHotEncoder
from skdp.preprocessing import _imputer as imputer_module


def _data(n=4000, seed=0, frac=0.2):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(120, 15, n), rng.uniform(0, 10, n)])
    X[rng.random((n, 2)) < frac] = np.nan
    return X


BOUNDS = ([60.0, 0.0], [220.0, 10.0])


def test_nan_is_accepted_and_filled():
    X = _data()
    imp = DPSimpleImputer(epsilon=1.0, bounds=BOUNDS, random_state=0).fit(X)
    out = imp.transform(X)
    assert not np.isnan(out).any()
    mask = np.isnan(X)
    np.testing.assert_array_equal(out[~mask], X[~mask])
    np.testing.assert_array_equal(out[mask[:, 0], 0], imp.statistics_[0])
    assert np.all(np.abs(imp.statistics_ - np.nanmean(X, axis=0)) < [1.0, 0.2])
    assert imp.epsilon_spent_ == 1.0 and imp.privacy_guarantee_ == "exact"
    assert imp.privacy_breakdown_ == {"sum": 0.5, "count": 0.5}
    assert sum(imp.privacy_breakdown_.values()) == imp.epsilon_spent_


def test_mean_releases_noisy_sum_and_noisy_observed_count(monkeypatch):
    """White box: what is noised, with which sensitivity and budget."""
    calls = {}
    lap, geo = imputer_module.add_laplace, imputer_module.add_geometric

    def rec_lap(value, **kw):
        calls["sum"] = (np.array(value), kw)
        return lap(value, **kw)

    def rec_geo(value, **kw):
        calls["count"] = (np.array(value), kw)
        return geo(value, **kw)

    monkeypatch.setattr(imputer_module, "add_laplace", rec_lap)
    monkeypatch.setattr(imputer_module, "add_geometric", rec_geo)
    X = _data(500)
    DPSimpleImputer(epsilon=2.0, bounds=BOUNDS, random_state=0).fit(X)
    counts, kw = calls["count"]
    np.testing.assert_array_equal(counts, (~np.isnan(X)).sum(0))  # the private observed count
    assert kw["sensitivity"] == 2 and kw["epsilon"] == 1.0
    sums, kw = calls["sum"]
    lo, hi = np.asarray(BOUNDS[0]), np.asarray(BOUNDS[1])
    z = (np.clip(X, lo, hi) - (lo + hi) / 2) / ((hi - lo) / 2)
    np.testing.assert_allclose(sums, np.nansum(z, axis=0))
    assert kw["sensitivity"] == 2.0 and kw["epsilon"] == 1.0


def test_mean_noise_scale_by_a_statistical_test():
    """Every observed value at the upper bound: S = C, so S~ - C~ = Lap(b) - DLap(b)."""
    n, eps = 200, 1.0
    X = np.full((n, 1), 10.0)
    X[:50] = np.nan
    b = 2 * 1 / eps  # scale d / (eps / 2) of both the sum and the count noise, d = 1
    sums, counts = [], []
    lap, geo = imputer_module.add_laplace, imputer_module.add_geometric
    for seed in range(300):
        seen = {}

        def rec_lap(value, seen=seen, **kw):
            seen["s"] = lap(value, **kw)
            return seen["s"]

        def rec_geo(value, seen=seen, **kw):
            seen["c"] = geo(value, **kw)
            return seen["c"]

        imputer_module.add_laplace, imputer_module.add_geometric = rec_lap, rec_geo
        try:
            DPSimpleImputer(epsilon=eps, bounds=(0.0, 10.0), random_state=seed).fit(X)
        finally:
            imputer_module.add_laplace, imputer_module.add_geometric = lap, geo
        sums.append(float(np.ravel(seen["s"])[0]) - 150)
        counts.append(float(np.ravel(seen["c"])[0]) - 150)
    assert stats.kstest(sums, stats.laplace(scale=b).cdf).pvalue > 1e-3
    assert np.all(np.equal(np.mod(counts, 1), 0))  # integer noise
    # discrete Laplace of scale b: variance 2 r / (1 - r)^2, r = exp(-1 / b)
    r = math.exp(-1 / b)
    assert np.var(counts) == pytest.approx(2 * r / (1 - r) ** 2, rel=0.3)


def test_median_is_private_quantile_per_column(monkeypatch):
    seen = []
    original = imputer_module.private_quantile

    def rec(x, q, **kw):
        seen.append((np.asarray(x).size, q, kw["epsilon"], kw["lower"], kw["upper"]))
        return original(x, q, **kw)

    monkeypatch.setattr(imputer_module, "private_quantile", rec)
    X = _data()
    imp = DPSimpleImputer(epsilon=1.0, strategy="median", bounds=BOUNDS, random_state=0).fit(X)
    obs = (~np.isnan(X)).sum(0)
    assert seen == [(obs[0], 0.5, 0.5, 60.0, 220.0), (obs[1], 0.5, 0.5, 0.0, 10.0)]
    assert np.all(np.abs(imp.statistics_ - np.nanmedian(X, axis=0)) < [2.0, 0.5])
    assert imp.privacy_breakdown_ == {"median": 1.0}


def test_constant_is_free_and_works_on_strings():
    df = pd.DataFrame({"smoker": ["never", None, "current", np.nan]})
    imp = DPSimpleImputer(strategy="constant", fill_value="missing").set_output(transform="pandas")
    out = imp.fit_transform(df)
    assert out["smoker"].tolist() == ["never", "missing", "current", "missing"]
    assert imp.epsilon_spent_ == 0.0 and imp.privacy_guarantee_ == "exact"
    assert imp.privacy_breakdown_ == {}
    enc = make_pipeline(
        DPSimpleImputer(strategy="constant", fill_value="missing"),
        PublicOneHotEncoder(categories=[["never", "current", "missing"]]),
    )
    np.testing.assert_array_equal(enc.fit_transform(df).sum(0), [1, 1, 2])
    num = DPSimpleImputer(strategy="constant").fit_transform([[1.0], [np.nan]])
    np.testing.assert_array_equal(num, [[1.0], [0.0]])
    with pytest.raises(ValueError, match="fill_value"):
        DPSimpleImputer(strategy="constant", fill_value="x").fit([[1.0], [np.nan]])


def test_indicator_for_every_column_names_and_inverse():
    df = pd.DataFrame({"sbp": [120.0, np.nan, 140.0], "age": [50.0, 60.0, 70.0]})
    imp = DPSimpleImputer(
        epsilon=1.0,
        bounds={"sbp": (60, 220), "age": (18, 100)},
        add_indicator=True,
        random_state=0,
    ).set_output(transform="pandas")
    out = imp.fit_transform(df)
    assert list(out.columns) == ["sbp", "age", "missingindicator_sbp", "missingindicator_age"]
    np.testing.assert_array_equal(out["missingindicator_sbp"], [0, 1, 0])
    np.testing.assert_array_equal(out["missingindicator_age"], [0, 0, 0])  # all columns
    back = imp.inverse_transform(out.to_numpy())
    np.testing.assert_array_equal(np.isnan(back), np.isnan(df.to_numpy()))
    np.testing.assert_array_equal(back[~np.isnan(back)], df.to_numpy()[~np.isnan(back)])
    with pytest.raises(ValueError, match="add_indicator"):
        DPSimpleImputer(strategy="constant").fit(df).inverse_transform(df.to_numpy())


def test_empty_column_is_not_dropped():
    X = np.column_stack([np.full(100, np.nan), np.linspace(0, 1, 100)])
    imp = DPSimpleImputer(epsilon=1.0, bounds=(0.0, 1.0), random_state=0).fit(X)
    assert imp.transform(X).shape == (100, 2)
    assert 0.0 <= imp.statistics_[0] <= 1.0
    med = DPSimpleImputer(epsilon=1.0, strategy="median", bounds=(0.0, 1.0), random_state=0)
    assert 0.0 <= med.fit(X).statistics_[0] <= 1.0


def test_other_missing_marker():
    X = np.array([[1.0, -1.0], [3.0, 2.0], [-1.0, 4.0]])
    imp = DPSimpleImputer(epsilon=math.inf, bounds=(0.0, 10.0), missing_values=-1.0).fit(X)
    np.testing.assert_allclose(imp.statistics_, [2.0, 3.0])
    np.testing.assert_allclose(imp.transform(X), [[1, 3], [3, 2], [2, 4]])


def test_clip_in_the_statistic_and_exact_at_infinite_epsilon():
    X = np.array([[np.nan], [0.0], [5.0], [1000.0]])
    imp = DPSimpleImputer(epsilon=math.inf, bounds=(0.0, 10.0)).fit(X)
    assert imp.statistics_[0] == pytest.approx(5.0)  # mean of 0, 5, 10
    assert imp.privacy_guarantee_ == "none"
    np.testing.assert_array_equal(imp.transform(X)[1:], X[1:])  # observed values untouched
    med = DPSimpleImputer(epsilon=math.inf, strategy="median", bounds=(0.0, 10.0)).fit(X)
    assert med.statistics_[0] == 5.0


def test_bounds_are_required_and_data_bounds_leak():
    with pytest.raises(ValueError, match="needs declared bounds"):
        DPSimpleImputer().fit(_data(20))
    with pytest.warns(PrivacyLeakWarning):
        imp = DPSimpleImputer(bounds="data", random_state=0).fit(_data(20))
    assert imp.epsilon_spent_ == math.inf and imp.nonprivate_options_ == ["bounds"]


def test_reproducible_under_an_int_seed_and_independent_across_data():
    X = _data(300)
    a = DPSimpleImputer(epsilon=1.0, bounds=BOUNDS, random_state=3).fit(X).statistics_
    b = DPSimpleImputer(epsilon=1.0, bounds=BOUNDS, random_state=3).fit(X).statistics_
    np.testing.assert_array_equal(a, b)
    p = DPSimpleImputer(epsilon=1.0, bounds=BOUNDS, random_state=3).fit(X[::-1]).statistics_
    np.testing.assert_allclose(a, p, rtol=1e-12)
    c = DPSimpleImputer(epsilon=1.0, bounds=BOUNDS, random_state=3).fit(X[1:]).statistics_
    assert not np.allclose(a, c, rtol=0, atol=1e-9)
    fresh = [DPSimpleImputer(epsilon=0.1, bounds=BOUNDS).fit(X).statistics_[0] for _ in range(3)]
    assert len(set(fresh)) == 3


def test_secure_mode(monkeypatch):
    flags = []
    lap, geo = imputer_module.add_laplace, imputer_module.add_geometric
    monkeypatch.setattr(
        imputer_module,
        "add_laplace",
        lambda v, **kw: flags.append(kw["secure_mode"]) or lap(v, **kw),
    )
    monkeypatch.setattr(
        imputer_module,
        "add_geometric",
        lambda v, **kw: flags.append(kw["secure_mode"]) or geo(v, **kw),
    )
    imp = DPSimpleImputer(epsilon=1.0, bounds=BOUNDS, secure_mode=True).fit(_data())
    assert flags == [True, True]
    assert np.all(np.abs(imp.statistics_ - [120, 5]) < [1.5, 0.3])


def test_string_error_carries_no_value():
    X = np.array([[1.0], [np.nan], ["SENTINEL_SECRET"]], dtype=object)
    with pytest.raises(ValueError) as info:
        DPSimpleImputer(bounds=(0, 1)).fit(X)
    assert "SENTINEL" not in str(info.value)


@pytest.mark.parametrize(
    "kw",
    [
        {"strategy": "mean"},
        {"strategy": "median"},
        {"strategy": "constant"},
        {"strategy": "mean", "max_rows_per_group": 3},
        {"strategy": "median", "max_rows_per_group": 3},
        {"strategy": "constant", "max_rows_per_group": 2},
        {"strategy": "mean", "epsilon": math.inf},
        {"strategy": "median", "epsilon": math.inf},
        {"strategy": "mean", "epsilon": 0.25, "secure_mode": True},
    ],
)
def test_privacy_facts_come_from_the_plan_alone(kw, monkeypatch):
    """ImputerPlan, built from public inputs (the strategy, the columns, the budget, k),
    is the only source of privacy_breakdown_, epsilon_spent_ and delta_spent_, and the
    mechanisms run with its sensitivities and budgets."""
    from skdp.preprocessing._imputer_plan import ImputerPlan

    X = _data()
    params = {"epsilon": 1.0, "bounds": BOUNDS, "random_state": 0, **kw}
    k = params.get("max_rows_per_group")
    rng = np.random.default_rng(1)
    groups = rng.permutation(np.arange(len(X)) % 1500) if k else None
    calls = []
    for name in ("add_laplace", "add_geometric", "private_quantile"):
        original = getattr(imputer_module, name)

        def rec(*args, _name=name, _original=original, **kwargs):
            calls.append((_name, kwargs.get("sensitivity"), kwargs["epsilon"]))
            return _original(*args, **kwargs)

        monkeypatch.setattr(imputer_module, name, rec)
    imp = DPSimpleImputer(**params).fit(X, groups=groups)
    plan = ImputerPlan.build(
        strategy=params["strategy"],
        n_features=X.shape[1],
        epsilon=params["epsilon"],
        max_rows_per_group=k,
    )
    assert plan.breakdown() == imp.privacy_breakdown_
    assert (plan.epsilon, plan.delta_spent) == (imp.epsilon_spent_, imp.delta_spent_)
    assert plan.max_rows_per_group == imp.max_rows_per_group_
    spent = sum(plan.breakdown().values())
    finite = math.isfinite(params["epsilon"])
    d, unit = X.shape[1], k or 1
    if plan.strategy == "constant":
        assert spent == imp.epsilon_spent_ == 0.0 and calls == []
    elif plan.strategy == "mean":
        assert calls == [
            ("add_laplace", plan.sensitivity_sum, plan.eps_sum),
            ("add_geometric", plan.sensitivity_count, plan.eps_count),
        ]
        assert plan.sensitivity_sum == plan.sensitivity_count == d * unit
        if finite:  # the documented 2 d / epsilon, k times with groups
            scale = 2 * d * unit / params["epsilon"]
            assert plan.noise_scale() == {"sum": scale, "count": scale}
    else:
        per_column = [("private_quantile", None, plan.eps_column)] * d
        assert calls == (per_column if finite else [])
        assert plan.eps_column == params["epsilon"] / (d * unit)
    if plan.releases:
        assert imp.epsilon_spent_ == params["epsilon"]
        assert spent == pytest.approx(params["epsilon"], rel=1e-12)
