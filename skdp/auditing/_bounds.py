"""Statistical bounds behind every empirical epsilon lower bound in :mod:`skdp.auditing`.

Two kinds of evidence are turned into an epsilon lower bound that holds at a stated
confidence (never a point estimate):

* **Independent trials** (one canary per training run, a fixed neighbouring pair):
  Clopper--Pearson one-sided bounds on the attack's true- and false-positive rates,
  each at level ``(1 - confidence) / 2`` so that both hold jointly with probability at
  least ``confidence`` (union bound), plugged into the (epsilon, delta)-DP hypothesis
  test inequalities ``TPR <= e^eps FPR + delta`` and
  ``1 - FPR <= e^eps (1 - TPR) + delta``.
* **One training run, many canaries** (Steinke, Nasr and Jagielski 2023, Alg. 1 and
  the p-value of their App. D): the number of correct guesses is stochastically
  dominated by a binomial under the null "the mechanism is (eps, delta)-DP"; the bound
  is the largest epsilon rejected at level ``beta = 1 - confidence``. With ``delta=0``
  this is the exact binomial (Clopper--Pearson-type) test.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

__all__ = [
    "clopper_pearson",
    "epsilon_from_rates",
    "epsilon_lower_bound",
    "one_run_epsilon_lower_bound",
    "one_run_p_value",
]


def _check_confidence(confidence):
    confidence = float(confidence)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return confidence


def clopper_pearson(k, n, *, confidence=0.95, side="two-sided"):
    """Exact (Clopper--Pearson) confidence bounds for a binomial proportion.

    Parameters
    ----------
    k : int or array-like of int
        Number of successes.
    n : int or array-like of int
        Number of trials (``n >= k >= 0``).
    confidence : float, default=0.95
        Coverage of the interval (or of the one-sided bound).
    side : {"two-sided", "lower", "upper"}, default="two-sided"
        ``"lower"``/``"upper"`` return a one-sided bound at level ``confidence``;
        ``"two-sided"`` returns ``(lower, upper)`` with ``(1-confidence)/2`` in each tail.

    Returns
    -------
    bound : float or ndarray, or tuple of two of them for ``"two-sided"``.

    Examples
    --------
    >>> from skdp.auditing import clopper_pearson
    >>> lo, hi = clopper_pearson(5, 10)
    >>> round(lo, 4), round(hi, 4)
    (0.1871, 0.8129)
    """
    confidence = _check_confidence(confidence)
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    if np.any(k < 0) or np.any(k > n):
        raise ValueError("need 0 <= k <= n")
    alpha = 1.0 - confidence

    def lower(a):
        with np.errstate(invalid="ignore"):
            out = np.where(k > 0, stats.beta.ppf(a, k, n - k + 1), 0.0)
        return out[()] if out.ndim == 0 else out

    def upper(a):
        with np.errstate(invalid="ignore"):
            out = np.where(k < n, stats.beta.ppf(1 - a, k + 1, n - k), 1.0)
        return out[()] if out.ndim == 0 else out

    if side == "lower":
        return float(lower(alpha)) if np.ndim(k) == 0 and np.ndim(n) == 0 else lower(alpha)
    if side == "upper":
        return float(upper(alpha)) if np.ndim(k) == 0 and np.ndim(n) == 0 else upper(alpha)
    if side == "two-sided":
        lo, hi = lower(alpha / 2), upper(alpha / 2)
        if np.ndim(k) == 0 and np.ndim(n) == 0:
            return float(lo), float(hi)
        return lo, hi
    raise ValueError(f"side must be 'two-sided', 'lower' or 'upper', got {side!r}")


def epsilon_from_rates(tpr, fpr, *, delta=0.0):
    """Epsilon implied by one ROC point under (epsilon, delta)-DP (no statistics).

    ``max(log((tpr - delta) / fpr), log((1 - fpr - delta) / (1 - tpr)), 0)``. Plugging
    in *confidence bounds* (lower for ``tpr``, upper for ``fpr``) gives a lower bound on
    epsilon; plugging in point estimates does not (use :func:`epsilon_lower_bound`).
    """
    tpr = float(tpr)
    fpr = float(fpr)
    candidates = [0.0]
    with np.errstate(divide="ignore"):
        if tpr - delta > 0:
            candidates.append(math.inf if fpr <= 0 else math.log((tpr - delta) / fpr))
        if 1 - fpr - delta > 0:
            candidates.append(math.inf if tpr >= 1 else math.log((1 - fpr - delta) / (1 - tpr)))
    return max(candidates)


def epsilon_lower_bound(tp, fn, fp, tn, *, delta=0.0, confidence=0.95):
    """Epsilon lower bound from the confusion counts of independent membership trials.

    Each trial runs the mechanism once on one of two fixed neighbouring datasets (the
    canary is IN for the ``tp + fn`` positive trials, OUT for the ``fp + tn`` negative
    ones) with fresh randomness, and the attack outputs a guess with a rule fixed
    before these trials were seen. If the mechanism is (epsilon, delta)-DP, then with
    probability at least ``confidence`` the returned value is ``<= epsilon``.

    The true-positive rate gets a one-sided Clopper--Pearson lower bound and the
    false-positive rate an upper bound, each at level ``(1 - confidence) / 2``.

    Parameters
    ----------
    tp, fn, fp, tn : int
        Confusion counts.
    delta : float, default=0.0
        The delta of the guarantee under test.
    confidence : float, default=0.95
        Joint coverage of the two rate bounds.

    Returns
    -------
    epsilon_lb : float
        ``>= 0``; ``0`` when the attack is no better than chance at this confidence.

    Examples
    --------
    >>> from skdp.auditing import epsilon_lower_bound
    >>> round(epsilon_lower_bound(tp=900, fn=100, fp=100, tn=900), 3)
    1.99
    """
    confidence = _check_confidence(confidence)
    counts = [int(c) for c in (tp, fn, fp, tn)]
    if min(counts) < 0:
        raise ValueError("confusion counts must be non-negative")
    tp, fn, fp, tn = counts
    if tp + fn == 0 or fp + tn == 0:
        return 0.0
    per_side = 1.0 - (1.0 - confidence) / 2.0
    tpr_lo = clopper_pearson(tp, tp + fn, confidence=per_side, side="lower")
    fpr_hi = clopper_pearson(fp, fp + tn, confidence=per_side, side="upper")
    return epsilon_from_rates(tpr_lo, fpr_hi, delta=delta)


def one_run_p_value(m, r, v, epsilon, delta=0.0):
    """P-value of "the mechanism is (epsilon, delta)-DP" from a one-run audit.

    Steinke, Nasr and Jagielski (2023), Theorem 3.1 and App. D: ``m`` canaries, ``r``
    non-abstaining guesses of which ``v`` are correct. With ``q = e^eps / (1 + e^eps)``,
    ``p = min(1, P[Bin(r, q) >= v] + 2 m delta max_{1<=i<=v} P[v-i <= Bin(r, q) < v] / i)``.

    Examples
    --------
    >>> from skdp.auditing import one_run_p_value
    >>> round(one_run_p_value(1000, 100, 70, 0.0), 5)
    4e-05
    """
    m, r, v = int(m), int(r), int(v)
    if not 0 <= v <= r <= m:
        raise ValueError("need 0 <= v <= r <= m")
    if epsilon < 0 or not 0 <= delta <= 1:
        raise ValueError("need epsilon >= 0 and 0 <= delta <= 1")
    q = 1.0 / (1.0 + math.exp(-epsilon)) if epsilon < 700 else 1.0
    tail = float(stats.binom.sf(v - 1, r, q))
    alpha = 0.0
    if delta > 0 and v > 0:
        i = np.arange(1, v + 1)
        partial = np.cumsum(stats.binom.pmf(v - i, r, q))
        alpha = float(np.max(partial / i))
    return min(1.0, tail + 2.0 * m * delta * alpha)


def one_run_epsilon_lower_bound(m, r, v, *, delta=0.0, confidence=0.95, n_bisect=40):
    """Largest epsilon rejected at level ``1 - confidence`` by a one-run audit.

    If the mechanism is (epsilon, delta)-DP, the returned bound exceeds epsilon with
    probability at most ``1 - confidence`` (Steinke et al. 2023, Thm 3.1). The p-value
    is non-decreasing in epsilon: the upper bracket is doubled from 1, then bisected;
    the lower end always satisfies ``p < beta`` (so the answer errs low).

    Examples
    --------
    >>> from skdp.auditing import one_run_epsilon_lower_bound
    >>> one_run_epsilon_lower_bound(1000, 100, 50)  # chance-level guessing
    0.0
    >>> 0 < one_run_epsilon_lower_bound(1000, 100, 90) < 2.2
    True
    """
    beta = 1.0 - _check_confidence(confidence)
    if one_run_p_value(m, r, v, 0.0, delta) >= beta:
        return 0.0
    lo, hi = 0.0, 1.0
    while one_run_p_value(m, r, v, hi, delta) < beta:
        lo, hi = hi, 2.0 * hi
        if hi > 1e4:  # every guess correct and r large: report the bracket reached
            return lo
    for _ in range(n_bisect):
        mid = 0.5 * (lo + hi)
        if one_run_p_value(m, r, v, mid, delta) < beta:
            lo = mid
        else:
            hi = mid
    return lo
