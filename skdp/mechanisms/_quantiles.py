"""Private quantiles (Smith 2011): data intervals, a public grid, above-threshold search.

The building blocks of :func:`private_bounds`; each takes ``rng`` as a keyword and
``epsilon`` is the total guarantee of the call.
"""

from __future__ import annotations

import math

import numpy as np

from skdp.mechanisms._validation import check_epsilon, check_rng
from skdp.utils.validation import as_float_array, check_finite

#: The most candidates :func:`log_grid_candidates` builds (a ratio close to 1 asked for
#: petabytes)
MAX_GRID_CANDIDATES = 10**6


def _check_range(lower, upper):
    lower, upper = float(lower), float(upper)
    if not (math.isfinite(lower) and math.isfinite(upper)) or not lower < upper:
        raise ValueError("lower and upper must be finite with lower < upper")
    return lower, upper


def _intervals(x, quantile, lower, upper):
    """Interval end points ``z_0..z_{n+1}`` and utilities ``-|i - q n|`` (Smith 2011)."""
    x = as_float_array(x, name="x").reshape(-1)
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

    Accuracy: the rank error grows like ``log((upper − lower) / spacing) / ε``, so a
    very wide range with small ``ε`` or ``n`` lets the outer intervals win; and tied
    data (point masses) get zero probability, so for integer or constant data the
    output lands *between* the tied values. :func:`private_grid_quantile` and
    :func:`above_threshold_bound` (used by :func:`private_bounds`) avoid both.

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


def log_grid_candidates(lower, upper, *, ratio=2**0.25, rel_min=1e-9):
    """Public, data-independent candidate set on a symmetric logarithmic grid.

    The candidates are ``0``, ``±m·ratio^k`` (``m = rel_min · max(|lower|, |upper|)``,
    ``k = 0, 1, ...`` up to that maximum), and ``lower`` and ``upper`` themselves, kept
    inside ``[lower, upper]``, sorted. With the defaults about 240 candidates cover
    nine orders of magnitude per sign with a relative step of 19 %. A smallest
    magnitude ``m`` that underflows (a subnormal range such as ``(0, 5e-324)``) and a
    grid of more than :data:`MAX_GRID_CANDIDATES` magnitudes per sign (a ``ratio`` very
    close to 1) are refused with ``ValueError``.

    Examples
    --------
    >>> from skdp.mechanisms import log_grid_candidates
    >>> c = log_grid_candidates(-1e6, 1e6)
    >>> float(c[0]), float(c[-1]), bool(0.0 in c)
    (-1000000.0, 1000000.0, True)
    """
    lower, upper = _check_range(lower, upper)
    ratio, rel_min = float(ratio), float(rel_min)
    if not ratio > 1.0 or not 0.0 < rel_min < 1.0:
        raise ValueError("ratio must be > 1 and rel_min in (0, 1)")
    big = max(abs(lower), abs(upper))
    m = rel_min * big
    if not m >= np.finfo(np.float64).tiny:
        raise ValueError("rel_min * max(|lower|, |upper|) underflows: use a larger rel_min")
    n_float = math.ceil(math.log(big / m) / math.log(ratio))
    if n_float > MAX_GRID_CANDIDATES:
        raise ValueError(
            f"ratio={ratio!r} and rel_min={rel_min!r} ask for more than {MAX_GRID_CANDIDATES} "
            "candidates; use a larger ratio or rel_min"
        )
    n_steps = int(n_float)
    mags = m * ratio ** np.arange(n_steps + 1)
    c = np.concatenate((-mags, [0.0], mags, [lower, upper]))
    c = c[(c >= lower) & (c <= upper)]
    return np.unique(c)


def integer_grid_candidates(lower, upper, *, ratio=2**0.25, rel_min=1e-9):
    """Public candidates for a column declared integer-valued: the rounded log grid.

    :func:`log_grid_candidates` rounded to integers, with ``-1, 0, 1`` added, kept inside
    ``[ceil(lower), floor(upper)]``. Neighbouring candidates are at least 1 apart, so a
    bound estimated on this grid never has a width below 1 and never cuts the integer
    support next to a point mass (a mostly-0 count or 0/1 column keeps its 1s).

    Examples
    --------
    >>> from skdp.mechanisms import integer_grid_candidates
    >>> c = integer_grid_candidates(-1e6, 1e6)
    >>> [float(v) for v in c[(c >= -2) & (c <= 2)]]
    [-2.0, -1.0, 0.0, 1.0, 2.0]
    """
    lower, upper = _check_range(lower, upper)
    lo_i, hi_i = math.ceil(lower), math.floor(upper)
    if not lo_i < hi_i:
        raise ValueError("an integer column needs two integers inside its search range")
    c = np.round(log_grid_candidates(lower, upper, ratio=ratio, rel_min=rel_min)) + 0.0
    c = np.concatenate((c, [-1.0, 0.0, 1.0, float(lo_i), float(hi_i)]))
    return np.unique(c[(c >= lo_i) & (c <= hi_i)])


def grid_quantile_utilities(x, quantile, candidates):
    """Utilities ``−dist(q n, [#{x < c}, #{x <= c}])`` of the candidates ``c``.

    The sensitivity is 1 under add/remove and under replace one row (each end point and
    ``q n`` move by at most 1; :func:`skdp.mechanisms.sensitivity.quantile_utility_sensitivity`).
    Ties (point masses in the data) get the utility of the best rank they can take.
    """
    c = as_float_array(candidates, name="candidates")
    x = as_float_array(x, name="x").reshape(-1)
    check_finite(x, name="x")
    q = float(quantile)
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile must be in [0, 1], got {quantile}")
    xs = np.sort(x)
    lt = np.searchsorted(xs, c, side="left")
    le = np.searchsorted(xs, c, side="right")
    t = q * xs.size
    return -np.maximum(np.maximum(lt - t, t - le), 0.0)


def private_grid_quantile(x, quantile, *, candidates, epsilon, rng):
    """ε-DP quantile chosen among public candidates by the exponential mechanism.

    Utility :func:`grid_quantile_utilities` (sensitivity 1), uniform base measure on
    the data-independent ``candidates`` (e.g. :func:`log_grid_candidates`), exponent
    ``ε / 2``. ε-DP under add/remove one row (and replace-one); exact. Unlike the
    continuous mechanism of :func:`private_quantile`, its error grows only with the
    log of the number of candidates, so it copes with very wide search ranges and
    with tied data. Its resolution is that of the grid: for a tail quantile between
    two coarse candidates, all candidates beyond the data tie, so prefer
    :func:`above_threshold_bound` for range finding.

    Returns
    -------
    float
        The candidate drawn.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import log_grid_candidates, private_grid_quantile
    >>> x = np.random.default_rng(0).uniform(0, 10, size=2000)
    >>> c = log_grid_candidates(-1e6, 1e6)
    >>> v = private_grid_quantile(x, 0.99, candidates=c, epsilon=1.0, rng=np.random.default_rng(1))
    >>> 8 < v < 12
    True
    """
    from skdp.mechanisms._exponential import exponential_mechanism

    check_rng(rng)
    epsilon = check_epsilon(epsilon)
    c = _check_candidates(candidates)
    x = np.clip(as_float_array(x, name="x").reshape(-1), c.min(), c.max())
    u = grid_quantile_utilities(x, quantile, c)
    return float(c[exponential_mechanism(u, epsilon=epsilon, sensitivity=1.0, rng=rng)])


def _check_candidates(candidates):
    """The public candidates as a flat float array: non-empty and finite, or ``ValueError``."""
    c = as_float_array(candidates, name="candidates").reshape(-1)
    if c.size == 0 or not np.all(np.isfinite(c)):
        raise ValueError("candidates must be a non-empty array of finite values")
    return c


def _threshold_queries(x, quantile, candidates, side):
    """Queries ``g_k`` (sensitivity 1) and the scan order of the sparse-vector bound."""
    c = as_float_array(candidates, name="candidates")
    xs = np.sort(as_float_array(x, name="x").reshape(-1))
    n = xs.size
    q = float(quantile)
    if side == "upper":
        # covers when at most (1 - q) n points lie above c; scan upwards
        g = (1.0 - q) * n - (n - np.searchsorted(xs, c, side="right"))
        return g, np.arange(c.size)
    # lower: covers when at most q n points lie below c; scan downwards
    g = q * n - np.searchsorted(xs, c, side="left")
    return g, np.arange(c.size)[::-1]


def above_threshold_bound(x, quantile, *, candidates, epsilon, rng, side="upper"):
    """ε-DP covering bound by the sparse-vector technique (AboveThreshold).

    ``side="upper"`` scans the public ``candidates`` upwards and returns the first
    ``c`` whose noisy query ``g(c) = (1 − q) n − #{x > c}`` clears the noisy threshold
    0, i.e. the first candidate with at most a fraction ``1 − q`` of the data above
    it; ``side="lower"`` scans downwards with ``g(c) = q n − #{x < c}``. If no
    candidate is accepted, the last one scanned (``upper`` or ``lower`` end) is
    returned. Because it stops at the first crossing, it returns the *tightest*
    covering candidate even when the grid is coarse compared with the data.

    Privacy: ``g`` has sensitivity 1 under add/remove one row (``n`` moves by 1 and
    the count by 0 or 1, so ``g`` moves by ``q`` or ``1 − q``) and under replace-one.
    AboveThreshold with threshold noise ``Lap(2/ε)`` and query noise ``Lap(4/ε)``
    is ε-DP whatever the number of candidates (Dwork & Roth 2014, Thm 3.23; Lyu, Su
    and Li 2017, Alg. 1). Exact guarantee.

    Parameters
    ----------
    x : array-like of shape (n,)
    quantile : float in [0, 1]
    candidates : array-like
        Public, data-independent candidates (sorted here), e.g.
        :func:`log_grid_candidates`. ``x`` is clipped to their range.
    epsilon : float
    rng : numpy.random.Generator
    side : {"upper", "lower"}, default="upper"

    Returns
    -------
    float
        The first candidate accepted in scan order (the last one scanned if none is).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import above_threshold_bound, log_grid_candidates
    >>> c = log_grid_candidates(-1e6, 1e6)
    >>> x = np.random.default_rng(0).uniform(0, 10, size=5000)
    >>> hi = above_threshold_bound(x, 0.99, candidates=c, epsilon=0.5,
    ...                            rng=np.random.default_rng(1))
    >>> 9 < hi < 13
    True
    """
    check_rng(rng)
    epsilon = check_epsilon(epsilon)
    if side not in ("upper", "lower"):
        raise ValueError(f"side must be 'upper' or 'lower', got {side!r}")
    q = float(quantile)
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile must be in [0, 1], got {quantile}")
    c = np.unique(_check_candidates(candidates))
    x = as_float_array(x, name="x").reshape(-1)
    check_finite(x, name="x")
    x = np.clip(x, c[0], c[-1])
    g, order = _threshold_queries(x, q, c, side)
    if math.isinf(epsilon):
        hit = np.nonzero(g[order] >= 0)[0]
        return float(c[order[hit[0]]] if hit.size else c[order[-1]])
    t_hat = rng.laplace(0.0, 2.0 / epsilon)
    nu = rng.laplace(0.0, 4.0 / epsilon, size=c.size)
    hit = np.nonzero(g[order] + nu >= t_hat)[0]
    return float(c[order[hit[0]]] if hit.size else c[order[-1]])
