"""Sensitivity formulas, each written once.

Every function states the neighbouring relation it assumes and cites its source, and
has a brute-force test in ``tests/mechanisms/`` that enumerates neighbouring datasets
on a small domain and checks the bound (and its tightness where it is stated tight).

Add new formulas at the end of this file.
"""

from __future__ import annotations

__all__: list[str] = []


def auc_local_sensitivity(n_positive, n_negative):
    """Local sensitivity of the ROC AUC for class counts ``(n, m)``, either tie convention.

    ``LS_AUC(n, m) = 1 / min(n, m)`` when both classes are present, else ``1``
    (Lantz 2016, Thm 7.5). The bound holds for ``ties="sklearn"`` (a tied
    positive/negative pair counts 1/2, as in :func:`sklearn.metrics.roc_auc_score`) and for
    ``ties="pessimistic"`` (it counts 0) alike, and is attained for both.

    Neighbouring relation: **replace one row** (its label and/or its score may change),
    with the total ``N = n + m`` public and ``n``, ``m`` private.

    Parameters
    ----------
    n_positive, n_negative : int or array-like of int
        Number of positive and negative rows (broadcast together).

    Returns
    -------
    float or ndarray

    Notes
    -----
    ``AUC = (1 / (n m)) sum_{i neg, j pos} K(x_i, y_j)`` with a pair kernel
    ``K in [0, 1]`` (``1[x < y] + 1[x = y] / 2`` or ``1[x < y]``). Moving one negative
    changes its ``n`` pairs by at most 1 each: ``1 / m``; moving a positive: ``1 / n``.
    Turning a negative into a positive (any new score): with ``A`` the AUC of the other
    rows, ``a, b in [0, 1]`` the mean kernel of the changed row against the other class
    before and after, ``AUC' - AUC = (n A + b) / (n + 1) - ((m - 1) A + a) / m``, linear
    in ``A, a, b``; its extremes give ``|AUC' - AUC| <= 1 / min(m, n + 1)``
    (symmetrically ``1 / min(n, m + 1)``), both ``<= 1 / min(n, m)``. Only ``K in
    [0, 1]`` is used, so the half credit of ties changes nothing. With one class empty
    (AUC := 0.5) every change is ``<= 1``.

    References
    ----------
    .. [1] E. Lantz. "Machine Learning for Risk Prediction and Privacy in Electronic
       Health Records", PhD thesis, Thm 7.5, 2016.
    """
    import numpy as np

    n = np.asarray(n_positive, dtype=float)
    m = np.asarray(n_negative, dtype=float)
    both = (n > 0) & (m > 0)
    out = np.where(both, 1.0 / np.maximum(np.minimum(n, m), 1.0), 1.0)
    return float(out) if out.ndim == 0 else out


__all__ += ["auc_local_sensitivity"]


_TIES = ("sklearn", "pessimistic")


def _check_ties(ties):
    if ties not in _TIES:
        raise ValueError(f"ties must be 'sklearn' or 'pessimistic', got {ties!r}")
    return ties


def ap_local_sensitivity(n_positive, *, ties="sklearn", form="harmonic", cap=True):
    """Local sensitivity of average precision for ``n`` positive rows.

    With natural logs and harmonic numbers ``H_k`` (``H_0 = 0``), for ``n >= 2``:

    * ``ties="sklearn"`` (tied scores form one threshold, as in
      :func:`sklearn.metrics.average_precision_score`), derived in the Notes::

          "harmonic": max((H_n - 1) / (n - 1), (4 + H_{n-1}) / (4 n))
          "log":      max(log(n) / (n - 1), (5 + log(n - 1)) / (4 n))

    * ``ties="pessimistic"`` (negatives ranked above tied positives; Lantz 2016,
      Thm 7.7)::

          "harmonic": max((H_{n+1}-1)/n, (8+H_{n-1})/(4(n-1))) + max((H_{n+1}-1)/n, (8+H_n)/(4n))
          "log":      max(log(n+1)/n, (9+log(n-1))/(4(n-1))) + max(log(n+1)/n, (9+log n)/(4n))

    and ``1`` for ``n <= 1``. The log forms follow from ``H_k <= 1 + log k``. With
    ``cap=True`` (default) the value is capped at 1, a valid bound because AP lies in
    [0, 1]; the ``"sklearn"`` harmonic form never exceeds 1, the pessimistic one does for
    ``n <= 5`` (3.4375 at ``n = 2``).

    Neighbouring relation: **replace one row** (label and/or score may change), ``N``
    public, ``n`` private. ``AP = 0`` without positives and ``1`` without negatives.

    Parameters
    ----------
    n_positive : int or array-like of int
    ties : {"sklearn", "pessimistic"}, default="sklearn"
    form : {"harmonic", "log"}, default="harmonic"
    cap : bool, default=True

    Returns
    -------
    float or ndarray

    Notes
    -----
    ``ties="sklearn"``: ``AP = (1/n) sum_{j pos} T_j / (T_j + F_j)`` with
    ``T_j, F_j`` the numbers of positives and negatives scored ``>= y_j``; ranking the
    positives in decreasing score order (ties in any order) gives ``T_j >= rank(j)``.
    With ``u = T + F``, one more negative above ``y_j`` lowers its precision by
    ``T / (u (u + 1)) <= 1 / (T + 1)``, one more positive raises it by
    ``F / (u (u + 1)) <= 1 / (4 T)``. Hence, for the four kinds of replacement:

    * move a negative: the positives it passes all lose (or all gain) precision,
      ``|dAP| <= (1/n) sum_j 1 / (T_j + 1) <= (H_{n+1} - 1) / n``;
    * move a positive (upwards; downwards is the reverse): ``n dAP`` is the sum of the
      gains ``<= 1 / (4 T_j)`` of the positives passed plus the change of the moved
      positive's own precision, in ``[-1, 1]``: ``|dAP| <= (4 + H_{n-1}) / (4 n)``;
    * positive ``r`` to negative (``n -> n - 1``): with ``pi_j`` the precisions in
      ``D``, ``d_j >= 0`` the precision losses of the other positives and ``S`` their
      mean, ``AP - AP' = (1 / (n - 1)) sum_{j != r} d_j + (pi_r - S) / n
      <= (1 / (n - 1)) sum_{j != r} (d_j + (1 - pi_j) / n)``. In each of the three cases
      (a negative added above ``y_j``, positive ``r`` removed from above it, or both)
      ``d_j + (1 - pi_j) / n <= 1 / (T'_j + 1)``, ``T'_j <= n - 1`` the count in ``D'``
      (this uses ``n >= T'_j + 1``), so ``AP - AP' <= (H_n - 1) / (n - 1)``; and
      ``AP' - AP <= S / n <= 1 / n``;
    * negative to positive (``n -> n + 1``): the reverse, ``(H_{n+1} - 1) / n``.

    The maximum over the four is the formula above (``(H_n - 1) / (n - 1)`` decreases in
    ``n``). It is attained for ``n >= 5`` (``n`` positives at the top, the lowest
    replaced by a negative above them all: ``AP`` falls from 1 to
    ``1 - (H_n - 1) / (n - 1)``); for ``n = 2, 3, 4`` the largest change is 80 %, 91 %
    and 99 % of it (exhaustive search).

    ``ties="pessimistic"``: Lantz 2016, Thm 7.7, eqs. (7.8) and (7.31); a replacement is
    a removal plus an addition, whose bounds the two ``max`` terms are.

    References
    ----------
    .. [1] E. Lantz. "Machine Learning for Risk Prediction and Privacy in Electronic
       Health Records", PhD thesis, Thm 7.7, 2016.
    .. [2] K. Boyd, E. Lantz, D. Page. "Differential privacy for classifier evaluation".
       AISec 2015.
    """
    import numpy as np
    from scipy.special import digamma

    _check_ties(ties)
    if form not in ("harmonic", "log"):
        raise ValueError(f"form must be 'harmonic' or 'log', got {form!r}")
    n = np.asarray(n_positive, dtype=float)
    big = n > 1
    nn = np.where(big, n, 2.0)  # placeholder where n <= 1 (result replaced by 1 below)
    if form == "log":

        def harmonic_bound(k):  # H_k <= 1 + log k for k >= 1
            return 1.0 + np.log(k)

    else:

        def harmonic_bound(k):
            return digamma(k + 1.0) + np.euler_gamma

    if ties == "sklearn":
        # "log": (H_n - 1) <= log n; (4 + H_{n-1}) <= 5 + log(n - 1)
        flip = (harmonic_bound(nn) - 1.0) / (nn - 1.0)
        move_pos = (4.0 + harmonic_bound(nn - 1.0)) / (4.0 * nn)
        value = np.maximum(flip, move_pos)
    elif form == "log":
        a = np.log(nn + 1.0) / nn
        rem = (9.0 + np.log(nn - 1.0)) / (4.0 * (nn - 1.0))
        add = (9.0 + np.log(nn)) / (4.0 * nn)
        value = np.maximum(a, rem) + np.maximum(a, add)
    else:
        a = (harmonic_bound(nn + 1.0) - 1.0) / nn
        rem = (8.0 + harmonic_bound(nn - 1.0)) / (4.0 * (nn - 1.0))
        add = (8.0 + harmonic_bound(nn)) / (4.0 * nn)
        value = np.maximum(a, rem) + np.maximum(a, add)
    out = np.where(big, value, 1.0)
    if cap:
        out = np.minimum(out, 1.0)
    return float(out) if out.ndim == 0 else out


__all__ += ["ap_local_sensitivity"]


def count_smooth_sensitivity(local_sensitivities, n, beta):
    """beta-smooth sensitivity of a statistic whose local sensitivity depends on one count.

    ``S*_beta(D) = max_{0 <= i <= N} LS(i) * exp(-beta * |i - n|)`` where ``LS(i)`` is the
    local sensitivity of a dataset of size ``N`` with count ``i`` (``local_sensitivities``
    holds ``LS(0), ..., LS(N)``) and ``n`` is the count of ``D``. This is Lantz 2016
    Thm 7.6 (AUC, ``LS(i) = LS_AUC(i, N - i)``) and Thm 7.8 (AP, ``LS(i) = LS_AP(i)``);
    smooth sensitivity per Nissim, Raskhodnikova and Smith 2007 (Lantz 2016, Def 7.3).

    Neighbouring relation: **replace one row** with ``N`` public: a replacement changes
    the count by at most one and any count ``i`` is reachable in ``|i - n|`` replacements,
    so ``d(D, D') >= |n_D - n_D'|`` with equality achievable. The result satisfies
    ``S*(D) >= LS(n)`` and ``S*(D) <= exp(beta) * S*(D')`` for neighbours. Cost O(N).

    Parameters
    ----------
    local_sensitivities : array-like of shape (N + 1,)
    n : int
        Count of the dataset (``0 <= n <= N``).
    beta : float
        Smoothing parameter, ``>= 0`` (``inf`` gives the local sensitivity itself).

    Returns
    -------
    float
    """
    import numpy as np

    ls = np.asarray(local_sensitivities, dtype=float)
    n = int(n)
    if ls.ndim != 1 or not 0 <= n < ls.shape[0]:
        raise ValueError("local_sensitivities must be 1-D with n inside its range")
    beta = float(beta)
    if not beta >= 0:
        raise ValueError("beta must be >= 0")
    if np.isinf(beta):
        return float(ls[n])
    dist = np.abs(np.arange(ls.shape[0], dtype=float) - n)
    return float(np.max(ls * np.exp(-beta * dist)))


__all__ += ["count_smooth_sensitivity"]


def auc_smooth_sensitivity(n_positive, n_total, beta):
    """beta-smooth sensitivity of the ROC AUC (Lantz 2016 Thm 7.6), either tie convention.

    ``S*_{AUC,beta} = max_{0 <= i <= N} LS_AUC(i, N - i) * exp(-beta * |i - n|)`` with
    :func:`auc_local_sensitivity` and :func:`count_smooth_sensitivity` (Nissim,
    Raskhodnikova and Smith 2007).

    Neighbouring relation: **replace one row**, ``N = n_total`` public, ``n`` private.
    The value depends on the private ``n``: never release or store it.

    Parameters
    ----------
    n_positive : int
    n_total : int
    beta : float

    Returns
    -------
    float
    """
    import numpy as np

    i = np.arange(int(n_total) + 1)
    return count_smooth_sensitivity(auc_local_sensitivity(i, int(n_total) - i), n_positive, beta)


__all__ += ["auc_smooth_sensitivity"]


def ap_smooth_sensitivity(n_positive, n_total, beta, *, ties="sklearn", form="harmonic", cap=True):
    """beta-smooth sensitivity of average precision (Lantz 2016 Thm 7.8).

    ``S*_{AP,beta} = max_{0 <= i <= N} LS_AP(i) * exp(-beta * |i - n|)`` with
    :func:`ap_local_sensitivity` (``ties``, ``form``, ``cap``) and
    :func:`count_smooth_sensitivity`. ``LS_AP`` bounds the local sensitivity of every data
    set with ``i`` positives and a replacement changes the count by at most one, so this
    is a beta-smooth upper bound (Nissim, Raskhodnikova and Smith 2007, Def 2.1) for
    either tie convention.

    Neighbouring relation: **replace one row**, ``N = n_total`` public, ``n`` private.
    The value depends on the private ``n``: never release or store it.

    Parameters
    ----------
    n_positive : int
    n_total : int
    beta : float
    ties : {"sklearn", "pessimistic"}, default="sklearn"
    form : {"harmonic", "log"}, default="harmonic"
    cap : bool, default=True

    Returns
    -------
    float
    """
    import numpy as np

    i = np.arange(int(n_total) + 1)
    ls = ap_local_sensitivity(i, ties=ties, form=form, cap=cap)
    return count_smooth_sensitivity(ls, n_positive, beta)


__all__ += ["ap_smooth_sensitivity"]


def functional_mechanism_sensitivity(n_features, *, fit_intercept=True, replace_one=False):
    """L1 sensitivity of the least-squares objective's coefficients (functional mechanism).

    The objective ``sum_i (y_i - w . x~_i)^2`` has degree-2 coefficients
    ``M = X~^T X~`` (all ``d'^2`` entries) and degree-1 coefficients ``alpha = -2 X~^T y``
    (``d'`` entries), where ``X~`` is ``X`` scaled to ``[-1, 1]`` plus, with
    ``fit_intercept``, a column of ones, so ``d' = n_features + fit_intercept``. One row
    with ``|x~_j| <= 1`` and ``|y| <= 1`` moves ``[vec(M), alpha]`` by at most
    ``sum_{j,l} |x~_j x~_l| + sum_j |2 y x~_j| <= d'^2 + 2 d'`` in L1
    (Zhang et al. 2012; Lantz 2016 §5.4.2; the brute-force test in
    ``tests/mechanisms/`` shows the bound is attained).

    Neighbouring relation: **add/remove one row** (library default,
    :ref:`neighbouring-relation`): ``Delta = d'^2 + 2 d'``. With ``replace_one=True`` the
    replace-one bound ``2 d'^2 + 4 d'`` (the authors' Matlab ``Functional_Linear.m``) is
    returned.

    Parameters
    ----------
    n_features : int
        Number of features ``p`` (not counting the intercept column).
    fit_intercept : bool, default=True
    replace_one : bool, default=False

    Returns
    -------
    float
    """
    p = int(n_features)
    if p < 0:
        raise ValueError("n_features must be >= 0")
    d = p + int(bool(fit_intercept))
    delta = float(d * d + 2 * d)
    return 2.0 * delta if replace_one else delta


__all__ += ["functional_mechanism_sensitivity"]


def histogram_sensitivity(*, replace_one=False):
    """L1 sensitivity of a full histogram (vector of cell counts over a public domain).

    Every record falls in exactly one cell, so adding or removing one record changes one
    count by 1: ``Delta = 1`` and Laplace noise of scale ``1/epsilon`` on every cell is
    epsilon-DP (Lantz 2016 §5.4.1; Vinterbo 2012).

    Neighbouring relation: **add/remove one row** (library default,
    :ref:`neighbouring-relation`). With ``replace_one=True`` two counts change by 1 each:
    ``Delta = 2``.

    Returns
    -------
    float
    """
    return 2.0 if replace_one else 1.0


__all__ += ["histogram_sensitivity"]


def kmedian_cost_sensitivity(*, candidates=None, bounds=None, metric="euclidean"):
    """Sensitivity of the (truncated) k-median cost: the diameter of the public domain.

    ``Delta = max_{v, w} d(v, w)`` over the public candidate set ``V`` (``candidates``)
    or over the public box ``bounds = (lo, hi)`` (Lantz 2016 §8.3.1; Lantz, Boyd and
    Page 2015). It depends on public quantities only.

    Neighbouring relation: **add, remove or move one private point** (the thesis's
    relation for ch. 8, which includes the library default add/remove). The quality
    ``q(D, F) = -sum_{x in D} min(Delta, d(x, F))`` then changes by at most ``Delta`` for
    any centre set ``F``: one term appears, disappears or changes, and every term lies in
    ``[0, Delta]``. Without the truncation the same bound holds whenever private points
    lie in the convex hull of ``V`` (Euclidean/Manhattan distance to a point is convex,
    so its maximum over the hull is attained at a point of ``V``). Tight: removing a
    point at distance ``Delta`` from ``F``.

    Parameters
    ----------
    candidates : array-like of shape (n_points, n_features), optional
    bounds : (lo, hi) pair of arrays of shape (n_features,), optional
        Used when ``candidates`` is None.
    metric : {"euclidean", "manhattan"}, default="euclidean"

    Returns
    -------
    float
    """
    import numpy as np
    from scipy.spatial.distance import cdist

    scipy_metric = {"euclidean": "euclidean", "manhattan": "cityblock"}[metric]
    if candidates is not None:
        V = np.asarray(candidates, dtype=float)
        if V.ndim != 2:
            raise ValueError("candidates must be a 2-D array")
        best = 0.0
        step = max(1, (1 << 22) // max(V.shape[0], 1))
        for i in range(0, V.shape[0], step):
            best = max(best, float(cdist(V[i : i + step], V, metric=scipy_metric).max()))
        return best
    if bounds is None:
        raise ValueError("pass candidates or bounds")
    lo, hi = (np.asarray(b, dtype=float) for b in bounds)
    width = np.abs(hi - lo)
    return float(np.sqrt((width**2).sum()) if metric == "euclidean" else width.sum())


__all__ += ["kmedian_cost_sensitivity"]


def ilp_query_alpha(epsilon, n_clauses, *, n_rounds=1, n_levels=1):
    """Inverse scale of the two-sided geometric noise on one ILP coverage count.

    ``alpha = epsilon / (n_rounds * n_levels * n_clauses)`` (Lantz 2016 Thm 6.6 + Thm 6.1 +
    composition; Zeng et al. 2014).
    The ``2 * n_clauses`` counts ``(q+_h(E+), q_h(E-))`` of one batch of ``n_clauses``
    clauses have L1 sensitivity ``n_clauses`` (one added example changes, for each
    clause, at most one of its two counts, by 1; attained by a positive all-ones row), so
    ``G(alpha)`` on each with ``alpha = epsilon_batch / n_clauses`` is
    ``epsilon_batch``-DP; a theory of ``n_rounds`` clauses searched over ``n_levels``
    levels gives ``epsilon_batch = epsilon / (n_rounds * n_levels)``.

    * smart reduction (Alg. 4): ``n_levels = max_clause_length + 1`` and ``n_clauses =``
      ``beta_i``, the number of clauses evaluated at level ``i`` (the thesis's "k
      predicates" is a typo for level ``i``);
    * naive reduction (Alg. 3): ``n_levels = 1`` and ``n_clauses`` = the size of the
      whole lattice searched, ``sum_{i <= l} C(|H_b|, i)``.

    ``G(alpha)`` has pmf ``proportional to exp(-alpha |s|)``: ``alpha`` is an *inverse*
    scale (larger = less noise).

    Neighbouring relation: **add/remove one example** (ch. 6; the library default).

    Returns
    -------
    float
        ``inf`` when ``epsilon`` is ``inf`` (no noise).
    """
    n_clauses, n_rounds, n_levels = int(n_clauses), int(n_rounds), int(n_levels)
    if min(n_clauses, n_rounds, n_levels) < 1:
        raise ValueError("n_clauses, n_rounds and n_levels must be >= 1")
    return float(epsilon) / (n_rounds * n_levels * n_clauses)


__all__ += ["ilp_query_alpha"]


def ilp_epsilon_lower_bound(n_atoms, delta, eta, n_records, *, form="proof"):
    """Smallest epsilon any epsilon-DP, (delta, eta)-useful ILP algorithm can have.

    Lantz 2016 Theorem 6.5 (Zeng et al. 2014); the theorem as printed does not match
    its proof, hence the two forms below. With ``n`` atoms and ``|D|`` records, group
    privacy over the
    ``2((1 - delta)|D| + 1)`` rows in which the proof's two datasets differ gives

    * ``form="proof"`` (default, what the proof shows):
      ``epsilon >= (n ln 2 + ln(1 - eta)) / (2 ((1 - delta) |D| + 1))``;
    * ``form="thesis"`` (the theorem as printed):
      ``epsilon >= n ln 2 (1 - eta) / (2 ((1 - delta) |D| + 1))``.

    Neighbouring relation: **add/remove one example** (ch. 6).

    Parameters
    ----------
    n_atoms : int
        Number of atoms ``n`` of the hypothesis language.
    delta : float in [0, 1]
        Usefulness fraction.
    eta : float in [0, 1)
        Failure probability.
    n_records : int
    form : {"proof", "thesis"}

    Returns
    -------
    float

    Examples
    --------
    >>> round(ilp_epsilon_lower_bound(10, 0.9, 0.1, 100), 5)
    0.31028
    >>> round(ilp_epsilon_lower_bound(10, 0.9, 0.1, 100, form="thesis"), 5)
    0.28356
    """
    import math

    if form not in ("proof", "thesis"):
        raise ValueError(f"form must be 'proof' or 'thesis', got {form!r}")
    if not 0.0 <= delta <= 1.0:
        raise ValueError("delta must be in [0, 1]")
    if not 0.0 <= eta < 1.0:
        raise ValueError("eta must be in [0, 1)")
    if n_atoms < 0 or n_records < 0:
        raise ValueError("n_atoms and n_records must be >= 0")
    denom = 2.0 * ((1.0 - delta) * n_records + 1.0)
    if form == "proof":
        return (n_atoms * math.log(2.0) + math.log1p(-eta)) / denom
    return n_atoms * math.log(2.0) * (1.0 - eta) / denom


__all__ += ["ilp_epsilon_lower_bound"]


def _check_neighbor(neighbor):
    if neighbor not in ("add_remove", "replace"):
        raise ValueError(f"neighbor must be 'add_remove' or 'replace', got {neighbor!r}")
    return neighbor


def count_sensitivity(*, neighbor="add_remove"):
    """Sensitivity of one count ``#{rows : predicate(row)}``: ``1``.

    Neighbouring relation: **add/remove one row** (library default) or **replace one
    row** (``neighbor="replace"``): either way a single count changes by at most 1
    (Dwork et al. 2006; Lantz 2016 §2.4). For a whole histogram
    (disjoint cells) use :func:`histogram_sensitivity` (L1: 1 add/remove, 2 replace).

    Parameters
    ----------
    neighbor : {"add_remove", "replace"}, default="add_remove"

    Returns
    -------
    float
    """
    _check_neighbor(neighbor)
    return 1.0


__all__ += ["count_sensitivity"]


def bounded_sum_sensitivity(lo, hi, *, neighbor="add_remove"):
    """Per-coordinate sensitivity of ``sum(clip(x, lo, hi))``.

    * add/remove one row (library default): ``max(|lo|, |hi|)`` (the added or removed
      value itself);
    * replace one row: ``hi − lo``.

    Tight in both cases (Dwork & Roth 2014 §3.3; :ref:`neighbouring-relation`). For a
    vector-valued sum the L1 sensitivity is the sum of the returned coordinates and
    the L2 sensitivity is bounded by their Euclidean norm.

    Parameters
    ----------
    lo, hi : float or array-like (broadcast), ``lo <= hi``
    neighbor : {"add_remove", "replace"}, default="add_remove"

    Returns
    -------
    float or ndarray
    """
    import numpy as np

    _check_neighbor(neighbor)
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    if np.any(lo > hi) or not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError("bounds must be finite with lo <= hi")
    out = np.maximum(np.abs(lo), np.abs(hi)) if neighbor == "add_remove" else hi - lo
    return float(out) if out.ndim == 0 else out


__all__ += ["bounded_sum_sensitivity"]


def bounded_mean_sensitivity(lo, hi, n, *, neighbor="add_remove"):
    """Sensitivity of the mean ``sum(clip(x, lo, hi)) / n`` with a **public** ``n``.

    The estimator divides the clipped sum by the public row count ``n`` (library
    default relation: add/remove one row, ``n`` public; :ref:`neighbouring-relation`), so the
    sensitivity is :func:`bounded_sum_sensitivity` divided by ``n``:
    ``max(|lo|, |hi|) / n`` (add/remove) or ``(hi − lo) / n`` (replace). Dividing by the
    private, actual row count is a different query and is not covered.

    Parameters
    ----------
    lo, hi : float or array-like
    n : int, ``>= 1``
        Public number of rows.
    neighbor : {"add_remove", "replace"}, default="add_remove"

    Returns
    -------
    float or ndarray
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return bounded_sum_sensitivity(lo, hi, neighbor=neighbor) / float(n)


__all__ += ["bounded_mean_sensitivity"]


def quantile_utility_sensitivity(*, neighbor="add_remove"):
    """Sensitivity of the quantile utility ``u(D, y) = −|#{x in D : x < y} − q |D||``: ``1``.

    Used by :func:`skdp.mechanisms.private_quantile` (Smith 2011). Add/remove one
    row changes the rank by 0 or 1 and ``q |D|`` by ``q``, in the same direction, so
    ``u`` moves by at most ``max(q, 1 − q) <= 1``; replace one row keeps ``|D|`` and
    moves the rank by at most 1.

    Parameters
    ----------
    neighbor : {"add_remove", "replace"}, default="add_remove"

    Returns
    -------
    float
    """
    _check_neighbor(neighbor)
    return 1.0


__all__ += ["quantile_utility_sensitivity"]


def expm_squared_loss_sensitivity(lo, hi, *, n_classes=None):
    """Sensitivity ``s`` of the summed squared-loss utility of the ExpM+NF estimators.

    ``u(theta; D) = -(sum_{rows} ||y_hat(x, theta) - y||^2 + r(theta))`` with targets and
    model outputs confined to ``[lo, hi]`` for every row and every ``theta`` (a sigmoid or
    clipped output) and a data-independent ``r``. Each row's loss lies in ``[0, (hi - lo)^2]``,
    so ``s = (hi - lo)^2`` (Bridges, Tombs & Stanley 2023, Thm 3.1). The bound holds, and is
    attained, under **both** add/remove one row (``|Δu| = l(z, theta)``) and replace-one
    (``|Δu| = |l(z) - l(z')|``); no bound on the features is needed. With
    ``n_classes = K >= 2`` (one-hot targets, softmax outputs, loss
    summed over the ``K`` outputs, ``lo=0, hi=1``) the per-row loss lies in ``[0, 2]`` and
    ``s = 2`` (``p = e_k``, ``y = e_j`` give ``||p - y||^2 = 2``; Cor. 3.2 of Bridges,
    Tombs & Stanley 2023 states ``s <= 1``, which is wrong for that case).

    The exponential mechanism then uses the exponent ``epsilon * u / (2 s)``.

    Parameters
    ----------
    lo, hi : float
        Public bounds of targets and outputs, ``lo < hi``, finite.
    n_classes : None or int, default=None
        ``None`` for a scalar output; ``K >= 2`` for one-hot/softmax outputs (needs
        ``lo=0``, ``hi=1``).

    Returns
    -------
    float
    """
    import math

    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError("bounds must be finite with lo < hi")
    if n_classes is None:
        return (hi - lo) ** 2
    if int(n_classes) < 2 or (lo, hi) != (0.0, 1.0):
        raise ValueError("n_classes must be >= 2 with bounds (0, 1)")
    return 2.0


__all__ += ["expm_squared_loss_sensitivity"]


def _check_n_features(n_features, fit_intercept):
    p = int(n_features)
    if p < 0:
        raise ValueError("n_features must be >= 0")
    d = p + int(bool(fit_intercept))
    if d == 0:
        raise ValueError("no coefficients: n_features=0 without an intercept")
    return p, d


def sufficient_statistics_sensitivity(
    n_features, *, fit_intercept=True, target_weight=1.0, norm="l1"
):
    """Sensitivity of the distinct least-squares sufficient statistics (add/remove one row).

    The released vector is the upper triangle (diagonal included) of ``X~^T X~`` followed
    by ``target_weight * X~^T y~``, where every row ``x~`` of ``X~`` is a feature row
    scaled into ``[-1, 1]^p`` plus, with ``fit_intercept``, a constant 1, and
    ``|y~| <= 1``. With ``fit_intercept`` the corner entry ``sum_i 1 * 1 = n`` is left
    out: ``n`` is public. ``d' = p + fit_intercept``.

    Neighbouring relation: **add/remove one row**, ``n`` public. Adding or removing a
    row moves every statistic by that row's own term, so the sensitivity is the largest
    norm of one row's terms:

    * ``norm="l1"``: ``sum_{j<=l<=p} |x_j x_l| + fit_intercept * sum_j |x_j|
      + w |y~| (sum_j |x_j| + fit_intercept) <= p (p + 1) / 2 + fit_intercept * p + w d'``
      (that is ``d' (d' + 1) / 2 - 1 + w d'`` with an intercept);
    * ``norm="l2"``: the square root of ``sum_{j<=l<=p} x_j^2 x_l^2 + fit_intercept *
      sum_j x_j^2 + w^2 y~^2 (sum_j x_j^2 + fit_intercept) <= p (p + 1) / 2 +
      fit_intercept * p + w^2 d'``.

    Both bounds are attained at a corner of the box (every ``|x_j| = 1``, ``|y~| = 1``).
    Compared with the functional mechanism's ``d'^2 + 2 d'``
    (:func:`functional_mechanism_sensitivity`, which perturbs every entry of the
    symmetric matrix and counts each off-diagonal term twice), the L1 sensitivity of the
    distinct entries is about half, for the same information.

    Parameters
    ----------
    n_features : int
        Number of features ``p`` (not counting the intercept column).
    fit_intercept : bool, default=True
    target_weight : float, default=1.0
        Weight ``w > 0`` of the ``X~^T y~`` block in the released vector.
    norm : {"l1", "l2"}, default="l1"

    Returns
    -------
    float

    References
    ----------
    Y.-X. Wang. "Revisiting differentially private linear regression: optimal and
    adaptive prediction & estimation in unbounded domain." UAI 2018 (sufficient
    statistics perturbation).

    Examples
    --------
    >>> from skdp.mechanisms.sensitivity import sufficient_statistics_sensitivity
    >>> sufficient_statistics_sensitivity(3)  # 6 + 3 + 4
    13.0
    >>> round(sufficient_statistics_sensitivity(3, norm="l2") ** 2, 9)
    13.0
    """
    import math

    p, d = _check_n_features(n_features, fit_intercept)
    w = float(target_weight)
    if not (math.isfinite(w) and w > 0):
        raise ValueError("target_weight must be a finite number > 0")
    gram = p * (p + 1) / 2 + (p if fit_intercept else 0)
    if norm == "l1":
        return float(gram + w * d)
    if norm == "l2":
        return float(math.sqrt(gram + w * w * d))
    raise ValueError(f"norm must be 'l1' or 'l2', got {norm!r}")


__all__ += ["sufficient_statistics_sensitivity"]


def gram_min_eigenvalue_sensitivity(n_features, *, fit_intercept=True):
    """Sensitivity of the smallest eigenvalue of ``X~^T X~`` (add/remove one row).

    Rows are scaled into ``[-1, 1]^p`` and, with ``fit_intercept``, extended by a
    constant 1, so ``||x~||^2 <= d' = p + fit_intercept``. Adding a row gives
    ``X~^T X~ + x~ x~^T``; by Weyl's inequality every eigenvalue moves up by between 0
    and ``||x~||^2``, so ``0 <= lambda_min(after) - lambda_min(before) <= d'`` (and
    removing a row is the same step backwards). The bound is attained: take a Gram
    matrix whose smallest eigenvector is ``x~ = (1, ..., 1)`` and whose other
    eigenvalues exceed the smallest by more than ``d'``.

    Neighbouring relation: **add/remove one row**. Returns ``d'`` (an L1 and L2
    sensitivity: the value is a scalar).

    Parameters
    ----------
    n_features : int
        Number of features ``p`` (not counting the intercept column).
    fit_intercept : bool, default=True

    Returns
    -------
    float

    References
    ----------
    Y.-X. Wang. "Revisiting differentially private linear regression: optimal and
    adaptive prediction & estimation in unbounded domain." UAI 2018, Algorithm 2
    (AdaSSP), where ``||X||^2`` plays the role of ``d'``.

    Examples
    --------
    >>> from skdp.mechanisms.sensitivity import gram_min_eigenvalue_sensitivity
    >>> gram_min_eigenvalue_sensitivity(3), gram_min_eigenvalue_sensitivity(3, fit_intercept=False)
    (4.0, 3.0)
    """
    _, d = _check_n_features(n_features, fit_intercept)
    return float(d)


__all__ += ["gram_min_eigenvalue_sensitivity"]
