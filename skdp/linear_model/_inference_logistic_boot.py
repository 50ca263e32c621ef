"""The simulations behind :meth:`DPLogisticRegression.conf_int` (:ref:`inference-logistic`).

Post-processing of released values only: the weights ``w`` (scaled units), the noisy
Fisher information ``H``, the ridge, the objective's noise rate and the Laplace scale of
the Fisher release. Two methods on the linearised objective-perturbation mechanism:

* where the public ``n epsilon_k / d'`` is at least :data:`DRAWS_BELOW`, a parametric
  bootstrap re-run at the estimate (Ferrando, Wang & Sheldon 2022) whose levels a
  second (nested) bootstrap calibrates (Beran 1987, prepivoting; Hall 1986);
* below it (and in patient-level fits), draws of the centre's error at the released
  weights (:func:`error_draws`).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "DRAWS_BELOW",
    "EIGEN_FLOOR",
    "bootstrap_problem",
    "calibrated_table",
    "error_draws",
    "factor_fisher",
    "shrunk_fisher",
]

#: eigenvalues of the Fisher information used by ``conf_int`` are floored at this many
#: Laplace scales of the released entries (the release is noisy and may be indefinite)
EIGEN_FLOOR = 0.5
#: first-level replicates that get a nested bootstrap, and the nested replicates of each
N_CALIBRATION = 200
N_NESTED = 100
#: below this public ``n epsilon_k / d'`` (and in patient-level fits, whose row count is
#: not public) ``conf_int`` uses :func:`error_draws`: there the calibrated
#: bootstrap under-covered (0.894-0.919 with correlated features up to 200), from 250 on
#: the draws' intervals were up to 1.45 (250) and 1.8 (500) times the oracle width for
#: ``d = 5`` while the bootstrap held (measured, :ref:`inference-logistic-draws`)
DRAWS_BELOW = 225.0


def _release_floor(H_hat, h_scale):
    """The eigenvalue floor of a release ``H_hat``: :data:`EIGEN_FLOOR` Laplace scales,
    at least ``1e-9`` of its mean diagonal (a noiseless release may be singular)."""
    d = H_hat.shape[-1]
    return max(EIGEN_FLOOR * h_scale, 1e-9 * max(float(np.trace(H_hat)), 1e-12) / d)


def _centre(H_rel, ridge, w_rel, floor):
    """The estimate ``theta0 = C(H~) w`` of (stacked) releases, ``H~`` the release
    floored only (shrinking its off-diagonal part there would bias the centre towards 0)."""
    return _debiased(_floored(H_rel, floor), ridge, w_rel)


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
        off = off * _james_stein(off[..., ~np.eye(d, dtype=bool)], 2.0 * scale**2)[..., None, None]
    return _floored(off + np.eye(d) * diag[..., None, :], floor)


def factor_fisher(H, scale, floor, intercept):
    """The Fisher information estimated from its noisy release ``H`` (entries with
    Laplace noise of scale ``scale``), keeping correlated features correlated.

    Among the features the off-diagonal entries are shrunk towards a constant-correlation
    target (Ledoit & Wolf 2004): ``T_jk = r sqrt(H_jj H_kk)``, ``r`` the mean correlation
    of the release, by the James-Stein factor ``max(0, 1 - 2 scale^2 m / ||off - T||^2)``
    (``m`` entries, ``2 scale^2`` the noise's variance); the intercept's row (the last,
    with ``intercept``) towards 0 by its own factor. Eigenvalues then floored at
    ``floor``. With one or two features the feature block is kept."""
    H = 0.5 * (H + H.T)
    D = H.shape[0]
    p = D - 1 if intercept else D
    out, var = H.copy(), 2.0 * scale**2
    if p > 1:
        iu = np.triu_indices(p, 1)
        sd = np.sqrt(np.maximum(np.diag(H)[:p], floor))
        unit = sd[iu[0]] * sd[iu[1]]
        target = float(np.mean(H[iu] / unit)) * unit
        dev = H[iu] - target
        a = float(_james_stein(dev, var))
        out[iu] = out[iu[1], iu[0]] = target + a * dev
    if intercept and p >= 1:
        row = H[:p, p]
        out[:p, p] = out[p, :p] = float(_james_stein(row, var)) * row
    return _floored(out, floor)


def _james_stein(values, var):
    """``max(0, 1 - var m / ||values||^2)`` over the last axis of ``m`` values of noise
    variance ``var`` (stacked over the leading axes); 0 where the norm is 0."""
    m = values.shape[-1]
    norm2 = (values**2).sum(axis=-1)
    safe = np.where(norm2 > var * m, norm2, 1.0)
    return np.where(norm2 > var * m, 1.0 - var * m / safe, 0.0)


def error_draws(w, H_hat, ridge, beta, h_scale, draws, rng, A, intercept):
    """``(centre, phi)``: the centre ``A theta0`` and ``draws`` draws ``phi`` of the
    coefficients (units of ``A``): ``theta0`` minus draws of its error at the released
    weights.

    The linearised mechanism's released weights solve ``(H + ridge I) w = H theta + g -
    b`` (``g ~ N(0, H)`` the score, ``b`` the objective's noise), and the centre is
    ``theta0 = C(H~) w`` with ``C(M) = M^-1 (M + ridge I)`` and ``H~`` the release
    floored at :data:`EIGEN_FLOOR` Laplace scales. So ``theta0 - theta = (C(H~) - C(H))
    w + H^-1 (g - b)``: the Fisher release's noise enters through the ridge correction
    only, at the released ``w``. Each draw takes ``S`` = :func:`factor_fisher` of the
    release for ``H``, ``H~_r = S + E_r`` (``E_r`` the release's Laplace noise, floored
    as the centre is), ``g_r ~ N(0, S)`` and ``b_r`` from its density: ``theta_r =
    theta0 - (C(H~_r) - C(S)) w - S^-1 (g_r - b_r)``. The mean of the first term is the
    centre's bias from inverting a noisy matrix, so the draws correct it. Unlike the
    bootstrap's replicates at ``theta0`` (:func:`bootstrap_problem`), the ridge
    correction's spread is taken at the released ``w``: where the release is mostly
    noise it grows with the coefficient, and a centre near 0 made the bootstrap's
    interval too narrow."""
    d = w.shape[0]
    floor = _release_floor(H_hat, h_scale)
    theta0 = _centre(H_hat, ridge, w, floor)
    S = factor_fisher(H_hat, h_scale, floor, intercept)
    H_r = np.broadcast_to(S, (draws, d, d))
    if h_scale > 0:
        H_r = _floored(S + _laplace_sym(rng, h_scale, draws, d), floor)
    ridge_error = _debiased(H_r, ridge, np.broadcast_to(w, (draws, d))) - _debiased(S, ridge, w)
    g = rng.standard_normal((draws, d)) @ np.linalg.cholesky(S).T
    score_error = np.linalg.solve(S, (g - _sample_noise(rng, draws, d, beta)).T).T
    phi = (theta0 - ridge_error - score_error) @ A.T
    return A @ theta0, phi


class _World:
    """The linearised mechanism of one problem (public ridge, noise rate, Fisher noise
    scale and eigenvalue floor) and the estimator ``conf_int`` applies to a release."""

    def __init__(self, ridge, beta, h_scale, floor, rng):
        self.ridge, self.beta, self.h_scale, self.floor, self.rng = ridge, beta, h_scale, floor, rng

    def model(self, H_rel):
        """The model's Fisher information from (stacked) releases: :func:`shrunk_fisher`."""
        return shrunk_fisher(H_rel, self.h_scale, self.floor)

    def centre(self, H_rel, w_rel):
        """The estimate ``theta0`` of (stacked) releases: :func:`_centre`."""
        return _centre(H_rel, self.ridge, w_rel, self.floor)

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
    world = _World(ridge, beta, h_scale, _release_floor(H_hat, h_scale), rng)
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
