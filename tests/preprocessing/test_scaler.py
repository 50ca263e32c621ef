"""DPStandardScaler: private mean and variance within declared bounds."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline

from skdp.exceptions import PrivacyLeakWarning
from skdp.preprocessing import (
    DPSimpleImputer,
    DPStandardScaler,
    PublicOneHotEncoder,
    standard_scaler_sensitivities,
)
from skdp.preprocessing import _scaler as scaler_module


def _data(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.normal(50, 10, n), rng.normal(120, 15, n)])


BOUNDS = ([0.0, 60.0], [100.0, 200.0])


def test_sensitivities_brute_force():
    """L1 change of (S, W) over all add/remove pairs with a corner/edge row, d = 3."""
    d = 3
    rng = np.random.default_rng(0)
    base = rng.uniform(-1, 1, size=(5, d))
    worst_s = worst_w = 0.0
    grid = np.array(np.meshgrid(*[[-1.0, 0.0, 0.3, 1.0]] * d)).reshape(d, -1).T
    for row in grid:  # adding `row` changes S by row and W by row^2 - 1/2
        Z = np.vstack([base, row])
        ds = np.abs(Z.sum(0) - base.sum(0)).sum()
        dw = np.abs((Z**2 - 0.5).sum(0) - (base**2 - 0.5).sum(0)).sum()
        worst_s, worst_w = max(worst_s, ds), max(worst_w, dw)
    assert (worst_s, worst_w) == pytest.approx(standard_scaler_sensitivities(d))
    assert standard_scaler_sensitivities(d, neighbor="replace") == (2 * d, d)


def test_accuracy_and_facts():
    X = _data()
    s = DPStandardScaler(epsilon=1.0, bounds=BOUNDS, random_state=0).fit(X)
    np.testing.assert_allclose(s.mean_, [50, 120], atol=1.0)
    np.testing.assert_allclose(s.scale_, [10, 15], rtol=0.15)
    np.testing.assert_allclose(s.var_, s.scale_**2)
    assert s.epsilon_spent_ == 1.0 and s.delta_spent_ == 0.0
    assert s.privacy_guarantee_ == "exact"
    assert s.n_public_ == len(X)
    Z = s.transform(X)
    assert abs(Z.mean()) < 0.2 and abs(Z.std() - 1) < 0.2


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"bounds": BOUNDS}, {"bounds": 0.0, "mean": 1.0, "variance": 1.0}),
        ({"bounds": BOUNDS, "mean_fraction": 0.25}, {"bounds": 0.0, "mean": 0.5, "variance": 1.5}),
        ({"bounds": BOUNDS, "with_std": False}, {"bounds": 0.0, "mean": 2.0, "variance": 0.0}),
        ({"bounds": None}, {"bounds": 0.2, "mean": 0.9, "variance": 0.9}),
        ({"bounds": BOUNDS, "with_mean": False}, {"bounds": 0.0, "mean": 1.0, "variance": 1.0}),
    ],
)
def test_budget_split_sums_to_epsilon_spent(params, expected):
    s = DPStandardScaler(epsilon=2.0, random_state=0, **params).fit(_data())
    assert s.privacy_breakdown_ == pytest.approx(expected)
    assert sum(s.privacy_breakdown_.values()) == pytest.approx(s.epsilon_spent_)
    assert s.epsilon_spent_ == 2.0


def test_nothing_released_without_mean_and_std():
    X = _data(50)
    s = DPStandardScaler(with_mean=False, with_std=False, random_state=0).fit(X)
    assert s.epsilon_spent_ == 0.0 and s.mean_ is None and s.scale_ is None
    np.testing.assert_array_equal(s.transform(X), X)


def test_noise_scales_by_a_statistical_test():
    """Across fresh fits, the noise of S and W is Laplace with the documented scales."""
    n, eps = 400, 1.0
    X = _data(n, seed=1)
    lo, hi = np.asarray(BOUNDS[0]), np.asarray(BOUNDS[1])
    c, h = (lo + hi) / 2, (hi - lo) / 2
    Z = (np.clip(X, lo, hi) - c) / h
    m1_true, m2_true = Z.mean(0), (Z**2).mean(0)
    s_err, w_err = [], []
    for seed in range(400):
        f = DPStandardScaler(epsilon=eps, bounds=BOUNDS, random_state=seed).fit(X)
        m1 = (f.mean_ - c) / h
        m2 = f.var_ / h**2 + m1**2
        s_err.append((m1 - m1_true) * n)
        w_err.append((m2 - m2_true) * n)
    b_s, b_w = f.noise_scale_["mean"], f.noise_scale_["variance"]
    assert b_s == pytest.approx(2 / 0.5) and b_w == pytest.approx(1 / 0.5)
    s_err, w_err = np.ravel(s_err), np.ravel(w_err)
    assert stats.kstest(s_err, stats.laplace(scale=b_s).cdf).pvalue > 1e-3
    assert stats.kstest(w_err, stats.laplace(scale=b_w).cdf).pvalue > 1e-3
    # a scale off by half is rejected by the same test
    assert stats.kstest(s_err, stats.laplace(scale=1.5 * b_s).cdf).pvalue < 1e-3
    assert stats.kstest(w_err, stats.laplace(scale=1.5 * b_w).cdf).pvalue < 1e-3


def test_clip_and_exact_statistics_at_infinite_epsilon():
    X = np.array([[-50.0], [0.0], [10.0], [500.0]])
    s = DPStandardScaler(epsilon=math.inf, bounds=(0.0, 20.0)).fit(X)
    clipped = np.clip(X, 0, 20)
    np.testing.assert_allclose(s.mean_, clipped.mean(0))
    np.testing.assert_allclose(s.var_, clipped.var(0))
    assert s.privacy_guarantee_ == "none" and s.epsilon_spent_ == math.inf
    np.testing.assert_allclose(s.transform(X), (clipped - clipped.mean()) / clipped.std())
    with pytest.raises(ValueError, match="column\\(s\\) 0") as info:
        DPStandardScaler(epsilon=1.0, bounds=(0.0, 20.0), clip=False).fit(X)
    assert "500" not in str(info.value)


def test_variance_floored_positive_and_capped():
    X = np.full((30, 1), 5.0)  # constant column: the noisy variance is often <= 0
    for seed in range(20):
        s = DPStandardScaler(epsilon=0.1, bounds=(0.0, 10.0), random_state=seed).fit(X)
        assert 1e-3 * 10.0 - 1e-12 <= s.scale_[0] <= 5.0 + 1e-12
        assert np.all(np.isfinite(s.transform(X)))
        assert 0.0 <= s.mean_[0] <= 10.0


def test_inverse_transform_round_trip():
    X = _data(200)
    s = DPStandardScaler(epsilon=1.0, bounds=BOUNDS, random_state=0).fit(X)
    Xc = np.clip(X, BOUNDS[0], BOUNDS[1])
    np.testing.assert_allclose(s.inverse_transform(s.transform(X)), Xc)
    t = DPStandardScaler(epsilon=1.0, bounds=BOUNDS, with_mean=False, random_state=0).fit(X)
    np.testing.assert_allclose(t.inverse_transform(t.transform(X)), Xc)


def test_reproducible_under_an_int_seed_and_independent_across_data():
    X = _data(300)
    a = DPStandardScaler(epsilon=1.0, bounds=BOUNDS, random_state=7).fit(X)
    b = DPStandardScaler(epsilon=1.0, bounds=BOUNDS, random_state=7).fit(X)
    np.testing.assert_array_equal(a.mean_, b.mean_)
    np.testing.assert_array_equal(a.var_, b.var_)
    # a permutation of the rows is the same data set: the same noise (up to summation order)
    p = DPStandardScaler(epsilon=1.0, bounds=BOUNDS, random_state=7).fit(X[::-1])
    np.testing.assert_allclose(a.mean_, p.mean_, rtol=1e-12)
    # a neighbour (one row removed, n_public fixed) under the same seed: other noise
    n1 = DPStandardScaler(epsilon=1.0, bounds=BOUNDS, n_public=300, random_state=7).fit(X[1:])
    n0 = DPStandardScaler(epsilon=1.0, bounds=BOUNDS, n_public=300, random_state=7).fit(X)
    lo, hi = np.asarray(BOUNDS[0]), np.asarray(BOUNDS[1])
    c, h = (lo + hi) / 2, (hi - lo) / 2
    Z = (np.clip(X, lo, hi) - c) / h
    noise0 = (n0.mean_ - c) / h * 300 - Z.sum(0)
    noise1 = (n1.mean_ - c) / h * 300 - Z[1:].sum(0)
    assert not np.allclose(noise0, noise1)
    # no generator or seed material in the fitted model
    assert b"Generator" not in pickle.dumps(a) and b"SeedSequence" not in pickle.dumps(a)


def test_secure_mode_uses_the_grid_mechanism(monkeypatch):
    calls = []
    original = scaler_module.add_laplace

    def recording(value, **kwargs):
        calls.append(kwargs)
        return original(value, **kwargs)

    monkeypatch.setattr(scaler_module, "add_laplace", recording)
    s = DPStandardScaler(epsilon=1.0, bounds=BOUNDS, secure_mode=True).fit(_data())
    assert [c["secure_mode"] for c in calls] == [True, True]
    assert [c["sensitivity"] for c in calls] == [2.0, 1.0]
    assert [c["epsilon"] for c in calls] == [0.5, 0.5]
    np.testing.assert_allclose(s.mean_, [50, 120], atol=1.5)


def test_bounds_dict_and_dataframe_output():
    df = pd.DataFrame(_data(500), columns=["age", "sbp"])
    s = DPStandardScaler(
        epsilon=1.0, bounds={"age": (0, 100), "sbp": (60, 200)}, random_state=0
    ).set_output(transform="pandas")
    out = s.fit_transform(df)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["age", "sbp"]
    assert list(s.get_feature_names_out()) == ["age", "sbp"]
    np.testing.assert_allclose(s.bounds_[0], [0, 60])


def test_data_bounds_is_a_leak_and_nan_is_rejected():
    with pytest.warns(PrivacyLeakWarning):
        s = DPStandardScaler(bounds="data", random_state=0).fit(_data(50))
    assert s.epsilon_spent_ == math.inf and s.nonprivate_options_ == ["bounds"]
    X = _data(50)
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DPStandardScaler(bounds=BOUNDS).fit(X)


def test_in_a_column_transformer_and_pipeline_with_a_dp_estimator():
    from skdp.linear_model import DPLinearRegression

    rng = np.random.default_rng(0)
    n = 3000
    df = pd.DataFrame(
        {
            "age": rng.normal(60, 12, n),
            "sbp": rng.normal(130, 15, n),
            "sex": rng.choice(["F", "M"], n),
        }
    )
    df.loc[rng.random(n) < 0.1, "sbp"] = np.nan
    y = 0.02 * (df["age"] - 60) + 0.3 * (df["sex"] == "M") + rng.normal(0, 0.1, n)
    prep = ColumnTransformer(
        [
            ("age", DPStandardScaler(epsilon=0.5, bounds=(18, 100), random_state=0), ["age"]),
            (
                "sbp",
                DPSimpleImputer(epsilon=0.5, bounds=(80, 220), add_indicator=True, random_state=0),
                ["sbp"],
            ),
            ("sex", PublicOneHotEncoder(categories={"sex": ["F", "M"]}, drop="first"), ["sex"]),
        ]
    ).set_output(transform="pandas")
    Xt = prep.fit_transform(df)
    assert list(Xt.columns) == ["age__age", "sbp__sbp", "sbp__missingindicator_sbp", "sex__sex_M"]
    pipe = Pipeline(
        [
            ("prep", prep),
            (
                "reg",
                DPLinearRegression(
                    epsilon=1.0,
                    bounds_X=([-4, 80, 0, 0], [4, 220, 1, 1]),
                    bounds_y=(-2, 2),
                    random_state=0,
                ),
            ),
        ]
    )
    pipe.fit(df, y)
    steps = pipe.named_steps["prep"].named_transformers_
    assert [steps[k].epsilon_spent_ for k in ("age", "sbp", "sex")] == [0.5, 0.5, 0.0]
    assert pipe.predict(df.iloc[:5]).shape == (5,)


def test_noise_scale_keys_follow_the_breakdown_and_old_keys_warn():
    X = np.random.default_rng(0).uniform(-1, 1, (300, 2))
    f = DPStandardScaler(epsilon=1.0, bounds=(-1, 1), random_state=0).fit(X)
    assert set(f.noise_scale_) == {"mean", "variance"} <= set(f.privacy_breakdown_)
    for old, new in (("sum", "mean"), ("second_moment", "variance")):
        with pytest.warns(FutureWarning, match=rf"noise_scale_\['{old}'\] is deprecated"):
            assert f.noise_scale_[old] == f.noise_scale_[new] > 0
    with pytest.raises(KeyError):
        f.noise_scale_["nothing"]
    g = pickle.loads(pickle.dumps(f))
    with pytest.warns(FutureWarning):
        assert g.noise_scale_["sum"] == f.noise_scale_["mean"]


def _patients(n, seed=0):
    """Patient ids of ``n`` rows: 1 to 5 rows each, shuffled."""
    rng = np.random.default_rng(seed)
    return rng.permutation(np.repeat(np.arange(n), rng.integers(1, 6, n))[:n])


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"bounds": "private"},
        {"bounds": None, "epsilon": 2.0, "bounds_fraction": 0.2},
        {"with_std": False},
        {"with_mean": False, "mean_fraction": 0.3},
        {"with_mean": False, "with_std": False},
        {"n_public": 3000, "epsilon": 0.5},
        {"max_rows_per_group": 3},
        {"max_rows_per_group": 2, "with_std": False},
        {"epsilon": math.inf},
        {"epsilon": math.inf, "bounds": None},
        {"epsilon": math.inf, "with_std": False},
    ],
)
def test_privacy_facts_come_from_the_plan_alone(kw, monkeypatch):
    """ScalerPlan, built from public inputs (the public row count, the columns, the
    budget, the bounds parameter and its fraction, mean_fraction, with_mean/with_std,
    k), is the only source of privacy_breakdown_, epsilon_spent_, delta_spent_ and
    noise_scale_, and the Laplace releases run with its sensitivities and budgets."""
    from skdp.preprocessing._scaler_plan import ScalerPlan

    X = _data()
    params = {"epsilon": 1.0, "bounds": BOUNDS, "random_state": 0, **kw}
    k = params.get("max_rows_per_group")
    groups = _patients(len(X)) if k else None
    calls = []
    original = scaler_module.add_laplace

    def rec(value, **kwargs):
        calls.append((kwargs["sensitivity"], kwargs["epsilon"]))
        return original(value, **kwargs)

    monkeypatch.setattr(scaler_module, "add_laplace", rec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = DPStandardScaler(**params).fit(X, groups=groups)
    n = len(X) if k is None else int(np.minimum(np.bincount(groups), k).sum())
    plan = ScalerPlan.build(
        n_public=params.get("n_public", n),  # public: declared, or the rows kept
        n_features=X.shape[1],
        epsilon=params["epsilon"],
        bounds=params["bounds"],
        bounds_fraction=params.get("bounds_fraction", 0.1),
        mean_fraction=params.get("mean_fraction", 0.5),
        with_mean=params.get("with_mean", True),
        with_std=params.get("with_std", True),
        max_rows_per_group=k,
    )
    assert plan.breakdown() == f.privacy_breakdown_
    assert plan.noise_scale() == dict(f.noise_scale_)
    assert (plan.epsilon, plan.delta_spent) == (f.epsilon_spent_, f.delta_spent_)
    assert (plan.n_public, plan.max_rows_per_group) == (f.n_public_, f.max_rows_per_group_)
    released = [(plan.sensitivity_mean, plan.eps_mean)] if plan.releases else []
    if plan.with_std:
        released.append((plan.sensitivity_variance, plan.eps_variance))
    assert calls == released
    assert plan.sensitivity_mean == 2 * (k or 1) == 2 * plan.sensitivity_variance
    spent = sum(plan.breakdown().values())
    if not plan.releases:
        assert spent == f.epsilon_spent_ == 0.0
    elif math.isfinite(params["epsilon"]):
        assert spent == pytest.approx(params["epsilon"], rel=1e-12)
        assert plan.noise_scale_mean == plan.sensitivity_mean / plan.eps_mean
    else:
        assert spent == f.epsilon_spent_ == math.inf and plan.noise_scale() == {
            "mean": 0.0,
            "variance": 0.0,
        }
    if params["bounds"] in (None, "private") and math.isfinite(params["epsilon"]):
        share = params.get("bounds_fraction", 0.1) * params["epsilon"]
        assert f.privacy_breakdown_["bounds"] == pytest.approx(share)
