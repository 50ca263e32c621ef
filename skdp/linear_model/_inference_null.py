"""The p-values of ``summary`` for :class:`DPLinearRegression` and
:class:`DPLogisticRegression`: a parametric bootstrap test of ``coefficient = 0`` through
the mechanism under the null (:doc:`/inference`), separate from the interval.

For each coefficient ``j`` the release is simulated under the restricted model
(coefficient ``j`` set to 0, the others at the interval's centre, the nuisance facts as
``conf_int`` fits them), and the p-value is the two-sided tail probability of the
released estimate of ``j`` among the simulated ones (the parametric bootstrap test of
Alabi & Vadhan 2022 for differentially private linear regression, with the mechanism of
Ferrando, Wang & Sheldon 2022). Linear regression conditions on the released Gram
matrix, whose distribution does not involve the coefficients; logistic regression
re-runs the linearised mechanism of its interval. Post-processing of released values
only.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = [
    "NULL_TEST_REFERENCES",
    "N_NULL",
    "linear_null_pvalues",
    "logistic_null_pvalues",
    "tail_pvalues",
]

#: the References of the null test in the summary docstrings (``insert_docs``)
NULL_TEST_REFERENCES = """\
D. Alabi, S. Vadhan. "Hypothesis testing for differentially private linear
regression." NeurIPS 2022.

A. C. Davison, D. V. Hinkley. "Bootstrap Methods and their Application."
Cambridge University Press, 1997."""
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


def _noise_draws(spec, d, n_null, rng):
    """The release's noise of each null draw: the sampling part ``z`` (standard normal,
    whitened), the noise of ``X~^T u`` and of the Gram matrix (``E'``, symmetric,
    without the public corner ``n``) and of the private mean of the target."""
    from skdp.linear_model._functional_release import _gram_index

    def unit(size):
        return rng.standard_normal(size) if spec.gaussian else rng.laplace(0.0, 1.0, size)

    rows, cols = _gram_index(d, True)
    E = np.zeros((n_null, d, d))
    E[:, rows, cols] = spec.scale * unit((n_null, rows.size))
    E[:, cols, rows] = E[:, rows, cols]
    return {
        "z": rng.standard_normal((n_null, d)),
        "target": spec.scale * unit((n_null, d)) / spec.weight,
        "gram": E,
        "centre": spec.centre_scale * rng.laplace(0.0, 1.0, n_null) / spec.n,
    }


def linear_null_pvalues(est, spec, design, centre, estimate, variance, n_null, rng):
    """p-values of ``coefficient = 0`` (``coef_`` then the intercept) of a
    :class:`DPLinearRegression` fit, conditional on the released Gram matrix ``M`` and
    ridge ``r`` (``M`` is ``X~^T X~`` plus noise: its distribution does not involve the
    coefficients). Under each restricted model ``beta`` (``centre`` with entry ``j``
    set to 0, in scaled units) the released ``X~^T u`` is drawn as ``M beta`` less the
    centring, plus the sampling part ``sigma R z`` (``R R^T`` the data model's Gram
    matrix, ``sigma`` the residual standard deviation that keeps the target's private
    variance), the noise of the release, and ``E' beta`` with ``E'`` a fresh draw of the
    Gram matrix's noise (the data's ``X~^T X~`` is ``M`` less that noise); each draw is
    solved with the released ``M + r I`` as the fit solved it, mapped to original units,
    and the released estimate's two-sided tail among the draws is the p-value
    (:func:`tail_pvalues`). Common random numbers across the restricted models."""
    from skdp.linear_model._inference_linear import _residual_sd, _solve

    M = np.asarray(est.released_statistics_["gram"], float)
    n, p, d, sc = spec.n, spec.p, M.shape[0], spec.scaling
    lam, V = np.linalg.eigh(M)
    eig = (np.broadcast_to(lam + float(est.regularization_), (n_null, d)),)
    eig += (np.broadcast_to(V, (n_null, d, d)),)
    draw = _noise_draws(spec, d, n_null, rng)
    null = np.empty((n_null, centre.size))
    for j in range(centre.size):
        theta = np.where(np.arange(centre.size) == j, 0.0, centre)
        slope, a = spec.to_scaled(theta)
        beta = np.append(slope, a)
        sigma = _residual_sd(spec, design.rows, theta, variance, design.exact)
        Xe = sigma * draw["z"] @ design.root.T
        mean = (M[d - 1] @ beta + Xe[:, d - 1]) / n + draw["centre"]
        c = M @ beta + Xe + draw["target"] + draw["gram"] @ beta - mean[:, None] * M[:, d - 1]
        w = _solve(None, c, eig)
        if j < p:
            null[:, j] = w[:, j] * sc.ax[j] / sc.ay
        else:
            null[:, j] = (w[:, :p] @ sc.cx + w[:, p] - sc.cy + mean) / sc.ay
    return tail_pvalues(estimate, null)


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
