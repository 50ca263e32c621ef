"""Simulators for published experiments (numpy only; layer 0).

The nonlinear model of Su, Wang, Schiavazzi & Liu (2023), §4.2, Eq. (11)-(13), as the
authors' ``RegressionModels.py`` generates it.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from skdp.utils._random import make_rng

__all__ = [
    "NONLINEAR_BETA_TRUE",
    "NONLINEAR_W_UPPER",
    "make_nonlinear_repeated_measures",
    "nonlinear_log_likelihood",
    "nonlinear_regression_function",
]

#: True coefficients ``(beta0, ..., beta4)`` of the simulated nonlinear model.
NONLINEAR_BETA_TRUE = (0.2, 1.0, 0.8, -1.2, 0.6)
#: Upper ends ``a_j`` of the covariates ``w_j ~ U(0, a_j)``, j = 1..4.
NONLINEAR_W_UPPER = (1.0, 3.0, 0.5, 2.0)
_N_REPEATS = 5


def nonlinear_regression_function(W, beta):
    """Regression function of the simulated nonlinear model (Su et al. 2023, Eq. (12)).

    ``f(w, beta) = beta0 + exp(beta1 w1) + log(w2 + exp(beta2)) + beta3 exp(w3)
    + log(w4 + exp(beta4))``.

    The paper's Eq. (12) prints the fourth term as ``exp(beta2 w3)``, which leaves ``beta3``
    unidentified; the data behind the paper's Table 6 were generated with ``beta3 exp(w3)``
    (the authors' ``RegressionModels.py``), which is what this function computes.

    Parameters
    ----------
    W : array-like of shape (n, 4)
        Covariates ``w1..w4``.
    beta : array-like of shape (5,) or (m, 5)
        Coefficients (one row per parameter vector).

    Returns
    -------
    ndarray of shape (n,) or (m, n)

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.datasets import nonlinear_regression_function
    >>> float(nonlinear_regression_function(np.zeros((1, 4)), [0, 0, 0, 0, 0])[0])
    1.0
    """
    W = np.asarray(W, dtype=float)
    b = np.asarray(beta, dtype=float)
    if W.ndim != 2 or W.shape[1] != 4:
        raise ValueError(f"W must have shape (n, 4), got {W.shape}")
    if b.shape[-1] != 5 or b.ndim > 2:
        raise ValueError(f"beta must have shape (5,) or (m, 5), got {b.shape}")
    bb = b[..., None]  # (..., 5, 1) broadcasts against the n records
    w1, w2, w3, w4 = W.T
    return (
        bb[..., 0, :]
        + np.exp(bb[..., 1, :] * w1)
        + np.log(w2 + np.exp(bb[..., 2, :]))
        + bb[..., 3, :] * np.exp(w3)
        + np.log(w4 + np.exp(bb[..., 4, :]))
    )


def nonlinear_log_likelihood(X, beta, *, sigma=0.2, sigma0=0.2):
    """Per-subject log-likelihood ``log p(x_i | beta)`` of the simulated nonlinear model.

    The subject's five measurements are ``N_5(f(w_i, beta) 1, sigma^2 I + sigma0^2 1 1^T)``
    (the random effect ``r_i ~ N(0, sigma0^2)`` integrated out); ``sigma`` and ``sigma0`` are
    known constants, never estimated from the data (estimating them would leak).

    Parameters
    ----------
    X : array-like of shape (n, 9)
        Records ``[w1..w4, x1..x5]`` as returned by :func:`make_nonlinear_repeated_measures`.
    beta : array-like of shape (5,) or (m, 5)
    sigma, sigma0 : float, default=0.2

    Returns
    -------
    ndarray of shape (n,) or (m, n)

    Examples
    --------
    >>> from skdp.datasets import make_nonlinear_repeated_measures, nonlinear_log_likelihood
    >>> X = make_nonlinear_repeated_measures(10, random_state=0)
    >>> nonlinear_log_likelihood(X, [0.2, 1.0, 0.8, -1.2, 0.6]).shape
    (10,)
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != 4 + _N_REPEATS:
        raise ValueError(f"X must have shape (n, 9), got {X.shape}")
    s2, t2, k = float(sigma) ** 2, float(sigma0) ** 2, _N_REPEATS
    f = nonlinear_regression_function(X[:, :4], beta)
    r = X[:, 4:] - f[..., None]
    quad = ((r * r).sum(-1) - t2 / (s2 + k * t2) * r.sum(-1) ** 2) / s2
    logdet = k * math.log(s2) + math.log1p(k * t2 / s2)
    return -0.5 * (quad + logdet + k * math.log(2 * math.pi))


def make_nonlinear_repeated_measures(
    n_samples=6000, *, beta=NONLINEAR_BETA_TRUE, sigma=0.2, sigma0=0.2, random_state=None
):
    """Simulate the nonlinear repeated-measures data of Su et al. (2023), §4.2.

    For subject ``i``: covariates ``w_ij ~ U(0, a_j)`` with ``a = (1, 3, 0.5, 2)``, a random
    effect ``r_i ~ N(0, sigma0^2)`` and five measurements
    ``x_ik = f(w_i, beta) + r_i + e_ik``, ``e_ik ~ N(0, sigma^2)``, with ``f`` of
    :func:`nonlinear_regression_function` (Eq. (12) typo fixed: ``beta3 exp(w3)``).

    Parameters
    ----------
    n_samples : int, default=6000
        Number of subjects (one record, the privacy unit, per subject).
    beta : array-like of shape (5,), default=(0.2, 1.0, 0.8, -1.2, 0.6)
    sigma, sigma0 : float, default=0.2
        Measurement-noise and random-effect standard deviations.
    random_state : None, int, SeedSequence or Generator
        ``None`` draws fresh OS entropy.

    Returns
    -------
    X : ndarray of shape (n_samples, 9)
        Columns ``w1, w2, w3, w4, x1, ..., x5``.

    Examples
    --------
    >>> from skdp.datasets import make_nonlinear_repeated_measures
    >>> X = make_nonlinear_repeated_measures(100, random_state=0)
    >>> X.shape
    (100, 9)
    """
    if isinstance(n_samples, bool) or not isinstance(n_samples, Integral) or n_samples < 0:
        raise ValueError(f"n_samples must be a non-negative integer, got {n_samples!r}")
    for name, v in (("sigma", sigma), ("sigma0", sigma0)):
        if not isinstance(v, Real) or not (0 <= v < math.inf):
            raise ValueError(f"{name} must be a finite non-negative number")
    beta = np.asarray(beta, dtype=float)
    if beta.shape != (5,):
        raise ValueError(f"beta must have shape (5,), got {beta.shape}")
    rng = make_rng(random_state)
    n = int(n_samples)
    W = rng.uniform(0.0, 1.0, size=(n, 4)) * np.asarray(NONLINEAR_W_UPPER)
    r = rng.normal(0.0, float(sigma0), size=(n, 1))
    e = rng.normal(0.0, float(sigma), size=(n, _N_REPEATS))
    x = nonlinear_regression_function(W, beta)[:, None] + r + e
    return np.hstack([W, x])
