"""DPLogisticRegression.conf_int where the Fisher release is mostly noise: draws of the
linearised mechanism's unknowns given the release (doc/inference.rst,
``inference-logistic-draws``)."""

import numpy as np
import pytest

from skdp.linear_model import DPLogisticRegression
from skdp.linear_model._inference_logistic_boot import (
    DRAWS_BELOW,
    _laplace_sym,
    error_draws,
    factor_fisher,
    shrunk_fisher,
)
from skdp.utils._inference import draws_table


def _equicorrelated(p=4, rho=0.4, diag=20.0, icpt=60.0):
    H = np.full((p, p), rho * diag) + (1 - rho) * diag * np.eye(p)
    out = np.zeros((p + 1, p + 1))
    out[:p, :p], out[p, p] = H, icpt
    return out


def test_factor_fisher_keeps_a_common_correlation_that_shrinking_to_zero_loses():
    rng = np.random.default_rng(0)
    H = _equicorrelated()
    off = ~np.eye(5, dtype=bool)
    err = {"release": [], "to zero": [], "factor": []}
    for noisy in H + _laplace_sym(rng, 6.0, 300, 5):
        err["release"].append(np.sum((noisy - H)[off] ** 2))
        err["to zero"].append(np.sum((shrunk_fisher(noisy, 6.0, 3.0) - H)[off] ** 2))
        err["factor"].append(np.sum((factor_fisher(noisy, 6.0, 3.0, True) - H)[off] ** 2))
    mean = {k: float(np.mean(v)) for k, v in err.items()}
    assert mean["factor"] < 0.6 * mean["release"]
    assert mean["factor"] < 0.6 * mean["to zero"]
    # positive definite above the floor; exact without noise
    S = factor_fisher(H + _laplace_sym(rng, 6.0, 1, 5)[0], 6.0, 3.0, True)
    assert np.linalg.eigvalsh(S).min() >= 3.0 - 1e-9
    np.testing.assert_allclose(factor_fisher(H, 0.0, 1e-6, True), H, atol=1e-9)


def test_factor_fisher_without_intercept_and_with_one_feature_pair():
    H = _equicorrelated(p=2)[:2, :2]
    np.testing.assert_allclose(factor_fisher(H, 0.0, 1e-6, False), H, atol=1e-9)
    # one pair: no deviation from the constant-correlation target, the entry is kept
    noisy = H + np.array([[0.0, 3.0], [3.0, 0.0]])
    np.testing.assert_allclose(factor_fisher(noisy, 1.0, 1e-6, False), noisy, atol=1e-9)


def test_draws_reduce_to_the_wald_interval_without_noise():
    rng = np.random.default_rng(1)
    H = _equicorrelated(p=2)
    w, ridge, A = np.array([0.3, -0.2, 0.1]), 4.0, np.diag([2.0, 2.0, 1.0])
    centre, phi = error_draws(w, H, ridge, np.inf, 0.0, 40000, rng, A, True)
    np.testing.assert_allclose(centre, A @ np.linalg.solve(H, (H + ridge * np.eye(3)) @ w))
    se, lower, upper, _ = draws_table(phi, 0.05)
    wald = np.sqrt(np.diag(A @ np.linalg.inv(H) @ A.T))
    np.testing.assert_allclose(se, wald, rtol=0.03)
    np.testing.assert_allclose(upper - lower, 2 * 1.959964 * wald, rtol=0.03)


def test_draws_table_p_value_is_the_dual_of_the_interval_at_every_alpha():
    rng = np.random.default_rng(2)
    phi = rng.standard_normal((2000, 4)) + np.array([0.3, -2.5, 0.05, 4.0])
    p = draws_table(phi, 0.05)[3]
    assert np.all((p > 0) & (p <= 1))
    for alpha in (0.0137, 0.05, 0.2, 0.5, 0.9):  # p is a multiple of 1 / 1000
        _, lo, hi, _ = draws_table(phi, alpha)
        np.testing.assert_array_equal(p < alpha, (lo > 0) | (hi < 0))


def _correlated(n, seed):
    rng = np.random.default_rng(seed)
    C = 0.4 * np.ones((2, 2)) + 0.6 * np.eye(2)
    X = np.clip(0.5 * rng.standard_normal((n, 2)) @ np.linalg.cholesky(C).T, -1, 1)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(X @ [-1.5, 0.0] - 0.8)))).astype(int)
    return X, y


@pytest.mark.parametrize(
    ("n", "epsilon", "groups", "method"),
    [
        (500, 0.3, False, "error_draws"),  # n eps / d' = 50
        (2000, 1.0, False, "bootstrap_problem"),  # 667
        (2000, 1.0, True, "error_draws"),  # patient level: n is not public
    ],
)
def test_the_method_follows_the_public_information(monkeypatch, n, epsilon, groups, method):
    X, y = _correlated(n, 0)
    g = np.arange(n) // 2 if groups else None
    kw = {"max_rows_per_group": 2} if groups else {}
    clf = DPLogisticRegression(
        epsilon=epsilon, classes=[0, 1], bounds_X=(-1, 1), inference=True, random_state=0, **kw
    ).fit(X, y, groups=g)
    info = clf.released_statistics_["information"]
    assert (info is None) if groups else info == pytest.approx(n * epsilon / 3)
    assert (info is None or info < DRAWS_BELOW) == (method == "error_draws")
    from skdp.linear_model import _inference_logistic as li

    called = []
    original = getattr(li, method)
    monkeypatch.setattr(li, method, lambda *a: called.append(1) or original(*a))
    assert clf.conf_int().shape == (3, 2)
    assert called == [1]


@pytest.mark.slow
def test_low_information_interval_reaches_a_large_coefficient_estimated_small():
    # n eps = 150 with correlated features: the ridge correction's spread grows with the
    # coefficient, and the calibrated bootstrap at a centre near 0 covered the -1.5
    # coefficient too rarely (its interval above it)
    # (the calibrated bootstrap: 0.86 on these 100 data sets; the error draws: 0.95)
    hits = []
    for r in range(100):
        seed = 424242 + 7919 * r
        X, y = _correlated(500, seed)
        clf = DPLogisticRegression(
            epsilon=0.3, classes=[0, 1], bounds_X=(-1, 1), inference=True, random_state=seed
        ).fit(X, y)
        lo, hi = clf.conf_int()[0]
        hits.append(lo <= -1.5 <= hi)
    assert np.mean(hits) >= 0.9
