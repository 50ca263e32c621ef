"""Noise-aware confidence intervals of DPLinearRegression (conf_int, summary)."""

import math
import pickle

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.exceptions import NotFittedError

from skdp.linear_model import DPLinearRegression
from skdp.linear_model import _inference_linear as L
from skdp.linear_model._functional_release import (
    _adaptive_ridge,
    _ridge_factor,
    _trimmed_minimiser,
)


def _data(n=3000, seed=0, beta=(0.5, -0.3), intercept=0.1, noise=1.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, len(beta)))
    y = X @ np.asarray(beta) + intercept + noise * rng.standard_normal(n)
    return X, y


def _fit(X, y, **kw):
    params = {"epsilon": 1.0, "bounds_X": (-4, 4), "bounds_y": (-6, 6), "random_state": 0}
    return DPLinearRegression(**{**params, **kw}).fit(X, y)


def test_shape_order_and_labels():
    X, y = _data()
    frame = pd.DataFrame(X, columns=["age", "bmi"])
    reg = _fit(frame, y)
    ci = reg.conf_int()
    assert ci.shape == (3, 2)
    assert np.all(ci[:, 0] < ci[:, 1])
    table = reg.summary()
    assert list(table.index) == ["age", "bmi", "intercept"]
    assert list(table.columns) == ["coef", "std err", "[0.025", "0.975]", "P>|z|"]
    np.testing.assert_array_equal(table["coef"].to_numpy(), np.append(reg.coef_, reg.intercept_))
    np.testing.assert_allclose(table[["[0.025", "0.975]"]].to_numpy(), ci)
    assert list(_fit(X, y).summary().index) == ["x0", "x1", "intercept"]
    # each interval contains its coefficient's truth on this easy problem
    truth = np.array([0.5, -0.3, 0.1])
    assert np.all((ci[:, 0] <= truth) & (truth <= ci[:, 1]))


def test_post_processing_only():
    X, y = _data()
    reg = _fit(X, y)
    spent = (reg.epsilon_spent_, reg.delta_spent_, dict(reg.privacy_breakdown_))
    ci = reg.conf_int()
    assert (reg.epsilon_spent_, reg.delta_spent_, reg.privacy_breakdown_) == spent
    del X, y  # the data are gone: a pickled model gives the same interval
    clone = pickle.loads(pickle.dumps(reg))
    np.testing.assert_array_equal(clone.conf_int(), ci)
    pd.testing.assert_frame_equal(clone.summary(), reg.summary())
    # another bootstrap seed moves the interval a little, not much
    other = reg.conf_int(random_state=1)
    width = ci[:, 1] - ci[:, 0]
    assert np.all(np.abs(other - ci) < 0.2 * width[:, None])


def test_released_statistics_are_the_noisy_release():
    X, y = _data()
    reg = _fit(X, y)
    rel = reg.released_statistics_
    assert rel["target_sum_sq"] is None  # no un-noised statistic at a finite epsilon
    assert rel["gram"].shape == (3, 3) and rel["target"].shape == (3,)
    assert rel["gram"][2, 2] == X.shape[0]  # the public corner n
    exact = (np.clip(X, -4, 4) / 4).T @ (np.clip(X, -4, 4) / 4)
    assert not np.allclose(rel["gram"][:2, :2], exact)


def _numpy_ols_interval(X, y, alpha):
    A = np.column_stack([X, np.ones(len(y))])
    beta, *_ = np.linalg.lstsq(A, y, rcond=None)
    df = len(y) - A.shape[1]
    sigma2 = np.sum((y - A @ beta) ** 2) / df
    se = np.sqrt(np.diag(sigma2 * np.linalg.inv(A.T @ A)))
    q = stats.t.ppf(1 - alpha / 2, df)
    return np.column_stack([beta - q * se, beta + q * se])


@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_epsilon_inf_is_ordinary_least_squares(alpha):
    X, y = _data(n=500, seed=3)
    reg = _fit(X, y, epsilon=math.inf)
    np.testing.assert_allclose(reg.conf_int(alpha), _numpy_ols_interval(X, y, alpha), rtol=1e-7)
    # without an intercept: one row per feature
    reg0 = _fit(X, y - 0.1, epsilon=math.inf, fit_intercept=False)
    assert reg0.conf_int().shape == (2, 2)
    assert list(reg0.summary().index) == ["x0", "x1"]


@pytest.mark.parametrize("alpha", [0, 1, -0.1, 1.5, float("nan")])
def test_bad_alpha_is_refused(alpha):
    reg = _fit(*_data(n=500))
    with pytest.raises(ValueError, match="alpha"):
        reg.conf_int(alpha)
    with pytest.raises(ValueError, match="alpha"):
        reg.summary(alpha)


@pytest.mark.parametrize("alpha", ["0.05", None, True])
def test_alpha_of_the_wrong_type(alpha):
    reg = _fit(*_data(n=500))
    with pytest.raises(TypeError, match="alpha"):
        reg.conf_int(alpha)


def test_bad_n_bootstrap():
    reg = _fit(*_data(n=500))
    with pytest.raises(ValueError, match="n_bootstrap"):
        reg.conf_int(n_bootstrap=10)


def test_unfitted():
    with pytest.raises(NotFittedError):
        DPLinearRegression().conf_int()
    with pytest.raises(NotFittedError):
        DPLinearRegression().summary()


def test_no_intercept_at_finite_epsilon_is_refused():
    X, y = _data(n=500)
    reg = _fit(X, y, fit_intercept=False)
    with pytest.raises(ValueError, match="fit_intercept"):
        reg.conf_int()


def test_mean_only_release_gives_the_whole_line():
    X, y = _data(n=40)
    reg = _fit(X, y, epsilon=0.5)  # n epsilon <= 50: the private mean only
    assert reg.released_statistics_["gram"] is None
    ci = reg.conf_int()
    assert np.all(np.isneginf(ci[:, 0])) and np.all(np.isposinf(ci[:, 1]))
    assert np.all(reg.summary()["P>|z|"] == 1.0)


@pytest.mark.parametrize("mechanism", ["functional", "gaussian"])
def test_batched_ridge_and_solve_match_the_fit(mechanism):
    X, y = _data(n=2000, beta=(0.5, -0.3, 0.2))
    reg = _fit(X, y, mechanism=mechanism)
    spec = L._Spec.of(reg)
    rng = np.random.default_rng(0)
    G = reg.released_statistics_["gram"]
    Ms = np.stack([G + np.diag(rng.uniform(-3, 3, 4)) for _ in range(5)])
    Ms[:, 3, 3] = G[3, 3]
    lam = rng.uniform(0, 50, 5)
    var = rng.uniform(0.01, 0.3, 5)
    ridge = L._ridge(spec, Ms, lam, var)
    for b in range(5):
        f = _ridge_factor(Ms[b], spec.n, spec.p, spec.weight, var[b])
        assert ridge[b] == pytest.approx(_adaptive_ridge(Ms[b], lam[b], spec.entry_sd, f))
    A = Ms + 10 * np.eye(4)
    c = rng.normal(size=(5, 4)) * 100
    w = L._solve(A, c)
    for b in range(5):
        np.testing.assert_allclose(w[b], _trimmed_minimiser(A[b], -2 * c[b])[0], rtol=1e-10)


def test_p_value_of_a_null_coefficient_is_not_small():
    X, y = _data(n=5000, beta=(0.5, 0.0), seed=4)
    table = _fit(X, y, epsilon=3.0).summary()
    assert table.loc["x0", "P>|z|"] < 1e-6
    assert table.loc["x1", "P>|z|"] > 0.01


def _coverage(n, epsilon, reps, ylim=6.0):
    truth = np.array([0.5, 0.0, 0.1])
    hits = []
    for seed in range(reps):
        X, y = _data(n=n, seed=100 + seed, beta=(0.5, 0.0))
        reg = _fit(X, y, epsilon=epsilon, bounds_y=(-ylim, ylim), random_state=seed)
        ci = reg.conf_int(n_bootstrap=200)
        hits.append((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
    return np.mean(hits)


def test_coverage_sanity():
    assert _coverage(3000, 3.0, reps=6) >= 0.8


@pytest.mark.slow
@pytest.mark.parametrize("ylim", [6.0, 2.0])  # 2.0: the target's bounds clip about 10 %
def test_coverage(ylim):
    assert _coverage(3000, 1.0, reps=60, ylim=ylim) >= 0.88


def test_dask_input_gives_the_same_ols_interval():
    da = pytest.importorskip("dask.array")
    X, y = _data(n=1500, seed=5)
    reg = _fit(X, y, epsilon=math.inf)
    lazy = _fit(da.from_array(X, chunks=400), da.from_array(y, chunks=400), epsilon=math.inf)
    np.testing.assert_allclose(lazy.conf_int(), reg.conf_int(), rtol=1e-9)


def test_replicates_from_the_sufficient_statistics_match_simulated_rows():
    # where the model clips no target, drawing X~^T e and ||e||^2 directly is the same
    # distribution as simulating the n rows (and much cheaper)
    X, y = _data(n=2000, beta=(0.5, -0.3, 0.2))
    reg = _fit(X, y)
    spec, design, estimate, variance = L._setup(reg, np.random.default_rng(0))
    assert design.exact
    sigma = L._residual_sd(spec, design.rows, estimate, variance)
    rows = L._Design.of(design.rows, exact=False)
    a = L.replicates(spec, design, [estimate], sigma, 4000, np.random.default_rng(1))[0]
    b = L.replicates(spec, rows, [estimate], sigma, 4000, np.random.default_rng(2))[0]
    sd = b.std(axis=0)
    assert np.all(np.abs(a.mean(axis=0) - b.mean(axis=0)) < 4 * sd / np.sqrt(2000))
    np.testing.assert_allclose(a.std(axis=0), sd, rtol=0.08)


def test_rows_are_simulated_where_the_target_is_clipped():
    X, y = _data(n=2000)
    rng = np.random.default_rng(0)
    assert L._setup(_fit(X, y), rng)[1].exact  # bounds_y (-6, 6): nothing clips
    assert not L._setup(_fit(X, y, bounds_y=(-2, 2)), rng)[1].exact  # about 8 % clipped


def test_default_number_of_replicates():
    X, y = _data(n=1000)
    reg = _fit(X, y)
    np.testing.assert_array_equal(
        reg.conf_int(random_state=3), reg.conf_int(n_bootstrap=L.N_BOOTSTRAP_EXACT, random_state=3)
    )


def test_solve_with_known_eigendecomposition():
    rng = np.random.default_rng(0)
    B = rng.normal(size=(4, 3, 3))
    A = B @ B.transpose(0, 2, 1) + np.eye(3)
    c = rng.normal(size=(4, 3))
    np.testing.assert_allclose(L._solve(None, c, np.linalg.eigh(A)), L._solve(A, c))
