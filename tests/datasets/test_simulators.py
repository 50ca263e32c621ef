"""Spec dp_flow.md §8 F1-F2: the simulated nonlinear repeated-measures generator (§5.5)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats

from skdp.datasets import (
    NONLINEAR_BETA_TRUE,
    NONLINEAR_W_UPPER,
    make_nonlinear_repeated_measures,
    nonlinear_log_likelihood,
    nonlinear_regression_function,
)

BETA = np.asarray(NONLINEAR_BETA_TRUE)


def test_f1_shape_ranges_and_seed():
    X = make_nonlinear_repeated_measures(500, random_state=3)
    assert X.shape == (500, 9)
    W = X[:, :4]
    assert np.all(W >= 0) and np.all(W <= np.asarray(NONLINEAR_W_UPPER))
    # covariates fill their ranges (uniform), not a sub-interval
    assert np.all(W.max(0) > 0.9 * np.asarray(NONLINEAR_W_UPPER))
    np.testing.assert_array_equal(X, make_nonlinear_repeated_measures(500, random_state=3))
    assert not np.array_equal(X, make_nonlinear_repeated_measures(500, random_state=4))
    assert make_nonlinear_repeated_measures(0, random_state=0).shape == (0, 9)


def test_regression_function_uses_fixed_eq12():
    # beta3 multiplies exp(w3) (code), not exp(beta2 w3) (the paper's typo)
    W = np.array([[0.0, 0.0, 0.5, 0.0]])
    b = np.array([0.0, 0.0, 0.0, 2.0, 0.0])
    expected = 0 + 1 + np.log(1.0) + 2.0 * np.exp(0.5) + np.log(1.0)
    np.testing.assert_allclose(nonlinear_regression_function(W, b), [expected])
    # vectorised over parameter rows
    B = np.stack([b, BETA])
    out = nonlinear_regression_function(np.vstack([W, W]), B)
    assert out.shape == (2, 2)
    np.testing.assert_allclose(out[1], nonlinear_regression_function(np.vstack([W, W]), BETA))


def test_log_likelihood_matches_scipy_multivariate_normal():
    X = make_nonlinear_repeated_measures(7, random_state=1)
    b = BETA + 0.05
    cov = 0.3**2 * np.eye(5) + 0.1**2 * np.ones((5, 5))
    f = nonlinear_regression_function(X[:, :4], b)
    ref = [stats.multivariate_normal(f[i] * np.ones(5), cov).logpdf(X[i, 4:]) for i in range(7)]
    np.testing.assert_allclose(nonlinear_log_likelihood(X, b, sigma=0.3, sigma0=0.1), ref)


def test_bad_arguments():
    with pytest.raises(ValueError):
        make_nonlinear_repeated_measures(-1)
    with pytest.raises(ValueError):
        make_nonlinear_repeated_measures(5, beta=[1.0, 2.0])
    with pytest.raises(ValueError):
        nonlinear_log_likelihood(np.zeros((3, 8)), BETA)


def _laplace_posterior(X):
    """Flat-prior Laplace approximation: MLE and inverse Hessian of the negative log-lik."""

    def nll(b):
        return -nonlinear_log_likelihood(X, b).sum()

    res = optimize.minimize(nll, BETA, method="BFGS", options={"gtol": 1e-8})
    b_hat = res.x
    h = 1e-4
    H = np.empty((5, 5))
    for i in range(5):
        for j in range(5):
            ei, ej = np.eye(5)[i] * h, np.eye(5)[j] * h
            H[i, j] = (
                nll(b_hat + ei + ej)
                - nll(b_hat + ei - ej)
                - nll(b_hat - ei + ej)
                + nll(b_hat - ei - ej)
            ) / (4 * h * h)
    return b_hat, np.linalg.inv(H)


def test_f2_laplace_posterior_matches_the_paper():
    X = make_nonlinear_repeated_measures(6000, random_state=0)
    b_hat, cov = _laplace_posterior(X)
    sd = np.sqrt(np.diag(cov))
    np.testing.assert_allclose(sd, [0.0266, 0.0037, 0.0179, 0.0152, 0.0194], rtol=0.05)
    corr = cov / np.outer(sd, sd)
    assert -0.77 <= corr[0, 3] <= -0.71
    assert np.all(np.abs(b_hat - BETA) <= 4 * sd)
    # within-subject correlation of the measurements: sigma0^2 / (sigma0^2 + sigma^2) = 1/2
    f = nonlinear_regression_function(X[:, :4], BETA)
    R = X[:, 4:] - f[:, None]
    rho = np.corrcoef(R.T)[np.triu_indices(5, 1)].mean()
    assert abs(rho - 0.5) <= 0.05
