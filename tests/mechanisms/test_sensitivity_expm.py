"""Brute-force checks of ``expm_squared_loss_sensitivity`` (spec E §1.4, T1, T1b, T1c, T1d)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdp.mechanisms.sensitivity import expm_squared_loss_sensitivity


def _sig(a):
    return 0.5 * (1.0 + np.tanh(0.5 * a))


def _utility(X, y, theta, lo, hi, alpha=0.3):
    """u = -(sum (lo + (hi-lo) sigmoid(x w + b) - y)^2 + alpha ||theta||^2)."""
    yhat = lo + (hi - lo) * _sig(X @ theta[:-1] + theta[-1])
    return -(((yhat - y) ** 2).sum() + alpha * (theta**2).sum())


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    n=st.integers(1, 30),
    d=st.integers(1, 6),
    seed=st.integers(0, 2**31 - 1),
    bounds=st.sampled_from([(0.0, 1.0), (-2.0, 3.0), (10.0, 10.5)]),
)
def test_bound_holds_on_random_neighbours(n, d, seed, bounds):
    lo, hi = bounds
    rng = np.random.default_rng(seed)
    s = expm_squared_loss_sensitivity(lo, hi)
    X = rng.uniform(-1e3, 1e3, (n, d))  # unbounded inputs are allowed
    y = rng.uniform(lo, hi, n)
    for _ in range(20):
        theta = rng.uniform(-1e3, 1e3, d + 1) * rng.choice([1e-3, 1.0])
        u = _utility(X, y, theta, lo, hi)
        i = rng.integers(n)
        # replace-one
        X2, y2 = X.copy(), y.copy()
        X2[i] = rng.uniform(-1e3, 1e3, d)
        y2[i] = rng.uniform(lo, hi)
        assert abs(u - _utility(X2, y2, theta, lo, hi)) <= s * (1 + 1e-12) + 1e-12
        # add/remove
        X3, y3 = np.delete(X, i, 0), np.delete(y, i)
        assert abs(u - _utility(X3, y3, theta, lo, hi)) <= s * (1 + 1e-12) + 1e-12


@pytest.mark.parametrize("lo, hi", [(0.0, 1.0), (-2.0, 3.0)])
def test_bound_is_attained(lo, hi):
    """T1d: a witness with |Δu| close to (hi - lo)^2 under both relations."""
    s = expm_squared_loss_sensitivity(lo, hi)
    X = np.array([[1.0]])
    theta = np.array([50.0, 0.0])  # output -> hi
    y, y2 = np.array([lo]), np.array([hi])
    u, u2 = _utility(X, y, theta, lo, hi, 0.0), _utility(X, y2, theta, lo, hi, 0.0)
    assert abs(u - u2) >= s * (1 - 1e-6)  # replace-one
    assert abs(u - _utility(X[:0], y[:0], theta, lo, hi, 0.0)) >= s * (1 - 1e-6)  # add/remove
    assert s == pytest.approx((hi - lo) ** 2)


@pytest.mark.parametrize("K", [2, 3, 5])
def test_multiclass_needs_two(K):
    """T1c: softmax + one-hot summed squared error has a witness with |Δu| = 2."""
    assert expm_squared_loss_sensitivity(0, 1, n_classes=K) == 2.0
    logits = np.zeros(K)
    logits[0] = 60.0
    p = np.exp(logits - logits.max())
    p /= p.sum()
    e0, e1 = np.eye(K)[0], np.eye(K)[1]
    diff = abs(((p - e1) ** 2).sum() - ((p - e0) ** 2).sum())
    assert diff >= 2 - 1e-6
    rng = np.random.default_rng(0)
    for _ in range(2000):  # never above 2
        q = rng.dirichlet(np.ones(K) * 0.1)
        a, b = np.eye(K)[rng.integers(K)], np.eye(K)[rng.integers(K)]
        assert abs(((q - a) ** 2).sum() - ((q - b) ** 2).sum()) <= 2 + 1e-12


def test_rejects_bad_bounds():
    with pytest.raises(ValueError):
        expm_squared_loss_sensitivity(1.0, 1.0)
    with pytest.raises(ValueError):
        expm_squared_loss_sensitivity(0.0, np.inf)
    with pytest.raises(ValueError):
        expm_squared_loss_sensitivity(-1.0, 1.0, n_classes=3)
