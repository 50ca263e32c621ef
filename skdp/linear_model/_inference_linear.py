"""The parametric bootstrap through the mechanism of :class:`DPLinearRegression`
(Ferrando, Wang & Sheldon 2022), vectorised over replicates, and the exact ordinary
least squares interval of a non-private fit (``epsilon=inf``).

Everything here reads only the fitted model: the released statistics
(``released_statistics_``), the noise scales, the public bounds and ``n``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy import special
from scipy.special import ndtri

from skdp.linear_model._functional_release import (
    EIGENVALUE_TAIL,
    EIGENVALUE_THRESHOLD,
    NOMINAL_COEF_SQ,
    RIDGE_GUARD,
    RIDGE_SCALE,
    VARIANCE_RATIO,
    _gram_index,
    _Scaling,
)

#: smallest variance of a simulated scaled feature (the released covariance is noisy)
MIN_FEATURE_VARIANCE = 1e-4
#: the simulated residual variance is at least this share of the target's private variance
MIN_RESIDUAL_SHARE = 0.01
#: the Jacobian of the mechanism's mean map is inverted with singular values at least this
MIN_GAIN = 0.05
#: fixed-point iterations that undo the eigenvalue spread of the released Gram matrix
DEBIAS_ITERATIONS = 5
SQRT_2PI = math.sqrt(2.0 * math.pi)
#: replicates of the pilot run that sets the finite-difference steps
PILOT = 50
#: replicates times rows simulated at once (memory about 8 bytes times this, twice)
CHUNK = 2_000_000


@dataclass(frozen=True)
class _Spec:
    """The public facts of one fit that the mechanism's replicate needs."""

    n: int
    p: int
    gaussian: bool
    scale: float  # noise of one released Gram entry (Laplace scale or Gaussian sd)
    entry_sd: float
    weight: float
    eig_scale: float
    adaptive: bool
    fixed_ridge: float
    centre_scale: float
    eps_centre: float
    scaling: _Scaling

    @classmethod
    def of(cls, est):
        lo, hi = est.bounds_X_
        ylo, yhi = est.bounds_y_
        stats = est.released_statistics_
        gaussian = est.mechanism_ == "gaussian"
        scale = float(est.noise_scale_["objective"])
        reg = est.regularization
        adaptive = isinstance(reg, str) and reg == "adaptive"
        entry_sd = scale if gaussian else math.sqrt(2.0) * scale
        fixed = 5.0 * entry_sd if isinstance(reg, str) and reg == "zhang" else reg
        return cls(
            n=int(stats["n"]),
            p=int(np.asarray(lo).shape[0]),
            gaussian=gaussian,
            scale=scale,
            entry_sd=entry_sd,
            weight=float(est.target_weight_),
            eig_scale=float(est.noise_scale_["eigenvalue"]),
            adaptive=adaptive,
            fixed_ridge=0.0 if adaptive else float(fixed),
            centre_scale=float(est.noise_scale_["centre"]),
            eps_centre=float(est.privacy_breakdown_["centre"]),
            scaling=_Scaling.build(
                np.asarray(lo, float), np.asarray(hi, float), ylo, yhi, fit_intercept=True
            ),
        )

    def to_scaled(self, theta):
        """Original-unit ``(coef, intercept)`` -> ``(slope, a)`` of ``y~ = slope x~ + a``."""
        sc = self.scaling
        slope = theta[: self.p] * sc.ay / sc.ax
        return slope, float(sc.ay * theta[self.p] + sc.cy - slope @ sc.cx)

    def noise(self, rng, size):
        if self.gaussian:
            return rng.normal(0.0, self.scale, size=size)
        return rng.laplace(0.0, self.scale, size=size)


def _design(gram, n, p, rng):
    """A fixed design of ``n`` scaled rows (clipped to ``[-1, 1]``) whose mean and
    covariance are those read off the released Gram matrix (Gaussian rows, whitened to
    the exact moments)."""
    mu = np.clip(gram[:p, p] / n, -1.0, 1.0)
    cov = gram[:p, :p] / n - np.outer(mu, mu)
    lam, V = np.linalg.eigh(0.5 * (cov + cov.T))
    lam = np.clip(lam, MIN_FEATURE_VARIANCE, 1.0)
    root = V * np.sqrt(lam)
    Z = rng.standard_normal((n, p))
    if n > p + 1:
        Z -= Z.mean(axis=0)
        L = np.linalg.cholesky(Z.T @ Z / n)
        Z = np.linalg.solve(L, Z.T).T
    X = np.clip(mu + Z @ root.T, -1.0, 1.0)
    return np.hstack([X, np.ones((n, 1))])


def _debiased_gram(spec, gram, rng, iterations=DEBIAS_ITERATIONS, draws=200):
    """The Gram matrix whose noisy release has, on average, the released eigenvalues.

    Noise spreads the eigenvalues of a symmetric matrix (the smallest falls, the largest
    rises), so simulating from the released Gram itself would overstate the
    ill-conditioning, hence the ridge and the shrinkage. Keeping the released
    eigenvectors, the eigenvalues ``l`` are moved until the mean sorted eigenvalues of
    ``V diag(l) V^T + E`` (``E`` the release's noise, simulated) equal the released
    ones (a fixed-point iteration)."""
    d = gram.shape[0]
    rows, cols = _gram_index(d, True)
    target, V = np.linalg.eigh(gram)
    E = np.zeros((draws, d, d))
    E[:, rows, cols] = spec.noise(rng, (draws, rows.size))
    E[:, cols, rows] = E[:, rows, cols]
    lam = target.copy()
    floor = max(1e-3 * float(target[-1]), spec.entry_sd, 1.0)
    for _ in range(iterations):
        G = (V * lam) @ V.T
        mean = np.linalg.eigvalsh(G + E).mean(axis=0)
        lam = np.maximum(lam + (target - mean), floor)
    return (V * lam) @ V.T


def _ridge(spec, M, lam_tilde, variance):
    """The ridge of each replicate (the rule of ``_adaptive_ridge`` and ``_ridge_factor``
    of :mod:`skdp.linear_model._functional_release`, batched)."""
    if not spec.adaptive:
        return np.full(M.shape[0], spec.fixed_ridge)
    sd, d, n, p = spec.entry_sd, M.shape[1], spec.n, spec.p
    lam_matrix = np.linalg.eigvalsh(M)[:, 0]
    signal = np.maximum(lam_tilde, sd)
    balance = RIDGE_SCALE * d * sd * (sd / signal)
    sums = M[:, :p, d - 1] / n
    diag = np.diagonal(M, axis1=1, axis2=2)[:, :p]
    vx = np.maximum(np.mean(diag / n - sums**2, axis=1), 1e-3)
    B = np.clip(VARIANCE_RATIO * variance / vx, 1e-4, 1e4)
    inv_w2 = 1.0 / spec.weight**2
    factor = ((inv_w2 + B) / B) / ((inv_w2 + NOMINAL_COEF_SQ) / NOMINAL_COEF_SQ)
    return np.maximum(np.maximum(0.0, factor * balance), RIDGE_GUARD * sd - lam_matrix)


def _solve(A, c):
    """The trimmed minimiser of each replicate (``_trimmed_minimiser``, batched)."""
    lam, V = np.linalg.eigh(A)
    keep = lam >= EIGENVALUE_THRESHOLD
    proj = np.einsum("bji,bj->bi", V, c)
    g = np.where(keep, proj / np.where(keep, lam, 1.0), 0.0)
    return np.einsum("bij,bj->bi", V, g)


def _centre(spec, Y, noise):
    """The private mean and variance of each replicate's scaled target (``noise``: the
    replicates' unit Laplace draws, shape ``(2, b)``)."""
    n = spec.n
    noisy_sum = Y.sum(axis=1, dtype=np.float64) + spec.centre_scale * noise[0]
    square = np.einsum("bi,bi->b", Y, Y, dtype=np.float64)
    noisy_sq = square - 0.5 * n + spec.centre_scale * noise[1]
    mean = np.clip(noisy_sum / n, -1.0, 1.0)
    var = np.maximum(noisy_sq / n + 0.5 - mean**2, max(1.0 / (n * spec.eps_centre), 1e-4))
    return mean, np.minimum(var, 1.0)


def _draws(spec, b, n, d, rng):
    """One chunk's random numbers, shared by every model simulated on it (common random
    numbers: the differences between models are smooth in the model)."""
    unit = rng.standard_normal if spec.gaussian else functools.partial(rng.laplace, 0.0, 1.0)
    return {
        "e": rng.standard_normal((b, n), dtype=np.float32),
        "centre": rng.laplace(0.0, 1.0, (2, b)),
        "target": spec.scale * unit(size=(b, d)) / spec.weight,
        "gram": spec.scale * unit(size=(b, d * (d + 1) // 2 - 1)),
        "eigenvalue": spec.eig_scale * unit(size=b),
    }


def _mechanism(spec, X1, G, lam_true, theta, sigma, z):
    """The mechanism on one chunk of simulated data sets (draws ``z``) from the model
    ``theta``: ``(coef, intercept)`` of each replicate in original units."""
    p, n, d = spec.p, spec.n, spec.p + 1
    rows, cols = _gram_index(d, True)
    slope, a = spec.to_scaled(theta)
    # the rows in float32 (the sums are accumulated pairwise: relative error ~1e-7)
    Y = z["e"] * np.float32(sigma)
    Y += (X1[:, :p] @ slope + a).astype(np.float32)
    np.clip(Y, -1.0, 1.0, out=Y)
    mean, var = _centre(spec, Y, z["centre"])
    U = Y
    U -= mean[:, None].astype(np.float32)
    np.clip(U, -1.0, 1.0, out=U)
    c = (U @ X1.astype(np.float32)).astype(np.float64) + z["target"]
    M = np.broadcast_to(G, (Y.shape[0], d, d)).copy()
    M[:, rows, cols] += z["gram"]
    M[:, cols, rows] = M[:, rows, cols]
    M[:, d - 1, d - 1] = n
    if spec.gaussian:
        shift = spec.eig_scale * float(ndtri(1.0 - EIGENVALUE_TAIL))
    else:
        shift = spec.eig_scale * math.log(1.0 / (2.0 * EIGENVALUE_TAIL))
    lam_tilde = np.maximum(lam_true + z["eigenvalue"] - shift, 0.0)
    ridge = _ridge(spec, M, lam_tilde, var)
    M[:, np.arange(d), np.arange(d)] += ridge[:, None]
    w = _solve(M, c)
    sc = spec.scaling
    coef = w[:, :p] * sc.ax / sc.ay
    intercept = (w[:, :p] @ sc.cx + w[:, p] - sc.cy + mean) / sc.ay
    return np.column_stack([coef, intercept])


def replicates(spec, X1, thetas, sigma, n_rep, rng):
    """``n_rep`` releases of the whole mechanism on data simulated from each linear model
    ``y~ = clip(slope x~ + a + sigma e, -1, 1)`` in ``thetas`` (original units) on the
    design ``X1``: centring, noisy statistics, private eigenvalue, ridge and solve, with
    the same random numbers for every model. Returns shape ``(len(thetas), n_rep, p +
    1)``."""
    n, d = spec.n, spec.p + 1
    G = X1.T @ X1
    lam_true = float(np.linalg.eigvalsh(G)[0])
    out = []
    step = max(1, CHUNK // max(n, 1))
    for start in range(0, n_rep, step):
        z = _draws(spec, min(step, n_rep - start), n, d, rng)
        out.append([_mechanism(spec, X1, G, lam_true, t, sigma, z) for t in thetas])
    return np.concatenate([np.array(o) for o in out], axis=1)


def _clipped_variance(mu, sigma):
    """Variance of ``clip(mu_i + sigma e, -1, 1)`` over the rows (``e`` standard normal;
    the moments of the clipped normal in closed form)."""
    lo, hi = (-1.0 - mu) / sigma, (1.0 - mu) / sigma
    F_lo, F_hi = special.ndtr(lo), special.ndtr(hi)
    f_lo, f_hi = np.exp(-0.5 * lo**2) / SQRT_2PI, np.exp(-0.5 * hi**2) / SQRT_2PI
    inside = F_hi - F_lo
    first = -F_lo + (1.0 - F_hi) + mu * inside + sigma * (f_lo - f_hi)
    second = (
        F_lo
        + (1.0 - F_hi)
        + mu**2 * inside
        + 2.0 * mu * sigma * (f_lo - f_hi)
        + sigma**2 * (inside + lo * f_lo - hi * f_hi)
    )
    return float(np.mean(second) - np.mean(first) ** 2)


def _residual_sd(spec, X1, theta, variance):
    """The residual standard deviation of the simulated target (scaled units): the one
    whose simulated target, clipped to its bounds, has the target's private variance
    (bisection; at least ``MIN_RESIDUAL_SHARE`` of that variance)."""
    slope, a = spec.to_scaled(theta)
    mu = X1[:, : spec.p] @ slope + a
    lo_sd, hi_sd = math.sqrt(MIN_RESIDUAL_SHARE * variance), 4.0
    if _clipped_variance(mu, lo_sd) >= variance:
        return lo_sd
    if _clipped_variance(mu, hi_sd) <= variance:
        return hi_sd
    for _ in range(40):
        mid = math.sqrt(lo_sd * hi_sd)
        if _clipped_variance(mu, mid) < variance:
            lo_sd = mid
        else:
            hi_sd = mid
    return math.sqrt(lo_sd * hi_sd)


def _linearised(spec, X1, theta, sigma, n_bootstrap, rng):
    """The mean map ``m(theta)`` of the mechanism, its Jacobian and the replicates'
    covariance at ``theta``. The Jacobian is a finite difference of one standard
    deviation of a pilot run, on ``n_bootstrap / 4`` replicates with common random
    numbers (the differences are smooth); the mean and covariance use ``n_bootstrap``."""
    k = theta.size
    pilot = replicates(spec, X1, [theta], sigma, PILOT, rng)[0]
    h = np.maximum(pilot.std(axis=0), 1e-12)
    steps = [theta + h[j] * np.eye(k)[j] for j in range(k)]
    moved = replicates(spec, X1, [theta, *steps], sigma, max(PILOT, n_bootstrap // 4), rng)
    J = (moved[1:].mean(axis=1) - moved[0].mean(axis=0)).T / h
    base = replicates(spec, X1, [theta], sigma, n_bootstrap, rng)[0]
    return base.mean(axis=0), J, np.cov(base, rowvar=False)


def _stable_inverse(J):
    """``J^-1`` with the singular values of ``J`` floored at ``MIN_GAIN`` (a mechanism
    that shrinks a direction to almost nothing gives a wide, not an infinite, interval)."""
    U, S, Vt = np.linalg.svd(J)
    return (Vt.T / np.maximum(S, MIN_GAIN)) @ U.T


def bootstrap(est, n_bootstrap, rng):
    """``(centre, se)`` of each coefficient (``coef_`` then ``intercept_``): the
    parametric bootstrap inverted through the linearised mean map of the mechanism
    (Notes of :meth:`conf_int`)."""
    spec = _Spec.of(est)
    stats = est.released_statistics_
    X1 = _design(_debiased_gram(spec, stats["gram"], rng), spec.n, spec.p, rng)
    variance = float(stats["target_variance"])
    estimate = np.append(np.asarray(est.coef_, float), float(est.intercept_))
    sigma = _residual_sd(spec, X1, estimate, variance)
    mean, J, cov = _linearised(spec, X1, estimate, sigma, n_bootstrap, rng)
    J_inv = _stable_inverse(J)
    centre = estimate + J_inv @ (estimate - mean)
    return centre, np.sqrt(np.diag(J_inv @ cov @ J_inv.T))


def ols(est):
    """``(centre, se, df)`` of a non-private fit: the ordinary least squares interval of
    the clipped, scaled data mapped back to original units (statsmodels' ``OLS``)."""
    stats = est.released_statistics_
    G, c, n = stats["gram"], stats["target"], int(stats["n"])
    p = np.asarray(est.coef_).shape[0]
    d = G.shape[0]
    fit_intercept = d == p + 1
    lo, hi = (np.asarray(v, float) for v in est.bounds_X_)
    sc = _Scaling.build(lo, hi, *est.bounds_y_, fit_intercept=fit_intercept)
    A = G + float(est.regularization_) * np.eye(d)
    A_inv = np.linalg.pinv(A)
    w = A_inv @ c
    rss = float(stats["target_sum_sq"] - 2.0 * w @ c + w @ G @ w)
    df = max(n - d, 1)
    cov = max(rss, 0.0) / df * (A_inv @ G @ A_inv)
    J = np.zeros((d, d))
    J[np.arange(p), np.arange(p)] = sc.ax / sc.ay
    if fit_intercept:
        J[p, :p] = sc.cx / sc.ay
        J[p, p] = 1.0 / sc.ay
    estimate = np.asarray(est.coef_, float)
    if fit_intercept:
        estimate = np.append(estimate, float(est.intercept_))
    return estimate, np.sqrt(np.diag(J @ cov @ J.T)), df
