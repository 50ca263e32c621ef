"""Shared pieces of the noise-aware intervals (:doc:`/inference`): the check of ``alpha``,
the seed of the post-processing bootstrap, the spectrum of a noisy symmetric release, the
interval and p-value read off simulated draws and the statsmodels-like summary table."""

from __future__ import annotations

import hashlib
import math
from numbers import Real

import numpy as np
from scipy import stats


def check_alpha(alpha):
    """``alpha`` as a float in ``(0, 1)``, or a ``ValueError``/``TypeError`` naming it."""
    if isinstance(alpha, bool) or not isinstance(alpha, Real):
        raise TypeError(f"alpha must be a real number in (0, 1), got {type(alpha).__name__}")
    alpha = float(alpha)
    if not (0.0 < alpha < 1.0):
        raise ValueError("alpha must lie strictly between 0 and 1 (e.g. 0.05 for 95 % intervals)")
    return alpha


def check_n_bootstrap(n_bootstrap):
    """``n_bootstrap`` as an int >= 50, or a clear error naming it."""
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)):
        raise TypeError("n_bootstrap must be an int")
    if n_bootstrap < 50:
        raise ValueError("n_bootstrap must be at least 50")
    return int(n_bootstrap)


def bootstrap_rng(random_state, *released):
    """The generator of the post-processing bootstrap.

    ``None``: seeded from a hash of the released values only (public), so the interval
    of a fitted model is the same on every call and after a pickle round trip, and no
    seed material needs to be stored. Otherwise ``numpy.random.default_rng(random_state)``.
    """
    if random_state is not None:
        return np.random.default_rng(random_state)
    h = hashlib.sha256(b"skdp-conf-int")
    for value in released:
        h.update(np.ascontiguousarray(np.asarray(value, dtype=np.float64)).tobytes())
    return np.random.default_rng(int.from_bytes(h.digest()[:16], "little"))


def shrunk_spectrum(P, noise_sd, floor):
    """The symmetric matrix estimated from its release ``P``, which carries independent
    noise of standard deviation ``noise_sd`` on each entry of its upper triangle
    (diagonal included).

    Noise spreads eigenvalues (the smallest fall, the largest rise), so a model built on
    ``P`` itself overstates the ill-conditioning. The eigenvectors are kept and the
    eigenvalues ``l`` moved towards their mean by the factor that removes the noise's
    expected share of their spread: ``E sum_i (l_i(P) - mean)^2 = sum_i (l_i(G) -
    mean)^2 + (d^2 - 1) noise_sd^2`` for ``P = G + E`` (the squared Frobenius norm of the
    trace-free part; the noise has mean 0), so the factor is ``sqrt(max(0, 1 - (d^2 - 1)
    noise_sd^2 / spread))``, the eigenvalue analogue of James-Stein and Ledoit-Wolf
    shrinkage. The mean eigenvalue (the trace, unbiased) is kept, and it and every
    eigenvalue are floored at ``floor``. Post-processing of ``P`` and public scales."""
    P = np.asarray(P, float)
    d = P.shape[0]
    lam, V = np.linalg.eigh(0.5 * (P + P.T))
    dev = lam - lam.mean()
    spread = float(dev @ dev)
    excess = (d * d - 1) * float(noise_sd) ** 2
    factor = math.sqrt(max(0.0, 1.0 - excess / spread)) if spread > 0.0 else 0.0
    level = max(float(lam.mean()), floor)
    return (V * np.maximum(level + factor * dev, floor)) @ V.T


def draws_p(draws):
    """The two-sided p-value of ``coefficient = 0`` among draws (rows): twice the smaller
    share of draws on either side of 0, at least ``1 / m`` for ``m`` draws."""
    m = draws.shape[0]
    share = np.minimum((draws <= 0).sum(axis=0), (draws >= 0).sum(axis=0)) / m
    return np.clip(2.0 * share, 1.0 / m, 1.0)


def draws_table(draws, alpha):
    """``(se, lower, upper, p)`` of coefficients from draws of them (rows): the ``alpha/2``
    and ``1 - alpha/2`` quantiles (inverted distribution function), ``p`` of
    :func:`draws_p` (so ``p < alpha`` exactly when the interval excludes 0), ``se`` half
    the central 68 % range."""
    lower, upper = np.quantile(
        draws, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0, method="inverted_cdf"
    )
    q16, q84 = np.quantile(draws, [0.158655, 0.841345], axis=0)
    return (q84 - q16) / 2.0, lower, upper, draws_p(draws)


def normal_table(estimate, centre, se, alpha):
    """``(lower, upper, p)``: the normal interval ``centre -+ z se`` and the two-sided
    p-value of ``coefficient = 0`` (``se = inf``: the whole line, p = 1)."""
    z = float(stats.norm.ppf(1.0 - alpha / 2.0))
    centre, se = np.asarray(centre, float), np.asarray(se, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        lower, upper = centre - z * se, centre + z * se
        stat = np.where(se > 0, np.abs(centre) / np.where(se > 0, se, 1.0), np.inf)
    p = 2.0 * stats.norm.sf(stat)
    p = np.where(np.isinf(se), 1.0, np.where(se > 0, p, np.where(centre == 0, 1.0, 0.0)))
    lower = np.where(np.isinf(se), -np.inf, lower)
    upper = np.where(np.isinf(se), np.inf, upper)
    return lower, upper, p


def t_table(centre, se, alpha, df):
    """``(lower, upper, p)`` with Student's ``t`` on ``df`` degrees of freedom (the
    non-private ordinary least squares interval of statsmodels)."""
    q = float(stats.t.ppf(1.0 - alpha / 2.0, df))
    with np.errstate(invalid="ignore", divide="ignore"):
        stat = np.abs(centre) / se
    p = 2.0 * stats.t.sf(stat, df)
    return centre - q * se, centre + q * se, p


def coefficient_names(est, n_coef, intercept):
    """``feature_names_in_`` (else ``x0, x1, ...``), then ``"intercept"``."""
    names = getattr(est, "feature_names_in_", None)
    names = [str(c) for c in names] if names is not None else [f"x{j}" for j in range(n_coef)]
    return names + (["intercept"] if intercept else [])


def summary_frame(names, estimate, se, lower, upper, p, alpha):
    """The summary ``DataFrame`` (statsmodels' column layout)."""
    import pandas as pd

    lo_name = f"[{alpha / 2:.3g}".rstrip("0")
    hi_name = f"{1 - alpha / 2:.3g}]"
    return pd.DataFrame(
        {
            "coef": np.asarray(estimate, float),
            "std err": np.asarray(se, float),
            lo_name: np.asarray(lower, float),
            hi_name: np.asarray(upper, float),
            "P>|z|": np.asarray(p, float),
        },
        index=pd.Index(names, name="feature"),
    )


def infinite_rows(k):
    """``(se, lower, upper, p)`` for ``k`` coefficients about which the release says
    nothing (e.g. the private mean only)."""
    inf = np.full(k, math.inf)
    return inf, -inf, inf.copy(), np.ones(k)
