"""Zero-concentrated DP (zCDP): conversion to and from (epsilon, delta)-DP.

A mechanism is rho-zCDP when its Rényi divergence of every order ``alpha > 1`` is at
most ``alpha * rho`` (Bun & Steinke 2016). The Gaussian mechanism with L2 sensitivity
``Delta`` and noise ``sigma`` is ``Delta^2 / (2 sigma^2)``-zCDP, and so is the discrete
Gaussian (Canonne, Kamath & Steinke 2020, Thm. 4); pure epsilon-DP implies
``epsilon^2 / 2``-zCDP, and an epsilon-DP exponential mechanism ``epsilon^2 / 8``-zCDP
(bounded range; Cesar & Rogers 2021). zCDP composes by adding the rhos.

The conversion used here is the tight one for a zCDP *bound* (Canonne, Kamath &
Steinke 2020, Prop. 12 / Cor. 13; the same as the "improved" RDP conversion of Balle
et al. 2020 applied to the curve ``alpha * rho``, minimised over every real
``alpha > 1`` rather than a grid)::

    delta(rho, eps) = inf_{alpha > 1} exp((alpha - 1)(alpha rho - eps))
                      * (1 - 1/alpha)^alpha / (alpha - 1).

Every ``alpha > 1`` gives a valid bound; ``log delta(alpha)`` is convex in ``alpha``
(its derivative ``(2 alpha - 1) rho - eps + log(1 - 1/alpha)`` is increasing), so the
infimum is found by a root search on that derivative. :func:`zcdp_rho` returns a rho
that is checked to satisfy ``zcdp_delta(rho, eps) <= delta`` in floating point.

Where that search cannot be carried out in float64 (a ``rho`` or ``delta`` near the
ends of the float range: ``rho = 1e-300``, ``delta = 5e-324``, ``eps = 1e300``), the
classic conversion of Bun & Steinke (2016, Prop. 1.3), ``delta = exp(-(eps - rho)^2 /
(4 rho))`` for ``eps >= rho``, is used instead: also a valid bound, never tighter than
the one above, so each function still returns a sound answer (no solver error, no hang).

Pure numpy/scipy (layer L1).
"""

from __future__ import annotations

import math

from scipy.optimize import brentq

__all__ = ["zcdp_delta", "zcdp_epsilon", "zcdp_rho"]

# Most steps of the loops that round a result to a valid value (a few are needed; the
# cap only bites at the ends of the float range, where the loops used to hang)
_MAX_GUARD_STEPS = 2000


def _check(value, name, *, allow_inf=True):
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a real number")
    v = float(value)
    if math.isnan(v) or v < 0 or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name} must be >= 0{'' if allow_inf else ' and finite'}, got {v}")
    return v


def _log_delta_at(log_am1, rho, eps):
    """``log`` of the bound at order ``alpha = 1 + exp(log_am1)`` (any order is valid).

    ``(alpha - 1)(alpha rho - eps) + alpha log(1 - 1/alpha) - log(alpha - 1)``, written
    with ``t = alpha - 1`` as ``t (alpha rho - eps) + t log t - alpha log alpha`` (and,
    for large ``t``, ``t log t - alpha log alpha = -t log(1 + 1/t) - log(1 + t)``) so that
    neither orders close to 1 nor huge orders lose precision.
    """
    t = math.exp(log_am1)
    alpha = 1.0 + t
    if log_am1 < 0.0:
        entropy = t * log_am1 - alpha * math.log1p(t)
    else:
        entropy = -t * math.log1p(1.0 / t) - math.log1p(t)
    return t * (alpha * rho - eps) + entropy


def _classic_log_delta(rho, eps):
    """``log delta`` of Bun & Steinke's conversion: ``-(eps - rho)^2 / (4 rho)`` for
    ``eps >= rho`` (``0`` below), a valid bound at every ``rho > 0``."""
    if not eps > rho:
        return 0.0
    x = (eps - rho) / (2.0 * math.sqrt(rho))
    return -(x * x)  # -inf when it overflows: delta below the float range


def _log_delta(rho, eps):
    """``log delta(rho, eps)`` minimised over ``alpha > 1`` (``rho > 0``, finite eps).

    The smaller of the optimised bound and the classic one (both valid; the optimised
    one is the tighter wherever float64 can compute it, and the classic one stands in
    where its root search fails or overflows).
    """
    classic = _classic_log_delta(rho, eps)
    try:
        value = _log_delta_optimised(rho, eps)
    except (ValueError, OverflowError, ZeroDivisionError, RuntimeError):
        return classic
    return value if value <= classic else classic  # NaN: the classic bound


def _log_delta_optimised(rho, eps):
    """``log delta(rho, eps)`` by the root search over the order (may raise at the ends
    of the float range; :func:`_log_delta` falls back)."""

    def slope(log_am1):  # d/d alpha (increasing), as a function of s = log(alpha - 1)
        t = math.exp(log_am1)
        return (1.0 + 2.0 * t) * rho - eps + log_am1 - math.log1p(t)

    hi = math.log((eps + 1.0) / (2.0 * rho) + 2.0)  # slope > 0 there
    lo = min(-1.0, hi - 1.0)
    while slope(lo) >= 0.0 and lo > -740.0:  # slope -> -inf as alpha -> 1
        lo -= 8.0
    if slope(lo) >= 0.0:
        log_am1 = lo
    else:
        log_am1 = brentq(slope, lo, hi, xtol=1e-14, rtol=1e-15, maxiter=500)
    return _log_delta_at(log_am1, rho, eps)


def zcdp_delta(rho, epsilon):
    """Smallest ``delta`` such that rho-zCDP implies ``(epsilon, delta)``-DP.

    Parameters
    ----------
    rho : float
        ``>= 0``.
    epsilon : float
        ``>= 0``; ``inf`` gives 0.

    Returns
    -------
    float
        In ``[0, 1]``.

    References
    ----------
    C. L. Canonne, G. Kamath, T. Steinke. "The Discrete Gaussian for Differential
    Privacy." NeurIPS 2020, Prop. 12 and Cor. 13.

    Examples
    --------
    >>> from skdp.accounting import zcdp_delta
    >>> float(f"{zcdp_delta(0.5, 5.0):.4g}")
    2.896e-06
    """
    rho, eps = _check(rho, "rho"), _check(epsilon, "epsilon")
    if rho == 0.0 or math.isinf(eps):
        return 0.0
    if math.isinf(rho):
        return 1.0
    return min(1.0, math.exp(_log_delta(rho, eps)))


def zcdp_epsilon(rho, delta):
    """Smallest ``epsilon`` such that rho-zCDP implies ``(epsilon, delta)``-DP.

    Parameters
    ----------
    rho : float
        ``>= 0``; ``inf`` gives ``inf``.
    delta : float
        In ``(0, 1)``. (zCDP never implies pure DP: ``delta = 0`` gives ``inf`` unless
        ``rho = 0``.)

    Returns
    -------
    float

    Examples
    --------
    >>> from skdp.accounting import zcdp_epsilon
    >>> eps = zcdp_epsilon(0.5, 1e-5)
    >>> eps < 0.5 + 2 * (0.5 * __import__("math").log(1e5)) ** 0.5  # the classic bound
    True
    """
    rho, delta = _check(rho, "rho"), _check(delta, "delta")
    if delta >= 1.0:
        raise ValueError("delta must be < 1")
    if rho == 0.0:
        return 0.0
    if math.isinf(rho) or delta == 0.0:
        return math.inf
    log_delta = math.log(delta)
    if _log_delta(rho, 0.0) <= log_delta:
        return 0.0
    hi = rho + 2.0 * math.sqrt(rho * -log_delta)  # classic bound: valid
    for i in range(_MAX_GUARD_STEPS):  # guard against rounding at the edge
        if not math.isfinite(hi) or _log_delta(rho, hi) <= log_delta:
            break
        hi = hi * (1.0 + 1e-9) if i < 8 else hi * 2.0
    if not math.isfinite(hi):
        return math.inf  # no finite epsilon is resolvable in float64: the trivial bound
    try:
        eps = brentq(lambda e: _log_delta(rho, e) - log_delta, 0.0, hi, xtol=1e-15, rtol=1e-15)
    except (ValueError, RuntimeError):
        return float(hi)
    for _ in range(_MAX_GUARD_STEPS):  # round up: the result must be valid
        if zcdp_delta(rho, eps) <= delta:
            return float(eps)
        eps = max(eps * (1.0 + 1e-14), math.nextafter(eps, math.inf))
    return float(hi)


def zcdp_rho(epsilon, delta):
    """Largest ``rho`` such that rho-zCDP implies ``(epsilon, delta)``-DP.

    The budget a zCDP mechanism may spend to meet a stated ``(epsilon, delta)``
    guarantee; ``zcdp_delta(zcdp_rho(eps, delta), eps) <= delta`` holds in floating
    point (checked).

    Parameters
    ----------
    epsilon : float
        ``> 0``; ``inf`` gives ``inf``.
    delta : float
        In ``[0, 1)``; ``0`` gives 0 (no zCDP mechanism is pure DP).

    Returns
    -------
    float

    Examples
    --------
    >>> from skdp.accounting import zcdp_delta, zcdp_rho
    >>> rho = zcdp_rho(1.0, 1e-5)
    >>> round(rho, 5), zcdp_delta(rho, 1.0) <= 1e-5
    (0.03056, True)
    """
    eps, delta = _check(epsilon, "epsilon"), _check(delta, "delta")
    if delta >= 1.0:
        raise ValueError("delta must be < 1")
    if math.isinf(eps):
        return math.inf
    if delta == 0.0 or eps == 0.0:
        return 0.0
    log_delta = math.log(delta)
    hi = eps + 1.0
    while _log_delta(hi, eps) <= log_delta:
        if hi > 1e300:  # valid, and no larger rho is resolvable
            return float(hi)
        hi *= 2.0
    # the classic conversion eps = rho + 2 sqrt(rho log(1/delta)) is valid: a lower bracket
    # (written without the cancellation of sqrt(L + eps) - sqrt(L) for a small eps)
    big_l = -log_delta
    lo = (eps / (math.sqrt(big_l + eps) + math.sqrt(big_l))) ** 2
    for _ in range(_MAX_GUARD_STEPS):  # rounding at the edge
        if not lo > 0 or _log_delta(lo, eps) <= log_delta:
            break
        lo *= 0.5
    if not lo > 0 or _log_delta(lo, eps) > log_delta:
        return 0.0  # no positive rho is resolvable in float64: the trivial answer
    try:
        rho = brentq(lambda r: _log_delta(r, eps) - log_delta, lo, hi, xtol=1e-300)
    except (ValueError, RuntimeError):
        return float(lo)
    for _ in range(_MAX_GUARD_STEPS):  # round down: must be valid
        if not rho > 0 or zcdp_delta(rho, eps) <= delta:
            return float(rho)
        rho *= 1.0 - 1e-14
    return float(lo)
