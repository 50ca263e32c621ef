"""Simulators for published experiments (numpy only; layer 0).

The nonlinear model of Su, Wang, Schiavazzi & Liu (2023), §4.2, Eq. (11)-(13), as the
authors' ``RegressionModels.py`` generates it.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

from skdp.utils._random import make_rng
from skdp.utils.validation import check_n_samples

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
    check_n_samples(n_samples, 9)
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


def make_longitudinal_ehr(
    n_patients=500,
    *,
    mean_visits=4.0,
    max_visits=20,
    n_features=4,
    noise=1.0,
    random_state=None,
):
    """Simulate an EHR-like table with several rows (visits) per patient.

    Patient ``i`` has ``1 + Poisson(mean_visits - 1)`` visits (capped at
    ``max_visits``), a baseline age ``U(18, 85)``, a sex ``Bernoulli(0.5)`` and a patient
    effect ``u_i ~ N(0, 1)``. At visit ``t`` (years since the first, about 0.5 apart) the
    patient is ``age + t`` years old and the other ``n_features - 2`` covariates are
    lab-like values ``N(mu_j + 0.3 u_i + 0.2 t, 1)`` drifting over the visits, all
    clipped to their documented ranges (age 18-100, labs ``mu_j +- 6``). The outcome is
    ``y = 50 + 0.4 (age - 50) + 5 sex + 2 sum_j lab_j + 4 u_i + N(0, noise^2 * 25)``
    clipped to ``[0, 150]``, and a binary event ``y > 60`` (about a quarter of the
    rows).

    Parameters
    ----------
    n_patients : int, default=500
    mean_visits : float, default=4.0
        Mean number of visits per patient (at least 1).
    max_visits : int, default=20
        Largest number of visits of one patient (the protocol's cap).
    n_features : int, default=4
        Number of covariates (at least 2: age and sex, then labs).
    noise : float, default=1.0
        Scale of the outcome noise.
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    X : ndarray of shape (n_rows, n_features)
        Columns ``age, sex, lab_1, ...``.
    y : ndarray of shape (n_rows,)
        The continuous outcome.
    event : ndarray of shape (n_rows,)
        ``(y > 60)`` as 0/1.
    groups : ndarray of shape (n_rows,)
        The patient id of each row (``0 .. n_patients - 1``).

    Notes
    -----
    The documented ranges are public bounds for the DP estimators:
    ``LONGITUDINAL_EHR_BOUNDS(n_features)`` returns them (the outcome's is ``(0, 150)``).

    Examples
    --------
    >>> from skdp.datasets import make_longitudinal_ehr
    >>> X, y, event, groups = make_longitudinal_ehr(50, random_state=0)
    >>> X.shape[1], len(set(groups)) == 50, X.shape[0] == y.shape[0] == groups.shape[0]
    (4, True, True)
    """
    if int(n_patients) < 1:
        raise ValueError("n_patients must be at least 1")
    if not 1.0 <= float(mean_visits) <= float(max_visits):
        raise ValueError("mean_visits must be in [1, max_visits]")
    if int(n_features) < 2:
        raise ValueError("n_features must be at least 2 (age and sex)")
    rng = np.random.default_rng(random_state)
    n, p = int(n_patients), int(n_features)
    visits = np.minimum(1 + rng.poisson(float(mean_visits) - 1.0, n), int(max_visits))
    groups = np.repeat(np.arange(n), visits)
    first = np.repeat(np.cumsum(visits) - visits, visits)
    t = 0.5 * (np.arange(groups.shape[0]) - first) + rng.uniform(0.0, 0.25, groups.shape[0])
    age0, sex, u = rng.uniform(18, 85, n), rng.integers(0, 2, n), rng.normal(0, 1, n)
    age = np.clip(age0[groups] + t, 18, 100)
    mu = np.linspace(-1.0, 1.0, p - 2) if p > 2 else np.zeros(0)
    labs = mu + 0.3 * u[groups, None] + 0.2 * t[:, None] + rng.normal(0, 1, (len(t), p - 2))
    labs = np.clip(labs, mu - 6.0, mu + 6.0)
    X = np.column_stack([age, sex[groups].astype(float), labs])
    y = 50 + 0.4 * (age - 50) + 5 * X[:, 1] + 2 * labs.sum(axis=1) + 4 * u[groups]
    y = np.clip(y + rng.normal(0, 5 * float(noise), len(t)), 0, 150)
    return X, y, (y > 60).astype(int), groups


def LONGITUDINAL_EHR_BOUNDS(n_features=4):  # noqa: N802 - a table of constants
    """Public bounds ``(lo, hi)`` arrays of :func:`make_longitudinal_ehr`'s columns."""
    p = int(n_features)
    mu = np.linspace(-1.0, 1.0, p - 2) if p > 2 else np.zeros(0)
    return np.r_[18.0, 0.0, mu - 6.0], np.r_[100.0, 1.0, mu + 6.0]
