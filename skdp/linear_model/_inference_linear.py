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
from skdp.utils._inference import shrunk_spectrum

#: smallest variance of a simulated scaled feature (the released covariance is noisy)
MIN_FEATURE_VARIANCE = 1e-4
#: the simulated residual variance is at least this share of the target's private variance
MIN_RESIDUAL_SHARE = 0.01
#: the Jacobian of the mechanism's mean map is inverted with singular values at least this
MIN_GAIN = 0.05
SQRT_2PI = math.sqrt(2.0 * math.pi)
#: replicates of the pilot run that sets the finite-difference steps
PILOT = 50
#: replicates times rows simulated at once (memory about 8 bytes times this, twice)
CHUNK = 2_000_000
#: expected number of clipped simulated targets below which the replicates are drawn at
#: the level of the sufficient statistics (exact without clipping)
CLIP_NEGLIGIBLE = 0.1
#: default replicates per bootstrap stage: drawn at the level of the sufficient
#: statistics (cheap, independent of ``n``), or, as ``n`` simulated rows each, as many
#: as ``ROWS_BUDGET`` simulated rows allow (at least ``N_BOOTSTRAP_ROWS``)
N_BOOTSTRAP_EXACT = 2000
N_BOOTSTRAP_ROWS = 400
ROWS_BUDGET = 4_000_000


def _released_estimate(est):
    """The released estimate (``coef_`` then the intercept): ``released_coef_`` and
    ``released_intercept_`` where ``inference=True`` replaced ``coef_``."""
    coef = getattr(est, "released_coef_", None)
    coef = np.asarray(est.coef_ if coef is None else coef, float)
    if not est.fit_intercept:
        return coef
    intercept = getattr(est, "released_intercept_", None)
    return np.append(coef, float(est.intercept_ if intercept is None else intercept))


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


def _shrunk_gram(spec, gram):
    """The Gram matrix of the simulated design, estimated from its release: the
    features' covariance ``C = gram / n - mu mu^T`` with its spectrum shrunk for the
    noise's spread (:func:`~skdp.utils._inference.shrunk_spectrum`; each entry of
    ``gram / n`` carries noise of standard deviation ``entry_sd / n``) and the features'
    mean ``mu`` shrunk towards 0 by the positive-part James-Stein factor ``1 - p
    (entry_sd / n)^2 / ||mu||^2`` (its noise otherwise adds ``p (entry_sd / n)^2`` to
    ``||mu||^2`` and couples the simulated intercept to the slopes)."""
    p, n = spec.p, spec.n
    sd = spec.entry_sd / n
    mu = gram[:p, p] / n
    C = shrunk_spectrum(gram[:p, :p] / n - np.outer(mu, mu), sd, max(sd, MIN_FEATURE_VARIANCE))
    mu = mu * max(0.0, 1.0 - p * sd**2 / max(float(mu @ mu), 1e-300))
    G = np.array(gram, float)
    G[:p, :p] = n * (C + np.outer(mu, mu))
    G[:p, p] = G[p, :p] = n * mu
    return G


def _ridge(spec, M, lam_tilde, variance, lam_matrix=None):
    """The ridge of each replicate (the rule of ``_adaptive_ridge`` and ``_ridge_factor``
    of :mod:`skdp.linear_model._functional_release`, batched)."""
    if not spec.adaptive:
        return np.full(M.shape[0], spec.fixed_ridge)
    sd, d, n, p = spec.entry_sd, M.shape[1], spec.n, spec.p
    if lam_matrix is None:  # the smallest eigenvalue of each M
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


def _solve(A, c, eig=None):
    """The trimmed minimiser of each replicate (``_trimmed_minimiser``, batched)."""
    lam, V = np.linalg.eigh(A) if eig is None else eig  # eig: that of A, if known
    keep = lam >= EIGENVALUE_THRESHOLD
    proj = np.einsum("bji,bj->bi", V, c)
    g = np.where(keep, proj / np.where(keep, lam, 1.0), 0.0)
    return np.einsum("bij,bj->bi", V, g)


def _moments(spec, sum_y, sum_sq, noise):
    """The private mean and variance of each replicate's scaled target from its exact
    ``sum y~`` and ``sum y~^2`` (``noise``: the replicates' unit Laplace draws, shape
    ``(2, b)``), as ``_release_target_moments`` releases them."""
    n = spec.n
    noisy_sum = sum_y + spec.centre_scale * noise[0]
    noisy_sq = sum_sq - 0.5 * n + spec.centre_scale * noise[1]
    mean = np.clip(noisy_sum / n, -1.0, 1.0)
    var = np.maximum(noisy_sq / n + 0.5 - mean**2, max(1.0 / (n * spec.eps_centre), 1e-4))
    return mean, np.minimum(var, 1.0)


def _draws(spec, b, n, d, rng, rows):
    """One chunk's random numbers, shared by every model simulated on it (common random
    numbers: the differences between models are smooth in the model). ``rows``: the
    residuals of every row; otherwise those of the sufficient statistics only (``z``,
    the whitened ``X~^T e``, and ``chi2``, the rest of ``||e||^2``)."""
    unit = rng.standard_normal if spec.gaussian else functools.partial(rng.laplace, 0.0, 1.0)
    z = {
        "centre": rng.laplace(0.0, 1.0, (2, b)),
        "target": spec.scale * unit(size=(b, d)) / spec.weight,
        "gram": spec.scale * unit(size=(b, d * (d + 1) // 2 - 1)),
        "eigenvalue": spec.eig_scale * unit(size=b),
    }
    if rows:
        z["e"] = rng.standard_normal((b, n), dtype=np.float32)
    else:
        z["z"] = rng.standard_normal((b, d))
        z["chi2"] = rng.chisquare(max(n - d, 1), size=b)
    return z


def _from_rows(spec, X1, slope, a, sigma, z):
    """``(mean, var, X~^T u)`` of each replicate from its simulated, clipped rows."""
    # the rows in float32 (the sums are accumulated pairwise: relative error ~1e-7)
    Y = z["e"] * np.float32(sigma)
    Y += (X1[:, : spec.p] @ slope + a).astype(np.float32)
    np.clip(Y, -1.0, 1.0, out=Y)
    sum_y = Y.sum(axis=1, dtype=np.float64)
    mean, var = _moments(spec, sum_y, np.einsum("bi,bi->b", Y, Y, dtype=np.float64), z["centre"])
    U = Y
    U -= mean[:, None].astype(np.float32)
    np.clip(U, -1.0, 1.0, out=U)
    return mean, var, (U @ X1.astype(np.float32)).astype(np.float64)


def _from_sums(spec, G, root, slope, a, sigma, z):
    """``(mean, var, X~^T u)`` of each replicate drawn exactly at the level of the
    sufficient statistics, valid where the model clips no target: with ``Y = X1 beta +
    sigma e``, ``X1^T e = R z`` (``R R^T = G``, ``z`` standard normal) and ``||e||^2 =
    ||z||^2 + chi2_(n - d')``, independent. Costs ``O(d'^2)`` per replicate, not ``O(n)``."""
    beta = np.append(slope, a)
    Gb = G @ beta
    Xe = z["z"] @ root.T
    XtY = Gb + sigma * Xe
    sum_sq = beta @ Gb + 2.0 * sigma * (Xe @ beta)
    sum_sq += sigma**2 * (np.einsum("bi,bi->b", z["z"], z["z"]) + z["chi2"])
    mean, var = _moments(spec, XtY[:, -1], sum_sq, z["centre"])
    return mean, var, XtY - mean[:, None] * G[:, -1]


def _mechanism(spec, design, theta, sigma, z):
    """The mechanism on one chunk of simulated data sets (draws ``z``) from the model
    ``theta``: ``(coef, intercept)`` of each replicate in original units."""
    p, n, d = spec.p, spec.n, spec.p + 1
    rows, cols = _gram_index(d, True)
    slope, a = spec.to_scaled(theta)
    G = design.gram
    if "e" in z:
        mean, var, XtU = _from_rows(spec, design.rows, slope, a, sigma, z)
    else:
        mean, var, XtU = _from_sums(spec, G, design.root, slope, a, sigma, z)
    c = XtU + z["target"]
    M = np.broadcast_to(G, (mean.shape[0], d, d)).copy()
    M[:, rows, cols] += z["gram"]
    M[:, cols, rows] = M[:, rows, cols]
    M[:, d - 1, d - 1] = n
    if spec.gaussian:
        shift = spec.eig_scale * float(ndtri(1.0 - EIGENVALUE_TAIL))
    else:
        shift = spec.eig_scale * math.log(1.0 / (2.0 * EIGENVALUE_TAIL))
    lam_tilde = np.maximum(design.min_eigenvalue + z["eigenvalue"] - shift, 0.0)
    lam, V = np.linalg.eigh(M)  # M + ridge I has the eigenvalues lam + ridge
    ridge = _ridge(spec, M, lam_tilde, var, lam[:, 0])
    w = _solve(None, c, (lam + ridge[:, None], V))
    sc = spec.scaling
    coef = w[:, :p] * sc.ax / sc.ay
    intercept = (w[:, :p] @ sc.cx + w[:, p] - sc.cy + mean) / sc.ay
    return np.column_stack([coef, intercept])


@dataclass(frozen=True)
class _Design:
    """The simulated design (``n`` scaled rows with the column of ones), its Gram
    matrix, a root of it and its smallest eigenvalue; ``exact``: the replicates are
    drawn at the level of the sufficient statistics (the model clips no target)."""

    rows: np.ndarray
    gram: np.ndarray
    root: np.ndarray
    min_eigenvalue: float
    exact: bool = False

    @classmethod
    def of(cls, X1, exact=False):
        G = X1.T @ X1
        lam, V = np.linalg.eigh(G)
        root = V * np.sqrt(np.maximum(lam, 0.0))
        return cls(X1, G, root, float(lam[0]), bool(exact))


def replicates(spec, design, thetas, sigmas, n_rep, rng):
    """``n_rep`` releases of the whole mechanism on data simulated from each linear model
    ``y~ = clip(slope x~ + a + sigma e, -1, 1)`` in ``thetas`` (original units) on the
    design: centring, noisy statistics, private eigenvalue, ridge and solve, with the
    same random numbers for every model (``sigmas``: the residual standard deviation of
    each, or one for all). Returns shape ``(len(thetas), n_rep, p + 1)``."""
    n, d = spec.n, spec.p + 1
    sigmas = np.broadcast_to(np.asarray(sigmas, float), (len(thetas),))
    out = []
    step = CHUNK // (4 * d * d) if design.exact else max(1, CHUNK // max(n, 1))
    for start in range(0, n_rep, step):
        z = _draws(spec, min(step, n_rep - start), n, d, rng, rows=not design.exact)
        out.append([_mechanism(spec, design, t, s, z) for t, s in zip(thetas, sigmas, strict=True)])
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


def _residual_sd(spec, X1, theta, variance, exact=False):
    """The residual standard deviation of the simulated target (scaled units): the one
    whose simulated target, clipped to its bounds, has the target's private variance
    (bisection; in closed form where the model clips nothing, ``exact``; at least
    ``MIN_RESIDUAL_SHARE`` of that variance)."""
    slope, a = spec.to_scaled(theta)
    mu = X1[:, : spec.p] @ slope + a
    lo_sd, hi_sd = math.sqrt(MIN_RESIDUAL_SHARE * variance), 4.0
    plain = min(max(math.sqrt(max(variance - float(mu.var()), 0.0)), lo_sd), hi_sd)
    if exact or _clipped_count(mu, plain) < CLIP_NEGLIGIBLE:  # nothing clips
        return plain
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


def _linearised(spec, design, theta, variance, n_bootstrap, rng):
    """The mean map ``m(theta)`` of the mechanism, its Jacobian and the replicates'
    covariance at ``theta``. Every model keeps the target's private variance (its
    residual standard deviation is :func:`_residual_sd`). The Jacobian is a finite
    difference of one standard deviation of a pilot run, on ``n_bootstrap / 4``
    replicates with common random numbers (the differences are smooth); the mean and
    covariance use ``n_bootstrap``."""
    k = theta.size
    sigma = _residual_sd(spec, design.rows, theta, variance, design.exact)
    pilot = replicates(spec, design, [theta], sigma, PILOT, rng)[0]
    h = np.maximum(pilot.std(axis=0), 1e-12)
    steps = [theta + h[j] * np.eye(k)[j] for j in range(k)]
    sigmas = [sigma] + [_residual_sd(spec, design.rows, t, variance, design.exact) for t in steps]
    moved = replicates(spec, design, [theta, *steps], sigmas, max(PILOT, n_bootstrap // 4), rng)
    J = (moved[1:].mean(axis=1) - moved[0].mean(axis=0)).T / h
    base = replicates(spec, design, [theta], sigma, n_bootstrap, rng)[0]
    return base.mean(axis=0), J, np.cov(base, rowvar=False)


def _stable_inverse(J):
    """``J^-1`` with the singular values of ``J`` floored at ``MIN_GAIN`` (a mechanism
    that shrinks a direction to almost nothing gives a wide, not an infinite, interval)."""
    U, S, Vt = np.linalg.svd(J)
    return (Vt.T / np.maximum(S, MIN_GAIN)) @ U.T


def _clipped_count(mu, sigma):
    """Expected number of targets ``mu_i + sigma e`` clipped to ``[-1, 1]``, and again
    after centring: where it is below ``CLIP_NEGLIGIBLE`` nothing clips in effect, and
    the replicates are drawn at the level of the sufficient statistics."""
    centred = mu - mu.mean()
    tails = special.ndtr((-1.0 - mu) / sigma) + special.ndtr((mu - 1.0) / sigma)
    tails += special.ndtr((-1.0 - centred) / sigma) + special.ndtr((centred - 1.0) / sigma)
    return float(tails.sum())


def _clipped_rows(spec, X1, theta, sigma):
    """:func:`_clipped_count` of the model ``theta`` on the design ``X1``."""
    slope, a = spec.to_scaled(theta)
    return _clipped_count(X1[:, : spec.p] @ slope + a, sigma)


def _setup(est, rng):
    """``(spec, design, estimate, variance)``: the data model fitted to the releases."""
    spec = _Spec.of(est)
    stats = est.released_statistics_
    X1 = _design(_shrunk_gram(spec, stats["gram"]), spec.n, spec.p, rng)
    variance = float(stats["target_variance"])
    estimate = _released_estimate(est)
    sigma = _residual_sd(spec, X1, estimate, variance)
    exact = _clipped_rows(spec, X1, estimate, sigma) < CLIP_NEGLIGIBLE
    return spec, _Design.of(X1, exact), estimate, variance


def _spread(spec, design, theta, variance, n_bootstrap, rng):
    """The covariance of ``n_bootstrap`` releases of the mechanism on data simulated
    from the model ``theta`` (rows simulated where that model clips targets)."""
    sigma = _residual_sd(spec, design.rows, theta, variance)
    if design.exact and _clipped_rows(spec, design.rows, theta, sigma) >= CLIP_NEGLIGIBLE:
        design = _Design.of(design.rows, exact=False)  # the model clips: simulate rows
    elif design.exact:
        sigma = _residual_sd(spec, design.rows, theta, variance, exact=True)
    return np.cov(replicates(spec, design, [theta], sigma, n_bootstrap, rng)[0], rowvar=False)


def bootstrap(est, n_bootstrap, rng):
    """``(centre, se)`` of each coefficient (``coef_`` then ``intercept_``): the
    parametric bootstrap inverted through the linearised mean map of the mechanism at
    the estimate; the standard error is the delta method's of that centre, ``J^-1``
    (the Jacobian at the estimate, the one the centre applies) times the spread of the
    releases at the bias-corrected model (Notes of :meth:`conf_int`).
    ``n_bootstrap=None``: ``N_BOOTSTRAP_EXACT``, fewer where rows are simulated."""
    spec, design, estimate, variance = _setup(est, rng)
    if n_bootstrap is None:
        n_bootstrap = N_BOOTSTRAP_EXACT
        if not design.exact:
            n_bootstrap = min(n_bootstrap, max(N_BOOTSTRAP_ROWS, ROWS_BUDGET // spec.n))
    mean, J, _ = _linearised(spec, design, estimate, variance, n_bootstrap, rng)
    J_inv = _stable_inverse(J)
    centre = estimate + J_inv @ (estimate - mean)
    cov = _spread(spec, design, centre, variance, n_bootstrap, rng)
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
