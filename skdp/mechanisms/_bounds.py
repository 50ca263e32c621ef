"""Private quantiles and private bounds (used when the user gives no bounds)."""

from __future__ import annotations

import math

import numpy as np

from skdp.mechanisms._validation import check_epsilon, check_rng
from skdp.utils.validation import check_bounds, check_finite, data_bounds

__all__ = [
    "private_bounds",
    "private_quantile",
    "private_quantile_log_probs",
    "resolve_bounds",
]

#: Relative width (of the public search range) of the interval put around a column
#: whose private low estimate is not below its private high estimate.
DEGENERATE_WIDTH = 1e-6


def _check_range(lower, upper):
    lower, upper = float(lower), float(upper)
    if not (math.isfinite(lower) and math.isfinite(upper)) or not lower < upper:
        raise ValueError("lower and upper must be finite with lower < upper")
    return lower, upper


def _intervals(x, quantile, lower, upper):
    """Interval end points ``z_0..z_{n+1}`` and utilities ``-|i - q n|`` (Smith 2011)."""
    x = np.asarray(x, dtype=float).reshape(-1)
    check_finite(x, name="x")
    q = float(quantile)
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile must be in [0, 1], got {quantile}")
    n = x.size
    z = np.concatenate(([lower], np.sort(np.clip(x, lower, upper)), [upper]))
    util = -np.abs(np.arange(n + 1) - q * n)
    return z, util


def _log_widths(z):
    # log(b - a) computed as log(b/2 - a/2) + log 2: no overflow for |a|, |b| ~ 1e308
    with np.errstate(divide="ignore"):
        return np.log(z[1:] / 2 - z[:-1] / 2) + math.log(2.0)


def private_quantile_log_probs(x, quantile, *, lower, upper, epsilon):
    """Exact log probabilities that :func:`private_quantile` outputs a point of each interval.

    Returns ``(edges, log_probs)``: ``edges`` (length ``n + 2``) are the clipped, sorted
    data with ``lower`` and ``upper`` appended; ``log_probs[i]`` is the log probability
    of the interval ``[edges[i], edges[i + 1]]`` (``-inf`` for empty ones). Within an
    interval the output is uniform.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import private_quantile_log_probs
    >>> edges, lp = private_quantile_log_probs([1.0, 2.0], 0.5, lower=0, upper=3, epsilon=1.0)
    >>> bool(np.isclose(np.exp(lp).sum(), 1.0))
    True
    """
    from scipy.special import logsumexp

    lower, upper = _check_range(lower, upper)
    epsilon = check_epsilon(epsilon)
    z, util = _intervals(x, quantile, lower, upper)
    lw = _log_widths(z)
    if math.isinf(epsilon):
        best = util[lw > -np.inf].max()
        lw = np.where(util == best, lw, -np.inf)
    else:
        lw = epsilon / 2.0 * util + lw
    return z, lw - logsumexp(lw)


def private_quantile(x, quantile, *, lower, upper, epsilon, rng):
    """ε-DP quantile by the exponential mechanism over data intervals (Smith 2011).

    The data are clipped to the public range ``[lower, upper]`` and sorted,
    ``z_0 = lower <= z_1 <= ... <= z_n <= z_{n+1} = upper``. A point ``y`` of the
    interval ``[z_i, z_{i+1}]`` has ``i`` data points below it and utility
    ``−|i − q n|``; the mechanism draws an interval with probability
    ∝ ``(z_{i+1} − z_i) exp(ε u_i / 2)`` (Gumbel-max in log space) and returns a
    uniform point in it.

    Privacy: ε-DP under add/remove one row (and under replace-one). The
    utility's sensitivity is 1 (:func:`skdp.mechanisms.sensitivity.quantile_utility_sensitivity`)
    and the base measure (Lebesgue on ``[lower, upper]``) is public, so this is the
    exponential mechanism with exponent ``ε / (2·1)``. Exact guarantee.

    Parameters
    ----------
    x : array-like of shape (n,)
    quantile : float in [0, 1]
    lower, upper : float
        Public search range (finite, ``lower < upper``).
    epsilon : float
        ``> 0``; ``inf`` returns a point of a best interval (no privacy).
    rng : numpy.random.Generator

    Returns
    -------
    float

    References
    ----------
    Smith, A. (2011). Privacy-preserving statistical estimation with optimal
    convergence rates. STOC.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import private_quantile
    >>> x = np.random.default_rng(0).normal(size=1000)
    >>> m = private_quantile(x, 0.5, lower=-10, upper=10, epsilon=1.0,
    ...                      rng=np.random.default_rng(1))
    >>> abs(m) < 0.5
    True
    """
    check_rng(rng)
    z, lp = private_quantile_log_probs(x, quantile, lower=lower, upper=upper, epsilon=epsilon)
    g = rng.gumbel(size=lp.shape)
    i = int(np.argmax(np.where(lp > -np.inf, lp + g, -np.inf)))
    u = rng.random()
    return float(min(max((1.0 - u) * z[i] + u * z[i + 1], z[i]), z[i + 1]))


def private_bounds(X, *, epsilon, rng, search_range=(-1e6, 1e6), quantiles=(0.01, 0.99)):
    """ε-DP per-column bounds: two :func:`private_quantile` queries per column.

    For every column ``j`` the low bound is the private ``quantiles[0]`` quantile and
    the high bound the private ``quantiles[1]`` quantile, both searched in the public
    ``search_range``; each of the ``2 d`` queries spends ``epsilon / (2 d)``
    (sequential composition; total ``epsilon``). If a column's low estimate is not
    below its high estimate, the pair is replaced by the interval of width
    ``DEGENERATE_WIDTH · (upper − lower)`` (= 1e-6 of the public search width)
    centred on their midpoint — a public amount, so this is post-processing.

    Privacy: ε-DP under add/remove one row (and replace-one), exact.

    Parameters
    ----------
    X : array-like of shape (n, d) or (n,)
    epsilon : float
    rng : numpy.random.Generator
    search_range : (lower, upper), scalars or per-column arrays, default=(-1e6, 1e6)
        Public, data-independent range.
    quantiles : (float, float), default=(0.01, 0.99)

    Returns
    -------
    lo, hi : ndarray of shape (d,)

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import private_bounds
    >>> X = np.random.default_rng(0).uniform(0, 10, size=(2000, 2))
    >>> lo, hi = private_bounds(X, epsilon=1.0, rng=np.random.default_rng(1))
    >>> bool(np.all(lo < hi))
    True
    """
    check_rng(rng)
    epsilon = check_epsilon(epsilon)
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError("X must be 1-d or 2-d")
    check_finite(X, name="X")
    d = X.shape[1]
    q_lo, q_hi = (float(q) for q in quantiles)
    if not 0.0 <= q_lo < q_hi <= 1.0:
        raise ValueError("quantiles must satisfy 0 <= low < high <= 1")
    s_lo, s_hi = check_bounds(search_range, d, name="search_range")
    eps_each = epsilon / (2 * d)
    lo = np.empty(d)
    hi = np.empty(d)
    for j in range(d):
        a, b = s_lo[j], s_hi[j]
        lo[j] = private_quantile(X[:, j], q_lo, lower=a, upper=b, epsilon=eps_each, rng=rng)
        hi[j] = private_quantile(X[:, j], q_hi, lower=a, upper=b, epsilon=eps_each, rng=rng)
        if not lo[j] < hi[j]:
            mid = lo[j] / 2 + hi[j] / 2
            half = DEGENERATE_WIDTH * (b / 2 - a / 2)
            lo[j], hi[j] = mid - half, mid + half
    return lo, hi


def resolve_bounds(
    bounds,
    X,
    *,
    epsilon,
    rng,
    name="bounds",
    columns=None,
    fraction=0.1,
    search_range=(-1e6, 1e6),
    quantiles=(0.01, 0.99),
):
    """Turn an estimator's ``bounds`` parameter into arrays, privately if needed.

    * bounds given (pair of scalars/arrays, or dict ``{column: (lo, hi)}``):
      :func:`skdp.utils.validation.check_bounds`; nothing is spent.
    * ``"data"``: :func:`skdp.utils.validation.data_bounds` (min/max of the data, emits
      :class:`~skdp.exceptions.PrivacyLeakWarning`); nothing is charged because the
      guarantee no longer covers the bounds.
    * ``None``: :func:`private_bounds` with ``fraction * epsilon`` (spec README §2 row 8:
      0.1); returns that spend, which the caller charges to ``epsilon_spent_`` and
      subtracts from what remains for the estimator. With ``epsilon=inf`` (privacy
      off) the data min/max are used without a warning and nothing is spent
      (a constant column gets ``hi = lo + 1``).

    Parameters
    ----------
    bounds : None, "data", tuple or dict
    X : array-like of shape (n, d) or (n,)
    epsilon : float
        The estimator's total ε (the share used here is ``fraction * epsilon``).
    rng : numpy.random.Generator
    name : str, default="bounds"
        Parameter name for messages.
    columns : sequence, optional
        Column names (dict bounds, messages).
    fraction : float in (0, 1), default=0.1
    search_range, quantiles
        Passed to :func:`private_bounds`.

    Returns
    -------
    lo, hi : ndarray of shape (d,)
    epsilon_used : float

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import resolve_bounds
    >>> X = np.random.default_rng(0).normal(size=(500, 2))
    >>> lo, hi, used = resolve_bounds(None, X, epsilon=2.0, rng=np.random.default_rng(1))
    >>> used
    0.2
    >>> resolve_bounds((0, 1), X, epsilon=2.0, rng=np.random.default_rng(1))[2]
    0.0
    """
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError("X must be 1-d or 2-d")
    d = X.shape[1]
    if isinstance(bounds, str):
        if bounds != "data":
            raise ValueError(f"{name} must be None, 'data', a (low, high) pair or a dict")
        check_finite(X, name="X")
        lo, hi = data_bounds(X, name=name)
        return lo, hi, 0.0
    if bounds is not None:
        lo, hi = check_bounds(bounds, d, name=name, columns=columns)
        return lo, hi, 0.0
    epsilon = check_epsilon(epsilon)
    fraction = float(fraction)
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"fraction must be in (0, 1), got {fraction}")
    check_finite(X, name="X")
    if math.isinf(epsilon):
        if X.shape[0] == 0:
            raise ValueError("cannot read bounds off an empty X")
        lo, hi = X.min(axis=0), X.max(axis=0)
        return lo, np.where(lo >= hi, lo + 1.0, hi), 0.0
    check_rng(rng)
    used = fraction * epsilon
    lo, hi = private_bounds(
        X, epsilon=used, rng=rng, search_range=search_range, quantiles=quantiles
    )
    return lo, hi, used
