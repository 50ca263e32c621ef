"""The DP regression metrics and their scorers (R², MSE, MAE over a declared target
range): exact at epsilon = inf, noise of the stated scale, refusals, and a private grid
search over DPLinearRegression scored by them."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

from skdp.linear_model import DPLinearRegression
from skdp.metrics import (
    dp_mean_absolute_error,
    dp_mean_squared_error,
    dp_r2_score,
    make_dp_scorer,
)
from skdp.model_selection import DPGridSearchCV

BOUNDS = (0.0, 10.0)


def _targets(n=500, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.uniform(*BOUNDS, n)
    return y, np.clip(y + rng.normal(0, 1.0, n), *BOUNDS)


@pytest.mark.parametrize(
    ("dp", "sk"),
    [
        (dp_r2_score, r2_score),
        (dp_mean_squared_error, mean_squared_error),
        (dp_mean_absolute_error, mean_absolute_error),
    ],
)
def test_exact_at_infinite_epsilon_on_clipped_values(dp, sk):
    y, p = _targets()
    assert dp(y, p, bounds_y=BOUNDS, epsilon=math.inf) == pytest.approx(sk(y, p), abs=1e-9)
    # values outside the declared range are clipped, as the sensitivity needs
    p_out = p.copy()
    p_out[:10] = 100.0
    clipped = np.clip(p_out, *BOUNDS)
    assert dp(y, p_out, bounds_y=BOUNDS, epsilon=math.inf) == pytest.approx(
        sk(y, clipped), abs=1e-9
    )


def test_noise_scale_of_the_mean_errors():
    """MSE ~ Laplace(R**2 / (N eps)) around the truth, MAE ~ Laplace(R / (N eps))."""
    y, p = _targets(n=400)
    n, R, eps = 400, BOUNDS[1] - BOUNDS[0], 1.0
    for fn, sk, scale in (
        (dp_mean_squared_error, mean_squared_error, R**2 / (n * eps)),
        (dp_mean_absolute_error, mean_absolute_error, R / (n * eps)),
    ):
        draws = np.array(
            [fn(y, p, bounds_y=BOUNDS, epsilon=eps, random_state=s) for s in range(400)]
        )
        err = draws - sk(y, p)
        assert abs(np.median(err)) < 0.2 * scale
        # the mean absolute deviation of a Laplace(b) is b
        assert np.mean(np.abs(err)) == pytest.approx(scale, rel=0.15)


def test_r2_is_bounded_above_and_finite_when_the_target_is_constant():
    y = np.full(50, 3.0)
    for s in range(20):
        r2 = dp_r2_score(y, y + 0.5, bounds_y=BOUNDS, epsilon=1.0, random_state=s)
        assert math.isfinite(r2) and r2 <= 1.0


@pytest.mark.parametrize(
    "bounds_y", [None, (1.0, 1.0), (2.0, 1.0), (0.0, math.inf), "wide", (0.0, 1e200)]
)
def test_bad_ranges_are_refused(bounds_y):
    y, p = _targets(n=20)
    with pytest.raises((ValueError, TypeError), match="bounds_y"):
        dp_r2_score(y, p, bounds_y=bounds_y, epsilon=1.0)
    with pytest.raises((ValueError, TypeError), match="bounds_y"):
        make_dp_scorer("r2", epsilon=1.0, bounds_y=bounds_y)


def test_non_finite_inputs_are_refused_without_values():
    y, p = _targets(n=20)
    p[3] = np.nan
    with pytest.raises(ValueError, match="y_pred") as info:
        dp_mean_squared_error(y, p, bounds_y=BOUNDS, epsilon=1.0)
    assert str(y[3])[:5] not in str(info.value)


def test_scorer_needs_bounds_and_refuses_what_skdp_cannot_privatise():
    with pytest.raises(ValueError, match="bounds_y"):
        make_dp_scorer("r2", epsilon=1.0)
    with pytest.raises(ValueError, match="no differentially private version.*'f1'"):
        make_dp_scorer("f1", epsilon=1.0)
    X = np.random.default_rng(0).uniform(0, 1, (40, 2))
    y = (X[:, 0] > 0.5).astype(int)
    clf = LogisticRegression().fit(X, y)
    with pytest.raises(TypeError, match="regression metric"):
        make_dp_scorer("r2", epsilon=1.0, bounds_y=(0, 1))(clf, X, y)
    reg = LinearRegression().fit(X, y)
    with pytest.raises(TypeError, match="classification metric"):
        make_dp_scorer("roc_auc", epsilon=1.0)(reg, X, y)


def test_error_scorers_are_negated_and_functions_map_to_them():
    X = np.random.default_rng(0).uniform(0, 1, (200, 2))
    y = X @ [2.0, 1.0]
    reg = LinearRegression().fit(X, y)
    for metric in ("neg_mean_squared_error", dp_mean_squared_error):
        scorer = make_dp_scorer(metric, epsilon=math.inf, bounds_y=(0, 3))
        assert scorer(reg, X, y) == pytest.approx(-mean_squared_error(y, reg.predict(X)))


def test_grid_search_over_linear_regression_with_a_dp_r2_scorer():
    """The issue's failure: DPGridSearchCV over DPLinearRegression had no DP scorer."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(3000, 3))
    y = np.clip(X @ [1.0, -0.5, 0.25] + 2.0 + rng.normal(0, 0.2, 3000), 0, 4)
    est = DPLinearRegression(bounds_X=(-1, 1), bounds_y=(0, 4), random_state=0)
    search = DPGridSearchCV(
        est,
        {"epsilon": [0.05, 5.0]},
        scoring=make_dp_scorer("r2", epsilon=1.0, bounds_y=(0, 4), random_state=0),
        cv=3,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    assert search.best_params_ == {"epsilon": 5.0}
    assert math.isfinite(search.epsilon_spent_)
    assert search.best_estimator_.score(X, y) > 0.8
