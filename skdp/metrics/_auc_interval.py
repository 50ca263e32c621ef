"""A noise-aware confidence interval for the DP ROC AUC (:func:`dp_roc_auc_score`).

The release with ``return_interval=True`` splits the call's ``epsilon`` in two: a share
``1 - rho`` releases the AUC exactly as without the interval (smooth sensitivity,
:mod:`skdp.metrics._smooth`), the share ``rho`` releases the number of positives with
Laplace noise. Everything after that is post-processing of those two noisy numbers and
of public facts (``N``, ``epsilon``, ``delta``, ``gamma``, ``alpha``):

1. a ``1 - alpha_c`` confidence set ``[n_lo, n_hi]`` for the number of positives from the
   noisy count (``alpha_c = alpha / 10``);
2. over that set, an upper bound on the smooth-sensitivity noise scale (it depends on the
   private count, so the scale itself is never used) and on the sampling variance of the
   empirical AUC at a hypothesised population AUC ``a``: the Hanley--McNeil (1982)
   formula, the larger of its two orientations (its exponential model pairs the smaller
   covariance term with the positives; swapping the classes gives the other). That is
   at least the variance of the equal-variance binormal model at every ``a`` (checked
   on a grid in the tests) and of the exponential model;
3. the interval inverts the test "population AUC = a" with the statistic
   ``released - a ~ sigma(a) Z + s eta`` (``Z`` standard normal, ``eta`` the mechanism's
   noise law), at level ``alpha - alpha_c``: the union bound gives coverage at least
   ``1 - alpha`` (under the normal approximation of the sampling distribution).

With ``groups=`` (add or remove one patient of at most ``k`` rows; every count private;
:func:`release_group_interval`): the AUC gets the share ``1 - rho`` at the patient-level
smooth sensitivity, the two class counts get Laplace noise of scale ``k / (rho epsilon)``
together (their L1 sensitivity is ``k``), with ``rho`` a public constant
(:data:`GROUP_COUNT_SHARE`); the counts give one-sided lower bounds ``n_lo``, ``m_lo``,
and the Hanley--McNeil variance at ``(n_lo, m_lo)`` (both orientations) is multiplied
by ``k``. Why ``k`` bounds the design effect: the empirical AUC is, to first order
(Hoeffding; DeLong, DeLong and Clarke-Pearson 1988), ``A + sum_p W_p`` with ``W_p`` the
sum of the centred placement terms of patient ``p``'s at most ``k`` rows; patients are
independent, and Cauchy--Schwarz gives ``E W_p^2 <= k sum_{r in p} E term_r^2``, so
the variance is at most ``k`` times the independent-rows variance with the same
marginal score laws. The variance ``(c0 / (n m) + A1 / m + A2 / n)`` with
``c0 = a (1 - a) - A1 - A2 = a (1 - a)(1 - a + a^2) / ((2 - a)(1 + a)) >= 0`` (both
orientations alike) is non-increasing in ``n`` and in ``m``, so its maximum over
``n >= n_lo``, ``m >= m_lo`` is at ``(n_lo, m_lo)``.

By Anderson's theorem (both laws symmetric and unimodal), ``P(|sigma Z + s eta| <= t)``
decreases in ``sigma`` and ``s``, so quantiles computed at upper bounds are conservative.
The accepted set is bracketed by a decreasing fixed point, then found on a grid of the
bracket with its ends bisected outwards (:func:`auc_interval`).

References: Hanley and McNeil, Radiology 143, 1982 (the variance); Nissim,
Raskhodnikova and Smith, STOC 2007 (smooth sensitivity); Anderson, Proc. AMS 6, 1955
(symmetric unimodal laws); the method and its measured coverage are in
:func:`skdp.metrics.dp_roc_auc_score` (Notes) and ``benchmarks/auc_interval.py``.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.optimize import brentq
from scipy.special import hyp2f1, ndtr, ndtri

from skdp.mechanisms import laplace_noise, smooth_sensitivity_noise

__all__ = [
    "auc_interval",
    "count_share",
    "group_budget",
    "hanley_mcneil_variance",
    "invert_test",
    "release_group_interval",
    "release_with_interval",
]

#: the share of ``alpha`` spent on the confidence set of the private count
COUNT_ALPHA_SHARE = 0.1
#: bounds of the share ``rho`` of ``epsilon`` spent on the noisy count
MIN_COUNT_SHARE, MAX_COUNT_SHARE = 0.02, 0.5
_A_GRID = np.linspace(0.0, 1.0, 4001)
_R_MIN, _R_MAX = 1e-4, 1e4


def count_share(epsilon, n_rows, alpha):
    """The share ``rho`` of ``epsilon`` spent on the noisy count (public inputs only).

    The noise of the interval is about ``1 / ((1 - rho) (c - L / (rho epsilon)))`` for a
    smaller class of ``c`` rows and ``L = ln(1 / alpha_c)``, smallest at
    ``rho = sqrt(L / (c epsilon))``; ``c = N / 4`` is assumed (``N`` is public under
    replace-one), and ``rho`` is kept in [0.02, 0.5]. ``0`` for ``epsilon = inf``.
    """
    if math.isinf(epsilon):
        return 0.0
    level = math.log(1.0 / (COUNT_ALPHA_SHARE * alpha))
    rho = math.sqrt(level / (epsilon * max(n_rows, 1) / 4.0))
    return min(max(rho, MIN_COUNT_SHARE), MAX_COUNT_SHARE)


def hanley_mcneil_variance(a, n, m):
    """Hanley--McNeil (1982) variance of the empirical AUC at population AUC ``a``.

    ``(a (1 - a) + (n - 1)(Q1 - a^2) + (m - 1)(Q2 - a^2)) / (n m)`` with ``n``
    positives, ``m`` negatives, ``Q1 = a / (2 - a)``, ``Q2 = 2 a^2 / (1 + a)``; written
    with ``Q1 - a^2 = a (1 - a)^2 / (2 - a)`` and ``Q2 - a^2 = a^2 (1 - a) / (1 + a)``
    (both >= 0). For fixed ``a`` it is convex in ``n`` along ``n + m = N`` (every term
    is a positive multiple of ``1/n``, ``1/m`` or ``1/(n m)``), so its largest value over
    an interval of counts is at an end.
    """
    a = np.asarray(a, dtype=float)
    a1 = a * (1.0 - a) ** 2 / (2.0 - a)
    a2 = a**2 * (1.0 - a) / (1.0 + a)
    return (a * (1.0 - a) + (n - 1.0) * a1 + (m - 1.0) * a2) / (float(n) * float(m))


def _smooth_abs_cdf(e, gamma):
    """``P(|eta| <= e)`` for the density ``c / (1 + |z|^gamma)``, closed form."""
    e = np.asarray(e, dtype=float)
    total = (math.pi / gamma) / math.sin(math.pi / gamma)  # integral over (0, inf)
    out = np.empty_like(e)
    small = e <= 1.0
    es = e[small]
    out[small] = es * hyp2f1(1.0, 1.0 / gamma, 1.0 + 1.0 / gamma, -(es**gamma))
    x = 1.0 / e[~small]  # the tail integral, substituting t = 1 / u
    b = 1.0 - 1.0 / gamma
    tail = x ** (gamma - 1.0) / (gamma - 1.0) * hyp2f1(1.0, b, 1.0 + b, -(x**gamma))
    out[~small] = total - tail
    return np.clip(out / total, 0.0, 1.0)


@lru_cache(maxsize=8)
def _abs_noise_grid(kind, gamma):
    """Nodes and masses of a discretised ``|eta|``, pushed outwards.

    The mass of ``|eta|`` in ``(e_{j-1}, e_j]`` sits at ``e_j`` and the mass beyond the
    last node at infinity: the discrete law is stochastically larger than ``|eta|``, so
    every quantile computed from it is an upper bound (Anderson's theorem).
    """
    nodes = np.concatenate(([0.0], np.geomspace(1e-4, 1e8, 4000)))
    if kind == "laplace":
        cdf = -np.expm1(-nodes)
    else:
        cdf = _smooth_abs_cdf(nodes, gamma)
    cdf = np.maximum.accumulate(cdf)
    masses = np.diff(cdf, prepend=0.0)
    keep = masses > 0
    return nodes[keep], masses[keep], cdf[keep]


def _abs_quantile(sigma, s, level, kind, gamma):
    """An upper bound on the ``level`` quantile of ``|sigma Z + s eta|``."""
    if s == 0.0:
        return sigma * float(ndtri(0.5 + level / 2.0))
    nodes, masses, cdf = _abs_noise_grid(kind, gamma)
    if cdf[-1] < level:  # cannot happen for level <= 1 - 1e-7
        return math.inf
    if sigma == 0.0:
        return s * float(nodes[np.searchsorted(cdf, level)])
    shifted = s * nodes

    def coverage(t):
        inside = ndtr((t - shifted) / sigma) - ndtr((-t - shifted) / sigma)
        return float(np.dot(masses, inside)) - level

    # union bound: P(|sigma Z| > first) + P(|s eta| > second) <= 1 - level
    miss = 1.0 - level
    t_hi = sigma * float(ndtri(1.0 - miss / 4.0))
    t_hi += s * float(nodes[np.searchsorted(cdf, 1.0 - miss / 2.0)])
    if coverage(t_hi) < 0.0:  # rounding only; the bracket holds in exact arithmetic
        t_hi *= 2.0
    xtol = 1e-9 * t_hi
    return brentq(coverage, 0.0, t_hi, xtol=xtol) + 2.0 * xtol


@lru_cache(maxsize=16)
def _quantile_table(kind, gamma, level):
    """``log r`` and ``q(r)``, the ``level`` quantile of ``|r Z + eta|``, on a grid.

    ``q`` is convex in ``log r`` (linear in ``r`` for large ``r``, ``q(0) + O(r^2)``
    for small), so linear interpolation in ``log r`` lies above it; a factor
    ``1 + 1e-3`` covers rounding. Computed once per process and level (under a second).
    """
    log_r = np.linspace(math.log(_R_MIN), math.log(_R_MAX), 201)
    q = np.array([_abs_quantile(math.exp(x), 1.0, level, kind, gamma) for x in log_r])
    return log_r, q


def _quantiles(sigma, s, level, kind, gamma):
    """Upper bounds on the ``level`` quantiles of ``|sigma Z + s eta|`` (``sigma`` an
    array)."""
    sigma = np.asarray(sigma, dtype=float)
    if s == 0.0:
        return sigma * float(ndtri(0.5 + level / 2.0))
    r = sigma / s
    inside = (r >= _R_MIN) & (r <= _R_MAX)
    log_r, q = _quantile_table(kind, gamma, level)
    out = np.empty_like(sigma)
    with np.errstate(divide="ignore"):
        out[inside] = s * np.interp(np.log(r[inside]), log_r, q) * (1.0 + 1e-3)
    for i in np.flatnonzero(~inside):  # rare: one class tiny or the noise negligible
        out.flat[i] = _abs_quantile(float(sigma.flat[i]), s, level, kind, gamma)
    return out


def auc_interval(auc, n_lo, n_hi, n_rows, s_up, kind, gamma, alpha):
    """The ``1 - alpha`` interval for the population AUC given a released ``auc``.

    ``[n_lo, n_hi]``: the (public) set of possible numbers of positives; ``s_up``: an
    upper bound on the noise scale over it (``0`` without noise); ``kind``: ``"smooth"``
    or ``"laplace"``. The test of ``a`` accepts when ``|auc - a| <= t(sigma_up(a))``,
    and the interval is the hull of the accepted set ``T``. A bracket first: ``T`` lies
    in every iterate ``I_k`` of ``I_{k+1} = I_k ∩ [auc -+ t(max_{a in I_k}
    sigma_up(a))]`` started at ``[0, 1]`` (induction: ``a`` in ``T`` has
    ``sigma_up(a)`` at most the maximum over ``I_k``); then the test on a grid of the
    bracket, its ends refined by bisection and rounded outwards. Returns ``(0, 1)`` when
    a class may be empty.
    """
    if min(n_lo, n_rows - n_hi) < 1:
        return 0.0, 1.0
    # both orientations of the Hanley-McNeil terms (symmetric), at both ends of the set
    ends = []
    for n in (n_lo, n_hi):
        ends += [(n, n_rows - n), (n_rows - n, n)]
    return invert_test(auc, ends, s_up, kind, gamma, alpha)


def invert_test(auc, ends, s_up, kind, gamma, alpha, design=1.0):
    """The interval of :func:`auc_interval` with the variance bound
    ``design * max over ends of hanley_mcneil_variance(a, n, m)`` (``ends``: a list of
    ``(n, m)``, all ``>= 1``; ``design``: a public design effect, ``1`` for
    independent rows)."""
    level = 1.0 - alpha

    def t_at(a):
        var = _max_var(a, ends)
        if design != 1.0:
            var = design * var
        return _quantiles(np.sqrt(np.maximum(var, 0.0)), s_up, level, kind, gamma)

    def accepted(a):
        return np.abs(auc - a) <= t_at(a)

    lo, hi = 0.0, 1.0
    for _ in range(50):  # the bracket
        grid = np.concatenate((_A_GRID[(_A_GRID > lo) & (_A_GRID < hi)], [lo, hi]))
        t = float(t_at(np.array([grid[np.argmax(_max_var(grid, ends))]]))[0])
        new_lo, new_hi = max(lo, auc - t), min(hi, auc + t)
        done = (new_lo - lo) + (hi - new_hi) < 1e-9
        lo, hi = new_lo, new_hi
        if done:
            break
    grid = np.unique(np.append(np.linspace(lo, hi, 2001), auc))  # auc: always accepted
    idx = np.flatnonzero(accepted(grid))
    last = grid.shape[0] - 1
    out_lo = grid[0] if idx[0] == 0 else _edge(accepted, grid[idx[0] - 1], grid[idx[0]])
    out_hi = grid[-1] if idx[-1] == last else _edge(accepted, grid[idx[-1] + 1], grid[idx[-1]])
    return float(out_lo), float(out_hi)


def _max_var(a, ends):
    return np.max([hanley_mcneil_variance(a, n, m) for n, m in ends], axis=0)


def _edge(accepted, rejected, inside):
    """Bisection between a rejected and an accepted point; returns the rejected end
    (outwards)."""
    for _ in range(40):
        mid = 0.5 * (rejected + inside)
        if accepted(np.array([mid]))[0]:
            inside = mid
        else:
            rejected = mid
    return rejected


def _noisy_release(value, scale, kind, gamma, rng):
    """``value + scale * eta`` clamped to [0, 1], ``eta`` one draw of the noise law of
    ``kind`` (:func:`skdp.metrics._smooth._noise_parameters`)."""
    if kind == "smooth":
        eta = smooth_sensitivity_noise(1, gamma=gamma, rng=rng)
    else:
        eta = laplace_noise(1, scale=1.0, rng=rng)
    eta = float(np.asarray(eta, dtype=float).ravel()[0])
    return float(np.clip(value + scale * eta, 0.0, 1.0))


def release_with_interval(value, n, n_rows, rng, *, epsilon, delta, gamma, alpha, scale_at):
    """``(noisy auc, (lo, hi))`` spending ``(epsilon, delta)`` in all (replace one row).

    ``value``: the exact AUC; ``n``: the private number of positives of the ``n_rows``
    rows; ``scale_at(count, eps)`` returns ``(scale, kind)`` of the smooth-sensitivity
    release at that count and budget (the scale at the true count is used for the release
    only, never for the interval).
    """
    if math.isinf(epsilon):
        auc = float(np.clip(value, 0.0, 1.0))
        return auc, auc_interval(auc, n, n, n_rows, 0.0, None, gamma, alpha)
    rho = count_share(epsilon, n_rows, alpha)
    eps_auc, eps_count = (1.0 - rho) * epsilon, rho * epsilon
    scale, kind = scale_at(n, eps_auc)  # (eps_auc, delta): the AUC's own release
    auc = _noisy_release(value, scale, kind, gamma, rng)
    # the count moves by at most one under replace-one: Laplace(1 / eps_count), pure DP
    noisy_n = n + float(laplace_noise(1, scale=1.0 / eps_count, rng=rng)[0])
    alpha_c = COUNT_ALPHA_SHARE * alpha
    half = math.log(1.0 / alpha_c) / eps_count  # P(|Laplace(b)| > half) = alpha_c
    n_lo = int(np.clip(math.floor(noisy_n - half), 0, n_rows))
    n_hi = int(np.clip(math.ceil(noisy_n + half), 0, n_rows))
    if min(n_lo, n_rows - n_hi) < 1:
        return auc, (0.0, 1.0)
    # the scale is a decreasing function of min(n, N - n): its maximum is at an end
    s_up = max(scale_at(n_lo, eps_auc)[0], scale_at(n_hi, eps_auc)[0])
    return auc, auc_interval(auc, n_lo, n_hi, n_rows, s_up, kind, gamma, alpha - alpha_c)


#: the share of ``epsilon`` spent on the two noisy class counts with ``groups=``: a
#: public constant (the number of rows is private there, so :func:`count_share`, which
#: uses it, is not available); about optimal for some thousand rows and ``k`` near 10
GROUP_COUNT_SHARE = 0.25


def group_budget(epsilon):
    """``(eps_auc, eps_counts)`` of one patient-level release with the interval.

    Both are charged to the same patient; basic composition gives exactly ``epsilon``
    (and the AUC's ``delta``) per patient. ``(epsilon, 0)`` for ``epsilon = inf``.
    """
    if math.isinf(epsilon):
        return epsilon, 0.0
    return (1.0 - GROUP_COUNT_SHARE) * epsilon, GROUP_COUNT_SHARE * epsilon


def release_group_interval(value, n, m, k, rng, *, epsilon, delta, gamma, alpha, scale_at):
    """``(noisy auc, (lo, hi))`` spending ``(epsilon, delta)`` per patient in all.

    Add or remove one patient of at most ``k`` rows. ``value``: the exact AUC of the
    bounded rows; ``n``, ``m``: their private class counts; ``scale_at(c, eps)``: the
    ``(scale, kind)`` of the patient-level smooth-sensitivity release when
    ``min(n, m) = c`` (non-increasing in ``c``). The AUC gets ``eps_auc`` of
    :func:`group_budget`; ``(n, m)`` has L1 sensitivity ``k`` (a patient's rows are
    positives or negatives, ``k`` in all), so ``n`` and ``m`` plus independent
    ``Laplace(k / eps_counts)`` are ``eps_counts``-DP together. One-sided lower
    confidence bounds ``n_lo``, ``m_lo`` (each missed with probability ``alpha_c / 2``)
    suffice: the noise scale and both orientations of the Hanley--McNeil variance are
    non-increasing in each count. The variance is multiplied by the design effect
    bound ``k`` (the rows of one patient are correlated; Cauchy--Schwarz).
    """
    eps_auc, eps_counts = group_budget(epsilon)
    if math.isinf(epsilon):
        auc = float(np.clip(value, 0.0, 1.0))
        if min(n, m) < 1:
            return auc, (0.0, 1.0)
        ends = [(n, m), (m, n)]
        return auc, invert_test(auc, ends, 0.0, None, gamma, alpha, design=float(k))
    scale, kind = scale_at(min(n, m), eps_auc)  # (eps_auc, delta): the AUC's own release
    auc = _noisy_release(value, scale, kind, gamma, rng)
    noise = laplace_noise(2, scale=k / eps_counts, rng=rng)
    alpha_c = COUNT_ALPHA_SHARE * alpha
    # P(Laplace(b) > h) = exp(-h / b) / 2 = alpha_c / 2 for each of the two counts
    half = k * math.log(1.0 / alpha_c) / eps_counts
    n_lo = max(math.floor(n + float(noise[0]) - half), 0)
    m_lo = max(math.floor(m + float(noise[1]) - half), 0)
    if min(n_lo, m_lo) < 1:
        return auc, (0.0, 1.0)
    s_up = scale_at(min(n_lo, m_lo), eps_auc)[0]
    ends = [(n_lo, m_lo), (m_lo, n_lo)]
    return auc, invert_test(auc, ends, s_up, kind, gamma, alpha - alpha_c, design=float(k))
