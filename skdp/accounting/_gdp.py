"""Gaussian differential privacy (mu-GDP) and the CLT formula of the DP-NF paper.

The CLT formula ``mu = q sqrt(T (exp(1/sigma^2) - 1))`` is the limit of the composed
Poisson-subsampled Gaussian mechanism as ``T -> inf`` with ``q sqrt(T)`` fixed (Bu et
al. 2020). For finite ``T`` it is neither an upper nor a lower bound on the true
privacy curve and can *under*-state epsilon in the usual DP-SGD regime (Gopi, Lee and
Wutschitz 2021), so skdp keeps it for comparison with published numbers only and flags
it as approximate. The mu-GDP -> (epsilon, delta) conversion itself is exact.
"""

from __future__ import annotations

import math

from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtr, ndtri

from skdp.accounting._rdp import _check_real, _check_steps

__all__ = [
    "gdp_clt_mu",
    "gdp_clt_noise_multiplier",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu",
]


def gdp_clt_mu(*, noise_multiplier, sample_rate, steps):
    """CLT approximation of the mu-GDP of ``steps`` Poisson-subsampled Gaussian steps.

    ``mu = q * sqrt(T * (exp(1 / sigma^2) - 1))`` (Bu et al. 2020, Thm. 5; used by the
    DP-NF paper). An *approximation*, not a bound: see the module docstring.

    Parameters
    ----------
    noise_multiplier : float
        ``sigma`` >= 0 (``0`` gives ``inf`` unless nothing is sampled).
    sample_rate : float
        ``q`` in ``[0, 1]``.
    steps : int
        ``T`` >= 0.

    Returns
    -------
    mu : float

    References
    ----------
    .. [1] J. Dong, A. Roth, W. Su, "Gaussian Differential Privacy", JRSS-B 2022
       (arXiv:1905.02383, 2019).
    .. [2] Z. Bu, J. Dong, Q. Long, W. Su, "Deep Learning with Gaussian Differential
       Privacy", Harvard Data Science Review 2020.

    Examples
    --------
    >>> from skdp.accounting import gdp_clt_mu
    >>> round(gdp_clt_mu(noise_multiplier=7.36, sample_rate=0.5, steps=8000), 4)
    6.1044
    """
    sigma = _check_real(noise_multiplier, "noise_multiplier", low=0.0, allow_inf=True)
    q = _check_real(sample_rate, "sample_rate", low=0.0, high=1.0)
    steps = _check_steps(steps)
    return _mu_sq_per_step(sigma, q) ** 0.5 * math.sqrt(steps) if steps else 0.0


def _mu_sq_per_step(sigma, q):
    """``q^2 (exp(1/sigma^2) - 1)``, the CLT mu^2 contributed by one step."""
    if q == 0.0 or math.isinf(sigma):
        return 0.0
    if sigma == 0.0:
        return math.inf
    try:
        return q * q * math.expm1(1.0 / (sigma * sigma))
    except (OverflowError, ZeroDivisionError):  # sigma**2 overflows 1/x or underflows to 0
        return math.inf


def gdp_clt_noise_multiplier(*, mu, sample_rate, steps):
    """Invert :func:`gdp_clt_mu`: ``sigma = 1 / sqrt(log(1 + mu^2 / (q^2 T)))``.

    Examples
    --------
    >>> from skdp.accounting import gdp_clt_noise_multiplier, gdp_mu
    >>> mu = gdp_mu(32.0, 1e-2)  # the DP-NF paper's EHR setting
    >>> round(gdp_clt_noise_multiplier(mu=mu, sample_rate=0.5, steps=8000), 4)
    7.3585
    """
    mu = _check_real(mu, "mu", low=0.0, allow_inf=True)
    q = _check_real(sample_rate, "sample_rate", low=0.0, high=1.0)
    steps = _check_steps(steps)
    if q == 0.0 or steps == 0:
        raise ValueError("sample_rate and steps must be > 0 to invert the CLT formula.")
    if mu == 0.0:
        return math.inf
    if math.isinf(mu):
        return 0.0
    ratio = mu * mu / (q * q * steps) if q * q * steps > 0 else math.inf
    if ratio == 0.0:  # mu^2 underflows: log1p(r) ~ r, sigma ~ q sqrt(T) / mu (may be inf)
        return q * math.sqrt(steps) / mu
    if math.isfinite(ratio):
        return 1.0 / math.sqrt(math.log1p(ratio))
    # mu^2 / (q^2 T) beyond float64 (a tiny q): log1p(r) = log r + log1p(1/r), in logs
    log_r = 2.0 * math.log(mu) - 2.0 * math.log(q) - math.log(steps)
    return 1.0 / math.sqrt(log_r + math.log1p(math.exp(-log_r)))


def _log_delta(eps, mu):
    """``log delta(eps)`` for mu-GDP, stable for large eps (both terms tiny)."""
    l1 = float(log_ndtr(-eps / mu + mu / 2.0))
    l2 = eps + float(log_ndtr(-eps / mu - mu / 2.0))
    if l2 >= l1:  # rounding: the difference is below what float64 can represent
        return -math.inf
    return l1 + math.log1p(-math.exp(l2 - l1))


def gdp_delta(epsilon, mu):
    """delta(epsilon) of a mu-GDP mechanism (Dong, Roth & Su 2019, Cor. 2.13).

    ``delta = Phi(-eps/mu + mu/2) - exp(eps) Phi(-eps/mu - mu/2)``, evaluated in log
    space. ``delta(0) = 2 Phi(mu/2) - 1``; decreasing in ``epsilon``, increasing in ``mu``.

    Examples
    --------
    >>> from skdp.accounting import gdp_delta
    >>> round(gdp_delta(0.0, 1.0), 6)
    0.382925
    """
    eps = _check_real(epsilon, "epsilon", low=0.0, allow_inf=True)
    mu = _check_real(mu, "mu", low=0.0, allow_inf=True)
    if mu == 0.0 or math.isinf(eps):
        return 0.0
    if math.isinf(mu):
        return 1.0
    if eps == 0.0:
        return float(2.0 * ndtr(mu / 2.0) - 1.0)
    return min(1.0, math.exp(_log_delta(eps, mu)))


def gdp_epsilon(delta, mu):
    """Smallest epsilon with delta(epsilon) <= ``delta`` for a mu-GDP mechanism.

    Solved by Brent's method on ``log delta(eps)`` (to ~1e-12 relative). A ``mu`` so
    large that the answer is beyond float64 (about ``1e154``) gives ``inf``.

    Examples
    --------
    >>> from skdp.accounting import gdp_epsilon
    >>> round(gdp_epsilon(1e-5, 1.0), 4)
    4.3772
    """
    delta = _check_real(delta, "delta", low=0.0, high=1.0)
    mu = _check_real(mu, "mu", low=0.0, allow_inf=True)
    if mu == 0.0:
        return 0.0
    if math.isinf(mu) or delta == 0.0:
        return math.inf
    if delta >= gdp_delta(0.0, mu):
        return 0.0
    log_target = math.log(delta)
    # delta(eps) <= Phi(mu/2 - eps/mu), so eps = mu (mu/2 - Phi^-1(delta)) is feasible.
    hi = max(mu * (mu / 2.0 - float(ndtri(delta))), 1e-12) * 1.01 + 1e-12
    if not math.isfinite(hi):  # mu ~ 1e154 and above: epsilon beyond float64
        return math.inf
    while _log_delta(hi, mu) > log_target:  # pragma: no cover - safety net
        hi *= 2.0
    return float(brentq(lambda e: _log_delta(e, mu) - log_target, 0.0, hi, xtol=1e-14, rtol=1e-13))


def gdp_mu(epsilon, delta):
    """Largest mu such that mu-GDP implies (epsilon, delta)-DP.

    Examples
    --------
    >>> from skdp.accounting import gdp_mu
    >>> round(gdp_mu(32.0, 1e-2), 4)
    6.1057
    """
    eps = _check_real(epsilon, "epsilon", low=0.0, allow_inf=True)
    delta = _check_real(delta, "delta", low=0.0, high=1.0)
    if math.isinf(eps) or delta >= 1.0:
        return math.inf
    if delta == 0.0:
        return 0.0

    def f(m):
        return gdp_delta(eps, m) - delta

    hi = 1.0
    while f(hi) < 0:
        hi *= 2.0
        if hi > 1e8:  # pragma: no cover - delta is reached long before
            return math.inf
    return float(brentq(f, 1e-300, hi, xtol=1e-15, rtol=1e-13))
