"""Rényi DP of the Poisson-subsampled Gaussian mechanism, and RDP -> (epsilon, delta).

Everything here is plain numpy/scipy, float64, computed in log space and vectorised
over the Rényi orders.

Integer orders use the exact binomial expansion of Mironov, Talwar & Zhang (2019),
rewritten so that every summed term is positive (see :func:`_log_a_minus_one_int`).
Fractional orders use the exact integral

.. math:: A_\\alpha = \\mathbb{E}_{z \\sim \\mathcal N(0, \\sigma^2)}
          \\big[(1 - q + q\\,e^{(2z - 1)/(2\\sigma^2)})^\\alpha\\big],

evaluated by the trapezoidal rule in log space (spectrally accurate: the integrand
is analytic in a strip around the real axis and decays like a Gaussian, so the error
is below double precision with the step used here; the tests check it against the
binomial sum at integer orders and against :func:`scipy.integrate.quad`). Unlike the
two-series expansion used by TF-Privacy / dp-accounting for fractional orders, it never
fails to converge, so no order is ever dropped.
"""

from __future__ import annotations

import functools
import math
from numbers import Integral, Real

import numpy as np
from scipy.special import gammaln, logsumexp

from skdp.utils._docstrings import insert_docs

__all__ = [
    "DEFAULT_ORDERS",
    "CONVERSIONS",
    "rdp_subsampled_gaussian",
    "rdp_gaussian",
    "rdp_pure_dp",
    "rdp_to_epsilon",
    "rdp_to_delta",
]

#: The TF-Privacy order grid (as used by Torfi et al. 2022) united with the integers
#: 2..256 (the grid of Su et al. 2023) and the orders 2.0, 2.1, ..., 11.9 (the optimum
#: of the usual DP-SGD settings often lies between two integers, e.g. alpha ~ 8.6 at
#: q=0.001, sigma=0.8), sorted, as float64.
DEFAULT_ORDERS = np.unique(
    np.concatenate(
        [
            [1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 3.0, 3.5, 4.0, 4.5],
            np.arange(5, 64),
            [128, 256, 512],
            np.arange(2, 257),
            np.arange(20, 120) / 10.0,
        ]
    ).astype(np.float64)
)
DEFAULT_ORDERS.setflags(write=False)

#: Names of the RDP -> (epsilon, delta) conversions.
CONVERSIONS = ("improved", "classic")

# Half-width of the integration window in units of sigma (Gaussian tail mass beyond it
# is about 5e-198) and the number of terms of the small-argument series.
_WINDOW_SIGMAS = 30.0
_SERIES_TERMS = 26
# Largest supported Rényi order.
_MAX_ORDER = 10_000
# Integer orders per binomial table.
_INT_CHUNK = 32
# Largest number of grid cells evaluated at once by the fractional-order integrator.
_MAX_BLOCK = 4_000_000
# Largest number of grid cells the fractional orders of one call may cost in all (about
# 0.5 s). The integrator's step shrinks like sigma^2, so a tiny noise multiplier asked
# for 3e8 cells (25 s at sigma = 3e-3); the orders beyond the budget take the bound of
# the next integer order instead (rdp_subsampled_gaussian, Notes).
_MAX_FRAC_CELLS = 2_000_000
# Above this noise multiplier sigma^2 overflows float64; the full-batch RDP
# alpha / (2 sigma^2) (an upper bound for every sampling rate) is used instead.
_SIGMA_HUGE = 1e150


# --------------------------------------------------------------------------- checks


def _check_orders(orders):
    """Return ``orders`` as a 1-d float64 array of finite values > 1."""
    if orders is None:
        return DEFAULT_ORDERS
    arr = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError("orders must be a non-empty 1-d sequence of numbers > 1.")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 1):
        raise ValueError("Every Rényi order must be finite and > 1.")
    if np.any(arr > _MAX_ORDER):
        raise ValueError(
            f"Rényi orders above {_MAX_ORDER:g} are not supported (they never give the "
            "best epsilon for a meaningful delta, and cost memory linear in the order)."
        )
    return arr


def _check_real(value, name, *, low=None, high=None, allow_inf=False):
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}.")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must not be NaN.")
    if math.isinf(value) and not allow_inf:
        raise ValueError(f"{name} must be finite.")
    if low is not None and value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}.")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}, got {value}.")
    return value


def _check_steps(steps, name="steps"):
    if isinstance(steps, bool):
        raise TypeError(f"{name} must be a non-negative integer.")
    if isinstance(steps, Integral):
        steps = int(steps)
    elif isinstance(steps, Real) and float(steps).is_integer():
        steps = int(steps)
    else:
        raise TypeError(f"{name} must be a non-negative integer, got {steps!r}.")
    if steps < 0:
        raise ValueError(f"{name} must be >= 0, got {steps}.")
    return steps


def _check_conversion(conversion):
    if conversion not in CONVERSIONS:
        raise ValueError(f"conversion must be one of {CONVERSIONS}, got {conversion!r}.")
    return conversion


# --------------------------------------------------------------- log-space helpers


def _log_expm1(x):
    """``log(exp(x) - 1)`` for ``x > 0``, without overflow or cancellation."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    big = x > 30.0
    out[big] = x[big] + np.log1p(-np.exp(-x[big]))
    with np.errstate(divide="ignore"):
        out[~big] = np.log(np.expm1(x[~big]))
    return out


@functools.lru_cache(maxsize=64)
def _binomial_table(alpha):
    """``k``, ``alpha - k`` (0 where invalid), ``log C(alpha, k)`` and the mask k <= alpha."""
    alpha = np.asarray(alpha, dtype=np.float64)
    k = np.arange(2, int(alpha.max()) + 1, dtype=np.float64)
    a = alpha[:, None]
    valid = k[None, :] <= a
    a_minus_k = np.where(valid, a - k, 0.0)
    log_c = gammaln(a + 1.0) - gammaln(k + 1.0) - gammaln(a_minus_k + 1.0)
    for arr in (k, a_minus_k, log_c, valid):
        arr.setflags(write=False)
    return k, a_minus_k, log_c, valid


def _log_a_minus_one_int(alpha, q, sigma):
    """``log(A_alpha - 1)`` at integer orders ``alpha`` (1-d array), 0 < q < 1.

    From the binomial expansion ``A = sum_k C(a,k) (1-q)^(a-k) q^k exp((k^2-k)/(2 s^2))``
    and ``sum_k C(a,k) (1-q)^(a-k) q^k = 1`` (the k = 0, 1 exponents are zero):
    ``A - 1 = sum_{k>=2} C(a,k) (1-q)^(a-k) q^k expm1((k^2-k)/(2 s^2))``, all terms > 0.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    order = np.argsort(alpha, kind="stable")
    kmax = int(alpha.max())
    k_all = np.arange(2, kmax + 1, dtype=np.float64)
    # k-dependent part, shared by every order
    k_part = k_all * math.log(q) + _log_expm1(k_all * (k_all - 1.0) / (2.0 * sigma * sigma))
    log1m_q = math.log1p(-q)
    out = np.empty_like(alpha)
    # Orders are processed in sorted chunks so that each chunk's table only spans
    # k <= its largest order (about 4x fewer cells than one triangle-padded table).
    for start in range(0, alpha.size, _INT_CHUNK):
        idx = order[start : start + _INT_CHUNK]
        k, a_minus_k, log_c, valid = _binomial_table(tuple(alpha[idx]))
        terms = log_c + a_minus_k * log1m_q + k_part[: k.size]
        out[idx] = logsumexp(np.where(valid, terms, -np.inf), axis=1)
    return out


def _log_phi(v, alpha):
    """``log((1+u)^a - 1 - a u)`` with ``v = log1p(u)`` (elementwise, ``a > 1``).

    ``(1+u)^a - 1 - a u = expm1(a v) - a expm1(v) = sum_{n>=2} (a^n - a) v^n / n!``, which
    is >= 0 by convexity. Three regimes: the series for ``|a v| <= 1``, the direct
    difference for moderate ``a v``, and a log-space form for large ``a v``.
    """
    out = np.full(v.shape, -np.inf)
    av = alpha * v
    small = np.abs(av) <= 1.0
    large = av > 30.0
    mid = ~(small | large)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if np.any(small):
            vs = v[small]
            asml = alpha[small] if np.ndim(alpha) else alpha
            # sum_{n>=2} (a^n - a) v^(n-2) / n!, then add 2 log|v| (no underflow).
            total = np.zeros_like(vs)
            power = np.full_like(vs, 0.5)  # v^(n-2) / n!
            apow = asml * asml  # a^n
            for n in range(2, _SERIES_TERMS + 2):
                total += (apow - asml) * power
                power = power * vs / (n + 1)
                apow = apow * asml
            out[small] = np.where(
                (total > 0) & (vs != 0), 2.0 * np.log(np.abs(vs)) + np.log(total), -np.inf
            )
        if np.any(mid):
            vm = v[mid]
            am = alpha[mid] if np.ndim(alpha) else alpha
            phi = np.expm1(am * vm) - am * np.expm1(vm)
            out[mid] = np.where(phi > 0, np.log(np.maximum(phi, 1e-320)), -np.inf)
        if np.any(large):
            vl = v[large]
            al = alpha[large] if np.ndim(alpha) else alpha
            # log(1 + a*expm1(v)) = log(a) + v + log1p(-(a-1)/a * exp(-v))   (v > 0)
            log_lin = np.log(al) + vl + np.log1p(-(al - 1.0) / al * np.exp(-vl))
            out[large] = al * vl + np.log1p(-np.exp(log_lin - al * vl))
    return out


def _log_a_minus_one_frac(alpha, q, sigma):
    """``log(A_alpha - 1)`` for any real orders ``alpha > 1`` (1-d array), 0 < q < 1.

    ``A - 1 = E_{z~N(0,s^2)}[(1+u)^a - 1 - a u]`` with ``u = q expm1((2z-1)/(2 s^2))``
    (``E[u] = 0``), integrated on ``[-30 s, a + 30 s]`` with the trapezoidal rule in log
    space. The integrand is a positive function; its mass lies in that window (it is a
    N(a, s^2) density times a decreasing factor above ``z = a`` and at most a N(0, s^2)
    density times a bounded factor below 0).
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    h = min(sigma / 10.0, sigma * sigma / 4.0)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        n_float = np.ceil((alpha + 2.0 * _WINDOW_SIGMAS * sigma) / h) + 1
    too_fine = ~(n_float <= _MAX_BLOCK)  # a tiny sigma: the grid would not fit in memory
    # and within the total budget, the cheapest (lowest) orders first
    order = np.argsort(np.where(too_fine, np.inf, n_float), kind="stable")
    spent = np.cumsum(np.where(too_fine, 0.0, n_float)[order])
    too_fine[order[spent > _MAX_FRAC_CELLS]] = True
    if np.any(too_fine):
        # +inf is a sound (trivial) RDP bound at those orders; the caller replaces it by
        # the next integer order's value (also sound: RDP grows with the order)
        out = np.full(alpha.shape, np.inf)
        if not np.all(too_fine):
            out[~too_fine] = _log_a_minus_one_frac(alpha[~too_fine], q, sigma)
        return out
    n_pts = n_float.astype(np.int64)
    # One grid z_j = lo + j h shared by every order; order i uses its first n_pts[i] nodes.
    z = -_WINDOW_SIGMAS * sigma + h * np.arange(int(n_pts.max()), dtype=np.float64)
    x = (z - 0.5) / (sigma * sigma)
    v = np.empty_like(z)  # log1p(u)
    neg = x <= 0
    v[neg] = np.log1p(q * np.expm1(x[neg]))  # u in (-q, 0]
    v[~neg] = np.logaddexp(0.0, math.log(q) + _log_expm1(x[~neg]))  # via log u: no overflow
    log_gauss = -math.log(sigma * math.sqrt(2.0 * math.pi)) - z * z / (2.0 * sigma * sigma)
    out = np.empty(alpha.shape)
    rows = max(1, _MAX_BLOCK // z.size)
    for start in range(0, alpha.size, rows):
        a = alpha[start : start + rows, None]
        inside = np.arange(z.size)[None, :] < n_pts[start : start + rows, None]
        a_full = np.broadcast_to(a, inside.shape)[inside]
        v_full = np.broadcast_to(v, inside.shape)[inside]
        log_int = np.full(inside.shape, -np.inf)
        log_int[inside] = np.broadcast_to(log_gauss, inside.shape)[inside] + _log_phi(
            v_full, a_full
        )
        out[start : start + rows] = logsumexp(log_int, axis=1) + math.log(h)
    return out


# ------------------------------------------------------------------- public RDP


@insert_docs
def rdp_subsampled_gaussian(*, noise_multiplier, sample_rate, orders=None):
    """RDP of one step of the Poisson-subsampled Gaussian mechanism.

    One DP-SGD step (Poisson sampling with rate ``q``, per-record clipping to norm
    ``C``, Gaussian noise of standard deviation ``noise_multiplier * C`` added once to
    the sum) has, under the add/remove-one-row relation, Rényi DP of order ``alpha``
    at most ``log(A_alpha) / (alpha - 1)`` with
    ``A_alpha = E_{z ~ N(0, s^2)}[(1 - q + q exp((2z - 1) / (2 s^2)))^alpha]``.
    ``T`` steps compose to ``T`` times this curve.

    Parameters
    ----------
    noise_multiplier : float
        Noise standard deviation divided by the L2 sensitivity (``sigma``), >= 0.
        ``0`` gives ``inf`` (no privacy) unless ``sample_rate == 0``; ``inf`` gives 0.
    sample_rate : float
        Poisson sampling probability ``q`` in ``[0, 1]``. ``q = 0`` gives 0 and
        ``q = 1`` gives the full-batch Gaussian mechanism, ``alpha / (2 sigma^2)``.
    orders : array-like of float, optional
        Rényi orders (> 1). Default :data:`DEFAULT_ORDERS` (the TF-Privacy grid
        united with the integers 2..256 and the tenths 2.0..11.9). Integer orders use
        the exact binomial sum,
        fractional orders the exact integral (computed numerically to near machine
        precision); no order is dropped.

    Returns
    -------
    rdp : ndarray of shape (n_orders,)
        The RDP value at each order.

    Notes
    -----
    Integer orders: Mironov, Talwar & Zhang (2019), §3.3, summed in log space as
    ``A - 1 = sum_{k>=2} C(alpha,k) (1-q)^(alpha-k) q^k expm1((k^2-k) / (2 sigma^2))``
    (all terms positive, so tiny ``q`` keeps full relative precision). Fractional
    orders: the same quantity as an integral, see the module docstring. The integral's
    grid step shrinks like ``sigma^2``; when the fractional orders of one call would
    cost more than ``2e6`` grid cells in all (``sigma`` below about 0.05 with the
    default orders) or one order more than ``4e6``, those orders beyond the budget
    take the value of the next integer order ``ceil(alpha)``, an upper bound since the
    RDP of a mechanism is non-decreasing in the order (van Erven & Harremoës 2014,
    Thm 3). The answer stays a proven bound, only less tight, and comes in well
    under a second (``sigma = 3e-3`` took 25 s). A ``sigma`` above ``1e150`` (whose
    square overflows) gets the full-batch value ``alpha / (2 sigma^2)``, an upper
    bound for every ``q``.

    References
    ----------
    .. [1] {ref_mironov2017}
    .. [2] {ref_mironov_talwar_zhang2019}

    Examples
    --------
    >>> from skdp.accounting import rdp_subsampled_gaussian
    >>> rdp = rdp_subsampled_gaussian(noise_multiplier=2.0, sample_rate=1.0, orders=[2, 4])
    >>> [float(r) for r in rdp]
    [0.25, 0.5]
    """
    sigma = _check_real(noise_multiplier, "noise_multiplier", low=0.0, allow_inf=True)
    q = _check_real(sample_rate, "sample_rate", low=0.0, high=1.0)
    alpha = _check_orders(orders)
    if q == 0.0 or math.isinf(sigma):
        return np.zeros_like(alpha)
    if sigma == 0.0:
        return np.full_like(alpha, np.inf)
    if q == 1.0:
        return alpha / (2.0 * sigma * sigma)
    if sigma > _SIGMA_HUGE:  # the full-batch value bounds the subsampled one; both ~0
        return alpha / (2.0 * sigma) / sigma
    log_am1 = np.empty_like(alpha)
    is_int = alpha == np.round(alpha)
    if np.any(is_int):
        log_am1[is_int] = _log_a_minus_one_int(alpha[is_int], q, sigma)
    if np.any(~is_int):
        log_am1[~is_int] = _log_a_minus_one_frac(alpha[~is_int], q, sigma)
    rdp = np.logaddexp(0.0, log_am1) / (alpha - 1.0)
    skipped = np.isinf(log_am1) & ~is_int
    if np.any(skipped):
        # fractional orders beyond the integrator's budget: RDP is non-decreasing in the
        # order (a Rényi divergence), so the next integer order's value bounds them
        ceil = np.ceil(alpha[skipped])
        rdp[skipped] = np.logaddexp(0.0, _log_a_minus_one_int(ceil, q, sigma)) / (ceil - 1.0)
    return rdp


def rdp_gaussian(*, noise_multiplier, orders=None):
    """RDP of the (full-batch) Gaussian mechanism: ``alpha / (2 noise_multiplier^2)``.

    ``noise_multiplier`` is the noise standard deviation divided by the L2
    sensitivity (Mironov 2017, Prop. 7).

    Examples
    --------
    >>> from skdp.accounting import rdp_gaussian
    >>> float(rdp_gaussian(noise_multiplier=1.0, orders=[3])[0])
    1.5
    """
    return rdp_subsampled_gaussian(
        noise_multiplier=noise_multiplier, sample_rate=1.0, orders=orders
    )


def rdp_pure_dp(*, epsilon, orders=None):
    """RDP curve implied by a pure ``epsilon``-DP mechanism: ``min(eps, alpha eps^2 / 2)``.

    ``D_alpha <= D_inf = epsilon``, and epsilon-DP implies ``epsilon^2/2``-zCDP
    (Bun & Steinke 2016, Prop. 1.4), i.e. RDP ``alpha epsilon^2 / 2`` at every order.
    Use it to put a pure-DP release (a DP bounds estimate, a report-noisy-max
    selection) on the same RDP curve as DP-SGD steps.

    Examples
    --------
    >>> from skdp.accounting import rdp_pure_dp
    >>> [float(r) for r in rdp_pure_dp(epsilon=0.1, orders=[2, 1000])]
    [0.010000000000000002, 0.1]
    """
    eps = _check_real(epsilon, "epsilon", low=0.0, allow_inf=True)
    alpha = _check_orders(orders)
    return np.minimum(eps, alpha * eps * eps / 2.0)


# ------------------------------------------------------------------- conversion


def _check_rdp(rdp, orders):
    alpha = _check_orders(orders)
    rdp = np.atleast_1d(np.asarray(rdp, dtype=np.float64))
    if rdp.shape != alpha.shape:
        raise ValueError("rdp and orders must have the same length.")
    if np.any(np.isnan(rdp)) or np.any(rdp < 0):
        raise ValueError("RDP values must be >= 0 (inf allowed), not NaN.")
    return rdp, alpha


@insert_docs
def rdp_to_epsilon(rdp, orders=None, *, delta, conversion="improved", return_order=False):
    """Smallest epsilon such that an RDP curve implies (epsilon, delta)-DP.

    Parameters
    ----------
    rdp : array-like of shape (n_orders,)
        RDP values (already composed) at ``orders``.
    orders : array-like of shape (n_orders,), optional
        Rényi orders; default :data:`DEFAULT_ORDERS`.
    delta : float
        Target delta in ``[0, 1)``. ``delta = 0`` gives ``inf`` unless the curve is
        zero somewhere (RDP never implies pure DP).
    conversion : {"improved", "classic"}, default="improved"
        ``"classic"`` (Mironov 2017, Prop. 3):
        ``eps = min_a rdp(a) + log(1/delta) / (a - 1)``.
        ``"improved"`` (Balle et al. 2020, Thm. 21; Asoodeh et al. 2020):
        ``eps = min_a rdp(a) + log((a-1)/a) - (log(delta) + log(a)) / (a - 1)``, always
        smaller; also uses ``delta >= sqrt(1 - exp(-rdp(a)))  =>  eps = 0`` (the total
        variation bound, as dp-accounting does). Both results are clipped at 0.
    return_order : bool, default=False
        Also return the optimal order.

    Returns
    -------
    epsilon : float
    order : float
        Only with ``return_order=True``; ``nan`` when the curve is zero.

    References
    ----------
    .. [1] {ref_mironov2017}
    .. [2] B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato, "Hypothesis Testing
       Interpretations and Renyi Differential Privacy", AISTATS 2020.
    .. [3] S. Asoodeh, J. Liao, F. Calmon, O. Kosut, L. Sankar, "A Better Bound Gives a
       Hundred Rounds: Enhanced Privacy Guarantees via f-Divergences", ISIT 2020.

    Examples
    --------
    >>> from skdp.accounting import rdp_to_epsilon
    >>> round(rdp_to_epsilon([0.5], [2.0], delta=1e-5, conversion="classic"), 4)
    12.0129
    """
    rdp, alpha = _check_rdp(rdp, orders)
    delta = _check_real(delta, "delta", low=0.0)
    if delta >= 1.0:
        raise ValueError("delta must be < 1.")
    _check_conversion(conversion)
    if np.any(rdp == 0):
        eps, order = 0.0, float(alpha[np.argmax(rdp == 0)])
    elif delta == 0.0 or np.all(np.isinf(rdp)):
        eps, order = math.inf, math.nan
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            if conversion == "classic":
                cand = rdp - math.log(delta) / (alpha - 1.0)
            else:
                cand = (
                    rdp + np.log1p(-1.0 / alpha) - (math.log(delta) + np.log(alpha)) / (alpha - 1.0)
                )
                cand = np.where(delta * delta + np.expm1(-rdp) > 0, 0.0, cand)
        cand = np.where(np.isnan(cand), np.inf, cand)
        idx = int(np.argmin(cand))
        eps, order = max(0.0, float(cand[idx])), float(alpha[idx])
    return (eps, order) if return_order else eps


def rdp_to_delta(rdp, orders=None, *, epsilon, conversion="improved"):
    """Smallest delta such that an RDP curve implies (epsilon, delta)-DP.

    ``"classic"``: ``delta = min_a exp((a - 1)(rdp(a) - epsilon))``; ``"improved"``:
    ``log delta = min_a (a - 1)(rdp(a) - epsilon + log(1 - 1/a)) - log(a)``, also bounded
    by ``sqrt(1 - exp(-rdp(a)))``. See :func:`rdp_to_epsilon` for references.

    Examples
    --------
    >>> from skdp.accounting import rdp_to_delta
    >>> f"{rdp_to_delta([0.5], [2.0], epsilon=12.0129, conversion='classic'):.3g}"
    '1e-05'
    """
    rdp, alpha = _check_rdp(rdp, orders)
    eps = _check_real(epsilon, "epsilon", low=0.0, allow_inf=True)
    _check_conversion(conversion)
    if math.isinf(eps):
        return 0.0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if conversion == "classic":
            log_d = (alpha - 1.0) * (rdp - eps)
        else:
            log_d = (alpha - 1.0) * (rdp - eps + np.log1p(-1.0 / alpha)) - np.log(alpha)
            log_d = np.minimum(log_d, 0.5 * np.log(-np.expm1(-rdp)))
    log_d = np.where(np.isnan(log_d), np.inf, log_d)
    return float(min(1.0, math.exp(min(0.0, float(np.min(log_d))))))
