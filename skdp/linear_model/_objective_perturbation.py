"""The objective-perturbation release of DPLogisticRegression (Chaudhuri, Monteleoni and
Sarwate 2011, Algorithm 2; Kifer, Smith and Thakurta 2012): its parameters, its noise
vector, the row scaling, and the exact minimiser of the perturbed objective."""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit

__all__ = ["objective_perturbation_parameters", "sample_noise"]

#: upper bound on the second derivative of the logistic loss log(1 + exp(-t))
LOGISTIC_SMOOTHNESS = 0.25
#: share of a problem's epsilon left to the Hessian (determinant) term by the default
#: ridge: ``log(1 + c / lambda) <= RIDGE_SHARE * epsilon``, so ``beta >= 0.9 epsilon``
RIDGE_SHARE = 0.1
#: Newton polishing steps after L-BFGS (the guarantee is for the exact minimiser)
NEWTON_STEPS = 8


def objective_perturbation_parameters(epsilon, C, smoothness=LOGISTIC_SMOOTHNESS):
    """Ridge ``lambda`` and noise rate ``beta`` of one ``epsilon``-DP problem.

    ``lambda = max(1 / C, c / (exp(s epsilon) - 1))`` with ``s = RIDGE_SHARE = 0.1`` and
    ``beta = epsilon - log(1 + c / lambda)`` (``>= (1 - s) epsilon``): the add/remove
    guarantee of :class:`DPLogisticRegression`'s Notes. ``epsilon = inf`` gives
    ``(1 / C, inf)``.
    """
    ridge = 1.0 / float(C)
    if not math.isfinite(ridge):
        raise ValueError(
            f"C must be at least {np.finfo(np.float64).tiny:g} (the ridge 1 / C overflows)"
        )
    if math.isinf(epsilon):
        return ridge, math.inf
    if RIDGE_SHARE * epsilon < 700.0:  # beyond, exp overflows and the term is 0
        ridge = max(ridge, smoothness / math.expm1(RIDGE_SHARE * epsilon))
    beta = epsilon - math.log1p(smoothness / ridge)
    return ridge, beta


def sample_noise(d, beta, rng):
    """``b`` in ``R^d`` with density ``∝ exp(-beta ||b||)``: norm Gamma(``d``,
    ``1 / beta``), direction uniform on the sphere (``beta = inf``: zeros)."""
    if math.isinf(beta):
        return np.zeros(d)
    norm = rng.gamma(shape=d, scale=1.0 / beta)
    direction = rng.standard_normal(d)
    return norm * direction / np.linalg.norm(direction)


def _scaled_rows(X, lo, hi, fit_intercept):
    """Rows clipped and mapped into the unit L2 ball: ``x~ = (a x + c, 1) / sqrt(p + 1)``
    (without intercept ``(x / max|bound|) / sqrt(p)``)."""
    n, p = X.shape
    if fit_intercept:
        ax, cx = 2.0 / (hi - lo), -2.0 * lo / (hi - lo) - 1.0
        scale = 1.0 / math.sqrt(p + 1)
    else:
        ax, cx = 1.0 / np.maximum(np.abs(lo), np.abs(hi)), np.zeros(p)
        scale = 1.0 / math.sqrt(p)
    U = np.clip(X, lo, hi) * ax + cx
    # guard the rounding of the affine map: every coordinate in [-1, 1]
    np.clip(U, -1.0, 1.0, out=U)
    if fit_intercept:
        U = np.hstack([U, np.ones((n, 1))])
    Z = U * scale
    norms = np.linalg.norm(Z, axis=1)
    big = norms > 1.0
    if big.any():  # rounding only
        Z[big] /= norms[big, None]
    return Z, ax, cx, scale


def _objective(w, Z, s, ridge, b, n):
    t = s * (Z @ w)
    value = -log_expit(t).sum() + 0.5 * ridge * (w @ w) + b @ w
    grad = Z.T @ (-s * expit(-t)) + ridge * w + b
    return value / n, grad / n


def _solve(Z, s, ridge, b, *, tol, max_iter):
    """Minimise ``sum log(1 + exp(-s z . w)) + ridge/2 ||w||^2 + b . w``: L-BFGS, then
    Newton steps; returns ``(w, iterations, ||gradient||)``."""
    n, d = Z.shape
    scale = max(n, 1)
    res = minimize(
        _objective,
        np.zeros(d),
        args=(Z, s, ridge, b, scale),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": max_iter, "gtol": tol, "ftol": 0.0},
    )
    w = res.x
    for _ in range(NEWTON_STEPS):
        value, grad = _objective(w, Z, s, ridge, b, scale)
        if np.linalg.norm(grad) * scale <= 1e-12 * max(1.0, ridge):
            break
        t = Z @ w
        curv = expit(t) * expit(-t)
        H = (Z.T * curv) @ Z + ridge * np.eye(d)
        step = np.linalg.solve(H, grad * scale)
        w_new = w - step
        if _objective(w_new, Z, s, ridge, b, scale)[0] > value + 1e-14 * abs(value):
            break
        w = w_new
    _, grad = _objective(w, Z, s, ridge, b, scale)
    return w, int(res.nit), float(np.linalg.norm(grad) * scale)
