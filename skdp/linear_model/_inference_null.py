"""The p-values of ``summary`` for :class:`DPLogisticRegression`: a parametric bootstrap
test of ``coefficient = 0`` through the linearised mechanism under the null
(:ref:`inference-logistic`), separate from the interval.

For each coefficient ``j`` the release is simulated under the restricted model
(coefficient ``j`` set to 0, the others at the interval's centre, the nuisance facts as
``conf_int`` fits them), and the p-value is the two-sided tail probability of the
released estimate of ``j`` among the simulated ones (the parametric bootstrap test of
Alabi & Vadhan 2022, with the mechanism of Ferrando, Wang & Sheldon 2022).
Post-processing of released values only.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = [
    "NULL_TEST_REFERENCES",
    "N_NULL",
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
