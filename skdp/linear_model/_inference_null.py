"""The p-values of ``summary`` for :class:`DPLinearRegression` and
:class:`DPLogisticRegression`: a parametric bootstrap test of ``coefficient = 0`` through
the mechanism under the null (:doc:`/inference`).

For each coefficient ``j`` the mechanism is re-run on data simulated from the restricted
model (coefficient ``j`` set to 0, the others at the interval's centre, the nuisance
facts as ``conf_int`` fits them), and the p-value is the two-sided tail probability of
the released estimate of ``j`` in those simulated releases (Alabi & Vadhan 2022, for
differentially private linear regression; Ferrando, Wang & Sheldon 2022). Everything is
post-processing of released values: the same data model as the interval, no data.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["N_NULL", "linear_null_pvalues", "logistic_null_pvalues", "tail_pvalues"]

#: simulated releases per coefficient under its null
N_NULL = 1000
#: empirical p-values below this many ``1 / (B + 1)`` take the normal tail where smaller
TAIL_RESOLUTION = 20


def tail_pvalues(observed, null):
    """Two-sided tail p-values of ``observed`` (shape ``(k,)``) in the simulated null
    releases ``null`` (shape ``(B, k)``): ``2 min(P(T* <= t), P(T* >= t))`` with the
    ``+1`` correction (Davison & Hinkley 1997, section 4.2), capped at 1. Below
    ``TAIL_RESOLUTION / (B + 1)``, where few replicates are left to count, the smaller
    of that and the two-sided normal tail of ``t`` in the replicates' mean and standard
    deviation (so a clear effect reads as the tiny p-value it is, not as ``2 / (B +
    1)``); whether ``p < alpha`` is unchanged for any ``alpha`` above that cut."""
    null = np.asarray(null, float)
    observed = np.asarray(observed, float)
    b = null.shape[0]
    below = (np.sum(null <= observed, axis=0) + 1.0) / (b + 1.0)
    above = (np.sum(null >= observed, axis=0) + 1.0) / (b + 1.0)
    p = np.minimum(1.0, 2.0 * np.minimum(below, above))
    sd = null.std(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.abs(observed - null.mean(axis=0)) / sd
    normal = np.where(sd > 0, 2.0 * stats.norm.sf(z), p)
    return np.where(p < TAIL_RESOLUTION / (b + 1.0), np.minimum(p, normal), p)


def studentized(spec, M, ridge, eig, w, variance):
    """``w_j / se_j`` of the slopes of each (stacked) release, with the plug-in standard
    error read off that release alone: ``A^+ (s2 M + v_c I + v_G ||w||^2 I) A^+``,
    ``A = M + ridge I`` (``eig``: its eigendecomposition; trimmed as the solve),
    ``s2`` the residual variance (the private variance of the target less what the
    slopes explain, at least ``MIN_RESIDUAL_SHARE`` of it), ``v_c`` and ``v_G`` the
    variances of the noise of one entry of ``X~^T u`` and of ``X~^T X~``. Studentising
    by the release's own noisy Gram matrix and ridge makes the statistic nearly free of
    the scale errors of the simulated design (the pivot of the null test)."""
    from skdp.linear_model._functional_release import EIGENVALUE_THRESHOLD
    from skdp.linear_model._inference_linear import MIN_RESIDUAL_SHARE

    lam, V = eig
    n, p, d = spec.n, spec.p, M.shape[-1]
    keep = lam >= EIGENVALUE_THRESHOLD
    inv = np.where(keep, 1.0 / np.where(keep, lam, 1.0), 0.0)
    A_inv = np.einsum("bij,bj,bkj->bik", V, inv, V)
    mean = M[:, :p, d - 1] / n
    cov = M[:, :p, :p] / n - mean[:, :, None] * mean[:, None, :]
    slopes = w[:, :p]
    explained = np.einsum("bi,bij,bj->b", slopes, cov, slopes)
    s2 = np.maximum(variance - explained, MIN_RESIDUAL_SHARE * variance)
    factor = 1.0 if spec.gaussian else 2.0
    v_c = factor * (spec.scale / spec.weight) ** 2
    extra = v_c + spec.entry_sd**2 * np.einsum("bi,bi->b", w, w)
    S = s2[:, None, None] * M + extra[:, None, None] * np.eye(d)
    var_w = np.einsum("bij,bjk,bik->bi", A_inv, S, A_inv)
    return slopes / np.sqrt(np.maximum(var_w[:, :p], np.finfo(float).tiny))


def observed_statistics(est, spec, estimate):
    """The statistics of the fit's own release that the null test compares: the slopes
    studentised as :func:`studentized` (from the released ``X~^T X~``, ``X~^T u``,
    ridge and private variance of the target), then the released intercept."""
    from skdp.linear_model._inference_linear import _solve

    stats_ = est.released_statistics_
    M = np.asarray(stats_["gram"], float)[None]
    ridge = np.array([float(est.regularization_)])
    lam, V = np.linalg.eigh(M)
    eig = (lam + ridge[:, None], V)
    w = _solve(None, np.asarray(stats_["target"], float)[None], eig)
    t = studentized(spec, M, ridge, eig, w, float(stats_["target_variance"]))[0]
    return np.append(t, estimate[spec.p])


def linear_null_pvalues(est, spec, design, centre, estimate, variance, n_null, rng):
    """p-values of ``coefficient = 0`` (``coef_`` then the intercept) of a
    :class:`DPLinearRegression` fit: ``n_null`` releases of the whole mechanism at each
    restricted model ``centre`` with entry ``j`` set to 0, every model keeping the
    target's private variance (its residual standard deviation refitted), and the tail
    of the fit's own statistic ``j`` (:func:`observed_statistics`: a studentised slope,
    or the released intercept) among the same statistics of those releases (common
    random numbers across the models)."""
    from skdp.linear_model._inference_linear import (
        CLIP_NEGLIGIBLE,
        _clipped_rows,
        _Design,
        _residual_sd,
        replicates,
    )

    k = centre.size
    thetas = [np.where(np.arange(k) == j, 0.0, centre) for j in range(k)]
    sigmas = [_residual_sd(spec, design.rows, t, variance, design.exact) for t in thetas]
    if design.exact and any(
        _clipped_rows(spec, design.rows, t, s) >= CLIP_NEGLIGIBLE
        for t, s in zip(thetas, sigmas, strict=True)
    ):  # a restricted model clips: simulate rows
        design = _Design.of(design.rows, exact=False)
        sigmas = [_residual_sd(spec, design.rows, t, variance) for t in thetas]
    null = replicates(spec, design, thetas, sigmas, n_null, rng, student=True)  # (k, B, k)
    observed = observed_statistics(est, spec, estimate)
    return tail_pvalues(observed, np.stack([null[j, :, j] for j in range(k)], axis=1))


def logistic_null_pvalues(w, H_hat, ridge, beta, h_scale, rng, A, n_null):
    """p-values of ``coefficient = 0`` (original units: the rows of ``A``) of one
    :class:`DPLogisticRegression` problem: ``n_null`` releases of the linearised
    mechanism (:mod:`skdp.linear_model._inference_logistic_boot`; the Fisher information
    of its model, the ridge, the noise rate and the Fisher release's scale as
    ``conf_int``'s) at each restricted model (``A theta0`` with entry ``j`` set to 0,
    mapped back), and the tail of the released ``(A w)[j]`` among them."""
    from skdp.linear_model._inference_logistic_boot import make_world

    world = make_world(H_hat, ridge, beta, h_scale, rng)
    k = w.shape[0]
    phi = A @ world.centre(H_hat, w)
    restricted = np.stack(
        [np.linalg.solve(A, np.where(np.arange(k) == j, 0.0, phi)) for j in range(k)]
    )
    H0 = np.broadcast_to(world.model(H_hat), (k, k, k))
    w_star, _ = world.simulate(H0, restricted, n_null)  # (k, B, k)
    null = np.stack([(w_star[j] @ A.T)[:, j] for j in range(k)], axis=1)
    return tail_pvalues(A @ w, null)
