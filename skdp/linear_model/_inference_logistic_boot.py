"""The parametric bootstrap of :meth:`DPLogisticRegression.conf_int` (:ref:`inference-logistic`).

Post-processing of released values only: the weights ``w`` (scaled units), the noisy
Fisher information ``H``, the ridge, the objective's noise rate and the Laplace scale of
the Fisher release. The linearised objective-perturbation mechanism is re-run at the
estimate (Ferrando, Wang & Sheldon 2022) and the interval's levels are calibrated by a
second (nested) bootstrap run at every first-level replicate (Beran 1987, prepivoting;
Hall 1986, the iterated bootstrap).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["EIGEN_FLOOR", "bootstrap_problem", "calibrated_table", "shrunk_fisher"]

#: eigenvalues of the Fisher information used by ``conf_int`` are floored at this many
#: Laplace scales of the released entries (the release is noisy and may be indefinite)
EIGEN_FLOOR = 0.5
#: first-level replicates that get a nested bootstrap, and the nested replicates of each
N_CALIBRATION = 200
N_NESTED = 100


def _floored(H, floor):
    """Symmetric ``H`` (stacked ``(..., d, d)``) with eigenvalues at least ``floor``."""
    lam, V = np.linalg.eigh(0.5 * (H + np.swapaxes(H, -1, -2)))
    lam = np.maximum(lam, floor)
    return (V * lam[..., None, :]) @ np.swapaxes(V, -1, -2)


def _laplace_sym(rng, scale, size, d):
    """``size`` symmetric ``d x d`` matrices with Laplace(``scale``) upper triangles."""
    upper = np.triu_indices(d)
    E = np.zeros((size, d, d))
    E[:, upper[0], upper[1]] = rng.laplace(0.0, scale, size=(size, upper[0].size))
    return E + np.triu(E, 1).swapaxes(1, 2)


def _sample_noise(rng, size, d, beta):
    """``size`` draws of ``b`` with density ``∝ exp(-beta ||b||)``."""
    if not math.isfinite(beta):
        return np.zeros((size, d))
    direction = rng.standard_normal((size, d))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    return rng.gamma(shape=d, scale=1.0 / beta, size=(size, 1)) * direction


def _debiased(H, ridge, w):
    """One Newton step from the ridge minimiser towards the unpenalised one:
    ``H^-1 (H + ridge I) w`` (stacked)."""
    return w + ridge * np.linalg.solve(H, w[..., None])[..., 0]


def shrunk_fisher(H, scale, floor):
    """The Fisher information estimated from a noisy release ``H`` (stacked ``(..., d,
    d)``) whose entries carry Laplace noise of scale ``scale``: the off-diagonal part
    shrunk towards 0 by ``a = max(0, 1 - 2 scale^2 d (d - 1) / ||off(H)||_F^2)`` (the
    share of its squared norm that the noise does not explain, as in James & Stein's and
    Ledoit & Wolf's shrinkage), then every eigenvalue floored at ``floor``. A function of
    the release and the public noise scale only."""
    H = 0.5 * (H + np.swapaxes(H, -1, -2))
    d = H.shape[-1]
    diag = np.diagonal(H, axis1=-2, axis2=-1)
    off = H - np.eye(d) * diag[..., None, :]
    if scale > 0 and d > 1:
        norm2 = np.maximum((off**2).sum(axis=(-2, -1)), np.finfo(float).tiny)
        off = off * np.clip(1.0 - 2.0 * scale**2 * d * (d - 1) / norm2, 0.0, 1.0)[..., None, None]
    return _floored(off + np.eye(d) * diag[..., None, :], floor)


class _World:
    """The linearised mechanism of one problem (public ridge, noise rate, Fisher noise
    scale and eigenvalue floor) and the estimator ``conf_int`` applies to a release."""

    def __init__(self, ridge, beta, h_scale, floor, rng):
        self.ridge, self.beta, self.h_scale, self.floor, self.rng = ridge, beta, h_scale, floor, rng

    def model(self, H_rel):
        """The model's Fisher information from (stacked) releases: :func:`shrunk_fisher`."""
        return shrunk_fisher(H_rel, self.h_scale, self.floor)

    def centre(self, H_rel, w_rel):
        """The estimate ``theta0`` of (stacked) releases, debiased with the release floored
        only (shrinking its off-diagonal part there would bias the centre towards 0)."""
        return _debiased(_floored(H_rel, self.floor), self.ridge, w_rel)

    def simulate(self, H0, theta0, size):
        """``size`` releases ``(w*, H*)`` of the linearised mechanism at every (stacked)
        model ``(theta0, H0)``: the score ``g ~ N(0, H0)``, the objective's noise ``b``,
        ``w* = theta0 + (H0 + ridge I)^-1 (g - b - ridge theta0)``, ``H* = H0 + E``."""
        lead, d = theta0.shape[:-1], theta0.shape[-1]
        count = int(np.prod(lead, dtype=int)) * size
        rng = self.rng
        z = rng.standard_normal((*lead, size, d))
        g = np.einsum("...ij,...kj->...ki", np.linalg.cholesky(H0), z)
        b = _sample_noise(rng, count, d, self.beta).reshape(*lead, size, d)
        rhs = g - b - self.ridge * theta0[..., None, :]
        M = (H0 + self.ridge * np.eye(d))[..., None, :, :]
        w_star = theta0[..., None, :] + np.linalg.solve(M, rhs[..., None])[..., 0]
        H_star = H0[..., None, :, :]
        if self.h_scale > 0:
            E = _laplace_sym(rng, self.h_scale, count, d).reshape(*lead, size, d, d)
            H_star = H_star + E
        return w_star, H_star


def bootstrap_problem(w, H_hat, ridge, beta, h_scale, B, rng, A):
    """``(centre, delta, outer, inner)`` of one problem, in the units of ``A`` (the map of
    scaled weights to ``coef_`` and ``intercept_``).

    ``centre = A theta0`` with ``theta0 = H~^-1 (H~ + ridge I) w`` (``H~``: the release
    with eigenvalues floored at ``EIGEN_FLOOR`` Laplace scales); the model's Fisher
    information ``H0`` is :func:`shrunk_fisher` of the release. ``delta`` (``B`` rows):
    the deviations ``theta* - theta0`` of the same estimator applied to releases of the
    linearised mechanism simulated at ``(theta0, H0)``. For the first
    ``N_CALIBRATION`` of them the same is repeated at their own estimate (``N_NESTED``
    each): ``outer`` are their deviations and ``inner`` (``N_CALIBRATION x N_NESTED``)
    the nested deviations, from which :func:`calibrated_table` calibrates the levels.
    """
    d = w.shape[0]
    floor = max(EIGEN_FLOOR * h_scale, 1e-9 * max(float(np.trace(H_hat)), 1e-12) / d)
    world = _World(ridge, beta, h_scale, floor, rng)
    theta0 = world.centre(H_hat, w)
    w_star, H_rel = world.simulate(world.model(H_hat), theta0, B)
    theta_star = world.centre(H_rel, w_star)
    delta = (theta_star - theta0) @ A.T
    k = min(N_CALIBRATION, B)
    w_2, H_2 = world.simulate(world.model(H_rel[:k]), theta_star[:k], N_NESTED)
    inner = (world.centre(H_2, w_2) - theta_star[:k, None, :]) @ A.T
    return A @ theta0, delta, delta[:k], inner


def _interval(centre, delta_sorted, u_sorted, alpha):
    """The calibrated basic interval at level(s) ``alpha`` (stacked over coefficients)."""
    a = np.asarray(alpha, float)
    m, k = delta_sorted.shape[0], u_sorted.shape[0]

    def q(sorted_, level, size):  # the lower empirical quantile, column-wise
        idx = np.clip(np.ceil(level * size).astype(int) - 1, 0, size - 1)
        return np.take_along_axis(sorted_, idx[None, :], axis=0)[0]

    a_lo, a_hi = q(u_sorted, a / 2.0, k), q(u_sorted, 1.0 - a / 2.0, k)
    return centre - q(delta_sorted, a_hi, m), centre - q(delta_sorted, a_lo, m)


def calibrated_table(centre, delta, outer, inner, alpha):
    """``(se, lower, upper, p)`` of the basic bootstrap interval whose levels are
    calibrated by the nested bootstrap (prepivoting, Beran 1987).

    ``u = P(inner <= outer)`` is, for each calibration replicate, the nested bootstrap's
    distribution function at its own deviation; were the bootstrap exact, ``u`` would be
    uniform. The interval uses the levels ``a_lo = Q_u(alpha/2)`` and ``a_hi = Q_u(1 -
    alpha/2)`` instead of ``alpha/2`` and ``1 - alpha/2``: ``centre - Q_delta(a_hi)`` to
    ``centre - Q_delta(a_lo)``. ``p`` is the smallest ``alpha`` whose interval excludes 0
    (bisection on the same function, so ``p < alpha`` exactly when the interval excludes
    0; at least ``1 / (1 + B)``, the replicates' resolution), ``se`` the standard
    deviation of ``delta``.
    """
    u = (inner <= outer[:, None, :]).mean(axis=1)
    u_sorted, delta_sorted = np.sort(u, axis=0), np.sort(delta, axis=0)
    lower, upper = _interval(centre, delta_sorted, u_sorted, np.full(centre.shape, alpha))

    def excludes(a):
        lo, hi = _interval(centre, delta_sorted, u_sorted, a)
        return (lo > 0) | (hi < 0)

    smallest = 1.0 / (1.0 + delta.shape[0])  # below it, the replicates cannot resolve p
    lo_a, hi_a = np.full(centre.shape, smallest), np.ones(centre.shape)
    for _ in range(40):  # monotone in alpha: the interval shrinks as alpha grows
        mid = 0.5 * (lo_a + hi_a)
        ex = excludes(mid)
        hi_a, lo_a = np.where(ex, mid, hi_a), np.where(ex, lo_a, mid)
    p = np.where(excludes(np.full(centre.shape, smallest)), smallest, hi_a)
    p = np.where(excludes(np.ones(centre.shape)), p, 1.0)
    return delta.std(axis=0, ddof=1), lower, upper, p
