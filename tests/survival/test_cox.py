"""DPCoxPH: validation, sklearn conventions, agreement with non-private fits."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from skdp.accounting import zcdp_rho
from skdp.survival import DPCoxPH, make_survival_target
from skdp.survival._cox_fit import pe_data
from skdp.survival._cox_plan import CoxPlan
from skdp.survival._cox_score import concordance_index
from skdp.survival._grid import time_grid_edges

BETA = np.array([1.0, -0.6, 0.0])


def _data(n=3000, seed=0, horizon=10.0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    t = rng.exponential(1.0 / (0.15 * np.exp(X @ BETA)))
    c = rng.uniform(0, 15, n)
    time = np.minimum(t, c)
    return X, make_survival_target(t <= c, time)


def _cox(**kw):
    params = {"bounds_X": (-1, 1), "max_time": 10.0, "random_state": 0}
    return DPCoxPH(**{**params, **kw})


# ---------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "params, match",
    [
        ({"bounds_X": None}, "bounds_X"),
        ({"max_time": None}, "max_time"),
        ({"delta": 0.0}, "delta"),
        ({"n_intervals": 0}, "n_intervals"),
        ({"max_grad_norm": -1.0}, "max_grad_norm"),
        ({"time_grid": [5.0, 3.0]}, "time_grid"),
        ({"bounds_X": (1, -1)}, "bounds_X"),
        ({"epsilon": 0.0}, "epsilon"),
    ],
)
def test_bad_parameters_are_refused_naming_them(params, match):
    X, y = _data(200)
    with pytest.raises(ValueError, match=match):
        _cox(**params).fit(X, y)


def test_bad_targets_and_inputs_are_refused_naming_them():
    X, y = _data(200)
    with pytest.raises(TypeError, match="y must be a structured array"):
        _cox().fit(X, np.ones(200))
    with pytest.raises(ValueError, match="rows"):
        _cox().fit(X, y[:100])
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        _cox().fit(Xn, y)
    bad = y.copy()
    bad["time"][0] = -1.0
    with pytest.raises(ValueError, match="negative"):
        _cox().fit(X, bad)
    with pytest.raises(ValueError, match="max_rows_per_group"):
        _cox().fit(X, y, groups=np.arange(200) // 2)


def test_predict_survival_function_refuses_times_past_the_horizon():
    X, y = _data(500)
    cox = _cox().fit(X, y)
    with pytest.raises(ValueError, match="times"):
        cox.predict_survival_function(X[:3], [1.0, 11.0])
    with pytest.raises(ValueError, match="features"):
        cox.predict(X[:, :2])


# ---------------------------------------------------------------- conventions
def test_fit_predict_shapes_and_survival_curves():
    X, y = _data(2000)
    cox = _cox().fit(X, y)
    assert cox.coef_.shape == (3,)
    assert cox.baseline_hazard_.shape == (10,)
    assert np.all(cox.baseline_hazard_ > 0)
    S = cox.predict_survival_function(X[:5], np.linspace(0, 10, 21))
    assert S.shape == (5, 21)
    assert np.allclose(S[:, 0], 1.0)
    assert np.all(np.diff(S, axis=1) <= 1e-12) and np.all((S > 0) & (S <= 1))
    risk = cox.predict(X[:5])
    # riskier patients have lower survival at every time
    order = np.argsort(risk)
    assert np.all(np.diff(S[order, -1]) <= 1e-12)
    assert cox.privacy_unit_ == "row" and cox.max_rows_per_group_ is None
    assert cox.privacy_guarantee_ == "exact"
    assert cox.epsilon_spent_ == 1.0 and cox.delta_spent_ == 1e-5


def test_same_seed_same_fit_and_different_seed_different_noise():
    X, y = _data(800)
    a, b = _cox().fit(X, y), _cox().fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    c = _cox(random_state=1).fit(X, y)
    assert not np.array_equal(a.coef_, c.coef_)


def test_clone_and_pickle_keep_no_generator():
    X, y = _data(500)
    cox = _cox(random_state=np.random.default_rng(3)).fit(X, y)
    for name, value in vars(cox).items():  # the parameter is kept as given ...
        if name != "random_state":
            assert not isinstance(value, np.random.Generator | np.random.SeedSequence)
    back = pickle.loads(pickle.dumps(cox))
    assert back.random_state is None  # ... and scrubbed from pickles
    np.testing.assert_array_equal(back.coef_, cox.coef_)
    assert clone(cox).get_params()["max_time"] == 10.0


def test_dataframe_input_keeps_feature_names_and_dict_bounds():
    X, y = _data(800)
    df = pd.DataFrame(X, columns=["age", "sex", "marker"])
    bounds = {"age": (-1, 1), "sex": (-1, 1), "marker": (-1, 1)}
    cox = _cox(bounds_X=bounds, epsilon=math.inf).fit(df, y)
    assert list(cox.feature_names_in_) == ["age", "sex", "marker"]
    ref = _cox(epsilon=math.inf).fit(X, y)
    np.testing.assert_allclose(cox.coef_, ref.coef_)


def test_plan_alone_gives_the_breakdown_and_it_sums_to_the_total():
    edges = time_grid_edges(10.0, n_intervals=10)
    plan = CoxPlan.build(
        epsilon=1.0,
        delta=1e-5,
        edges=edges,
        n_features=3,
        n_iter=8,
        max_grad_norm=2.0,
        hessian_clip=3.5,
        baseline_fraction=0.1,
        hessian_fraction=0.3,
    )
    parts = plan.breakdown()
    assert set(parts) == {"centre", "baseline", "hessian", "gradient"}
    assert math.isclose(math.fsum(parts.values()), 1.0, rel_tol=1e-12)
    assert math.isclose(math.fsum(plan.rho_breakdown().values()), zcdp_rho(1.0, 1e-5))
    X, y = _data(500)
    cox = _cox().fit(X, y)
    assert cox.privacy_breakdown_ == parts
    assert cox.rho_breakdown_ == plan.rho_breakdown()
    assert cox.noise_scale_ == plan.noise_scale()


def test_infinite_epsilon_is_the_exact_non_private_fit():
    X, y = _data(1500)
    cox = _cox(epsilon=math.inf).fit(X, y)
    assert cox.privacy_guarantee_ == "none" and math.isinf(cox.epsilon_spent_)
    assert cox.privacy_breakdown_ == {"nonprivate": math.inf}
    beta = _reference_newton(X, y, cox.time_grid_)
    np.testing.assert_allclose(cox.coef_, beta, rtol=1e-5, atol=1e-6)


def _reference_newton(X, y, edges, iters=60):
    """An independent plain Newton fit of the piecewise-exponential model (the
    Poisson GLM with log-exposure offsets), on X as given (bounds (-1, 1))."""
    data = pe_data(X, y["event"], y["time"], edges)
    D, T = data.events, data.exposure
    J, d = D.shape[1], X.shape[1]
    theta = np.zeros(J + d)
    theta[:J] = np.log(D.sum(0) / T.sum(0))
    for _ in range(iters):
        eta = theta[None, :J] + (X @ theta[J:])[:, None]
        mu = T * np.exp(eta)
        # the Poisson GLM on the (row, interval) cells
        design_a = np.eye(J)
        g = np.r_[(D - mu).sum(0), X.T @ (D - mu).sum(1)]
        H = np.zeros((J + d, J + d))
        H[:J, :J] = design_a * mu.sum(0)
        H[:J, J:] = mu.T @ X
        H[J:, :J] = H[:J, J:].T
        H[J:, J:] = (X * mu.sum(1)[:, None]).T @ X
        theta = theta + np.linalg.solve(H, g)
    return theta[J:]


def test_large_epsilon_agrees_with_the_non_private_fit():
    X, y = _data(3000)
    exact = _cox(epsilon=math.inf).fit(X, y)
    big = _cox(epsilon=1e6, n_iter=20).fit(X, y)
    cos = big.coef_ @ exact.coef_ / np.linalg.norm(big.coef_) / np.linalg.norm(exact.coef_)
    assert cos > 0.99
    assert abs(big.score(X, y) - exact.score(X, y)) < 0.005


def test_large_epsilon_converges_with_a_strong_effect_and_a_rare_binary_feature():
    """The damped steps converge where the Hessian released at beta = 0 underestimates
    the curvature at the optimum (hazard ratio e^3 across the range), and the centring
    keeps a rare binary feature from absorbing the baseline."""
    rng = np.random.default_rng(5)
    n = 4000
    X = np.column_stack([rng.uniform(-1, 1, n), (rng.random(n) < 0.02).astype(float)])
    t = rng.exponential(1.0 / (0.1 * np.exp(1.5 * X[:, 0])))
    y = make_survival_target(t <= 10, np.minimum(t, 10))
    params = {"bounds_X": ([-1, 0], [1, 1]), "max_time": 10.0, "random_state": 0}
    exact = DPCoxPH(epsilon=math.inf, **params).fit(X, y)
    big = DPCoxPH(epsilon=1e6, n_iter=20, **params).fit(X, y)
    assert abs(big.coef_[0] - exact.coef_[0]) < 0.1
    assert abs(big.coef_[1] - exact.coef_[1]) < 0.3
    one = DPCoxPH(epsilon=1.0, **params).fit(X, y)
    assert abs(one.coef_[1]) < 1.5  # no drift along the baseline


def test_epsilon_one_keeps_the_signal():
    X, y = _data(3000)
    Xt, yt = _data(3000, seed=1)
    exact = _cox(epsilon=math.inf).fit(X, y)
    dp = _cox(epsilon=1.0).fit(X, y)
    assert dp.score(Xt, yt) > exact.score(Xt, yt) - 0.02
    assert np.sign(dp.coef_[0]) == 1 and np.sign(dp.coef_[1]) == -1


def test_groups_give_a_patient_level_fit():
    X, y = _data(1200)
    groups = np.arange(1200) // 3
    cox = _cox(max_rows_per_group=2).fit(X, y, groups=groups)
    assert cox.privacy_unit_ == "group" and cox.max_rows_per_group_ == 2
    assert np.all(np.isfinite(cox.coef_))
    assert cox.epsilon_spent_ == 1.0


# ---------------------------------------------------------------- concordance
def _brute_concordance(event, time, risk):
    num = den = 0.0
    for i in np.flatnonzero(event):
        comp = (time > time[i]) | ((time == time[i]) & ~event)
        den += comp.sum()
        num += (risk[comp] < risk[i]).sum() + 0.5 * (risk[comp] == risk[i]).sum()
    return num / den


def test_concordance_matches_brute_force_with_ties():
    rng = np.random.default_rng(0)
    for _ in range(5):
        n = 150
        time = np.round(rng.exponential(size=n), 1)
        event = rng.random(n) < 0.6
        risk = np.round(rng.normal(size=n), 1)
        got = concordance_index(event, time, risk)
        assert math.isclose(got, _brute_concordance(event, time, risk), rel_tol=1e-12)


def test_concordance_matches_scikit_survival():
    metrics = pytest.importorskip("sksurv.metrics")
    rng = np.random.default_rng(1)
    time = np.round(rng.exponential(size=400), 2)
    event = rng.random(400) < 0.5
    risk = rng.normal(size=400)
    want = metrics.concordance_index_censored(event, time, risk)[0]
    assert math.isclose(concordance_index(event, time, risk), want, rel_tol=1e-12)


def test_concordance_without_comparable_pairs_is_refused():
    with pytest.raises(ValueError, match="comparable"):
        concordance_index(np.zeros(3, bool), np.arange(3.0), np.arange(3.0))


def test_fine_grid_non_private_fit_is_close_to_lifelines_cox():
    lifelines = pytest.importorskip("lifelines")
    X, y = _data(2000)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["T"], df["E"] = y["time"], y["event"]
    ref = lifelines.CoxPHFitter().fit(df, "T", "E").params_.to_numpy()
    cox = _cox(epsilon=math.inf, max_time=15.0, n_intervals=60).fit(X, y)
    np.testing.assert_allclose(cox.coef_, ref, atol=0.03)


def test_grid_search_refuses_the_non_private_concordance():
    from skdp.model_selection import DPGridSearchCV

    X, y = _data(300)
    search = DPGridSearchCV(_cox(), {"n_iter": [4, 8]}, scoring=None)
    with pytest.raises(TypeError):
        search.fit(X, y)
