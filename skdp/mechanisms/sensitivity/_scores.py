"""Sensitivities of the DP ranking scores: ROC AUC and average precision (Lantz 2016, ch. 7).

Local sensitivities over the class counts and their beta-smooth upper bounds (Nissim,
Raskhodnikova and Smith 2007); public via :mod:`skdp.mechanisms.sensitivity`.
"""

from __future__ import annotations

from skdp.utils._docstrings import insert_docs
from skdp.utils._groups import check_max_rows_per_group


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


#: The relation and parameters the two smooth sensitivities of a ranking metric share.
_DOCS = dict(
    smooth_count_inputs="""\
Neighbouring relation: **replace one row**, ``N = n_total`` public, ``n`` private.
The value depends on the private ``n``: never release or store it.

Parameters
----------
n_positive : int
n_total : int
beta : float""",
)


@insert_docs(**_DOCS)
def auc_smooth_sensitivity(n_positive, n_total, beta):
    """beta-smooth sensitivity of the ROC AUC (Lantz 2016 Thm 7.6), either tie convention.

    ``S*_{AUC,beta} = max_{0 <= i <= N} LS_AUC(i, N - i) * exp(-beta * |i - n|)`` with
    :func:`auc_local_sensitivity` and :func:`count_smooth_sensitivity` (Nissim,
    Raskhodnikova and Smith 2007).

    {smooth_count_inputs}

    Returns
    -------
    float
    """
    import numpy as np

    i = np.arange(int(n_total) + 1)
    return count_smooth_sensitivity(auc_local_sensitivity(i, int(n_total) - i), n_positive, beta)


@insert_docs(**_DOCS)
def ap_smooth_sensitivity(n_positive, n_total, beta, *, ties="sklearn", form="harmonic", cap=True):
    """beta-smooth sensitivity of average precision (Lantz 2016 Thm 7.8).

    ``S*_{AP,beta} = max_{0 <= i <= N} LS_AP(i) * exp(-beta * |i - n|)`` with
    :func:`ap_local_sensitivity` (``ties``, ``form``, ``cap``) and
    :func:`count_smooth_sensitivity`. ``LS_AP`` bounds the local sensitivity of every data
    set with ``i`` positives and a replacement changes the count by at most one, so this
    is a beta-smooth upper bound (Nissim, Raskhodnikova and Smith 2007, Def 2.1) for
    either tie convention.

    {smooth_count_inputs}
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


# ------------------------------------------------------------------ one patient (k rows)
#: The relation of the group-level functions below, written once.
_DOCS_GROUP = dict(
    group_relation="""\
Neighbouring relation: **add or remove one group (patient) with all its rows**, each
group bounded to at most ``k = max_rows_per_group`` rows before the metric is computed
(:mod:`skdp.utils._groups`); the class counts and the number of rows are private (an
added patient changes them). ``k = 1`` is add/remove one row.""",
)


def _group_k(max_rows_per_group):
    return check_max_rows_per_group(max_rows_per_group)


@insert_docs(**_DOCS_GROUP)
def auc_group_local_sensitivity(n_positive, n_negative, max_rows_per_group):
    """Local sensitivity of the ROC AUC when one patient of at most ``k`` rows is added or
    removed: ``min(1, k / min(n, m))``, and ``1`` when a class is empty.

    {group_relation}

    Parameters
    ----------
    n_positive, n_negative : int or array-like of int
        Class counts ``(n, m)`` of the (bounded) data set (broadcast together).
    max_rows_per_group : int
        ``k >= 1``.

    Returns
    -------
    float or ndarray

    Notes
    -----
    ``AUC = (1 / (n m)) sum K`` over the ``n m`` (negative, positive) pairs, with a pair
    kernel ``K in [0, 1]`` (either tie convention). Adding a patient with ``a`` positive
    and ``c`` negative rows (``a + c <= k``) to a data set with ``n, m >= 1`` keeps the
    old pairs and adds ``W' - W`` new ones, ``W = n m``, ``W' = (n + a)(m + c)``; with
    ``A`` the old AUC and ``S in [0, W' - W]`` the kernel sum of the new pairs,
    ``AUC' - A = (S - (W' - W) A) / W'``, so ``|AUC' - A| <= 1 - W / W'``: the share of
    the new data set's pairs that involve the patient (attained: ``A = 1``, ``S = 0``).
    ``(n + a)(m + k - a)`` is concave in ``a``, so the share is largest at ``a = 0`` or
    ``a = k``: ``k / (min(n, m) + k)``. Removing the patient from ``(n, m)`` likewise
    changes the AUC by at most ``1 - (n - a)(m - c) / (n m) <= min(k, s) / s``,
    ``s = min(n, m)`` (when the removal empties a class the AUC becomes 0.5 and the
    change is at most 1/2 <= 1). The larger of the two is ``min(1, k / s)``. With a class
    empty the AUC is 0.5 and any change is at most 1. For ``k = 1`` this is
    :func:`auc_local_sensitivity` (``1 / min(n, m)``), for add/remove.

    The bound depends on ``s = min(n, m)`` only, is non-increasing in it, and one patient
    changes ``s`` by at most ``k``: :func:`group_count_smooth_sensitivity` turns it into a
    smooth bound.

    Examples
    --------
    >>> from skdp.mechanisms.sensitivity import auc_group_local_sensitivity
    >>> auc_group_local_sensitivity(100, 400, 5)
    0.05
    """
    import numpy as np

    k = float(_group_k(max_rows_per_group))
    s = np.minimum(np.asarray(n_positive, dtype=float), np.asarray(n_negative, dtype=float))
    out = np.where(s > 0, np.minimum(1.0, k / np.maximum(s, 1.0)), 1.0)
    return float(out) if out.ndim == 0 else out


def _ap_row_step(n, form):
    """``G(n)``: the largest change of AP when one row is added to a data set with ``n``
    positives (``1`` for ``n = 0``); non-increasing in ``n`` (see
    :func:`ap_group_local_sensitivity`)."""
    import numpy as np
    from scipy.special import digamma

    n = np.asarray(n, dtype=float)
    nn = np.maximum(n, 1.0)
    if form == "log":  # H_{n+1} - 1 <= log(n + 1), 4 + H_n <= 5 + log n
        neg = np.log(nn + 1.0) / nn
        pos = (5.0 + np.log(nn)) / (4.0 * (nn + 1.0))
    else:
        h = digamma(nn + 1.0) + np.euler_gamma  # H_n
        neg = (h + 1.0 / (nn + 1.0) - 1.0) / nn
        pos = (4.0 + h) / (4.0 * (nn + 1.0))
    return np.where(n >= 1, np.maximum(neg, pos), 1.0)


@insert_docs(**_DOCS_GROUP)
def ap_group_local_sensitivity(n_positive, max_rows_per_group, *, form="harmonic"):
    """Local sensitivity of average precision when one patient of at most ``k`` rows is
    added or removed: ``min(1, k G(max(0, n - k)))``, either tie convention.

    ``G(0) = 1`` and, for ``j >= 1`` (harmonic numbers ``H_j``)::

        "harmonic": G(j) = max((H_{j+1} - 1) / j, (4 + H_j) / (4 (j + 1)))
        "log":      G(j) = max(log(j + 1) / j, (5 + log j) / (4 (j + 1)))

    {group_relation}

    Parameters
    ----------
    n_positive : int or array-like of int
        Number ``n`` of positive rows of the (bounded) data set.
    max_rows_per_group : int
        ``k >= 1``.
    form : {"harmonic", "log"}, default="harmonic"
        The harmonic bound or its logarithmic upper bound (``H_j <= 1 + log j``).

    Returns
    -------
    float or ndarray

    Notes
    -----
    ``AP = (1/n) sum_j pi_j`` over the positives, ``pi_j = T_j / (T_j + F_j)`` (positives
    and negatives counted at or above ``y_j``; ``"sklearn"`` ties) or ``j / (j + F_j)``
    (the ``j``-th positive; ``"pessimistic"`` ties). In both, ranking the positives in
    decreasing order, positive ``j`` has ``T_j >= j``. **One row added** to a data set
    ``X`` with ``j0 >= 1`` positives:

    * a negative lowers the precision of each positive it passes by
      ``T / (u (u + 1)) <= 1 / (T + 1)`` (``u = T + F``), so
      ``|dAP| <= (1 / j0) sum_{j <= j0} 1 / (j + 1) = (H_{j0+1} - 1) / j0``;
    * a positive raises the precision of each positive it passes by
      ``F / (u (u + 1)) <= 1 / (4 T)`` (``u^2 >= 4 T F``) and brings its own precision
      ``pi in [0, 1]``: ``(j0 + 1) AP' = j0 AP + sum_j d_j + pi``, so
      ``|AP' - AP| <= (1 + H_{j0} / 4) / (j0 + 1)``;

    and ``G(0) = 1`` (AP lies in [0, 1]). Both terms decrease in ``j0``, so ``G`` is
    non-increasing. **A patient** is a path of at most ``k`` one-row additions: added to
    ``D`` (``n`` positives), every intermediate set has at least ``n`` positives; removed
    from ``D``, the path from ``D`` minus the patient back to ``D`` passes through sets
    with at least ``n - k`` positives. By the triangle inequality the change is at most
    ``k G(max(0, n - k))``; AP lies in [0, 1], hence the cap. The bound is coarse (a
    patient's rows rarely all attain the one-row worst case) but proven for either tie
    convention; it depends on ``n`` only, is non-increasing in it, and one patient
    changes ``n`` by at most ``k``: :func:`group_count_smooth_sensitivity` turns it into
    a smooth bound.

    Examples
    --------
    >>> from skdp.mechanisms.sensitivity import ap_group_local_sensitivity
    >>> round(ap_group_local_sensitivity(1000, 3), 4)
    0.0195
    """
    import numpy as np

    if form not in ("harmonic", "log"):
        raise ValueError(f"form must be 'harmonic' or 'log', got {form!r}")
    k = _group_k(max_rows_per_group)
    n = np.asarray(n_positive, dtype=float)
    out = np.minimum(1.0, k * _ap_row_step(np.maximum(n - k, 0.0), form))
    return float(out) if out.ndim == 0 else out


def group_count_smooth_sensitivity(local_sensitivity, count, max_rows_per_group, beta):
    """beta-smooth sensitivity when the local sensitivity is a non-increasing function of
    one count that a patient changes by at most ``k``.

    ``S*(D) = max_{t >= 0} exp(-beta t) L(max(0, c - t k))`` with ``c = count`` and
    ``L = local_sensitivity`` (a vectorised function of the count, non-increasing, with
    ``L(c(D))`` an upper bound on the local sensitivity of every data set with that
    count): :func:`auc_group_local_sensitivity` with ``c = min(n, m)``,
    :func:`ap_group_local_sensitivity` with ``c = n``.

    Neighbouring relation: **add or remove one group** (patient) of at most
    ``k = max_rows_per_group`` rows; the number of rows is private.

    Parameters
    ----------
    local_sensitivity : callable
        ``L(counts) -> ndarray`` for an array of counts.
    count : int
        ``c`` of the data set (private: never release or store the result).
    max_rows_per_group : int
        ``k >= 1``.
    beta : float
        Smoothing parameter, ``>= 0`` (``inf``: ``L(c)`` itself).

    Returns
    -------
    float

    Notes
    -----
    Proof (Nissim, Raskhodnikova and Smith 2007, Def 2.1 and Prop 3.1, with the distance
    counted in patients): a data set at distance ``t`` from ``D`` has count at least
    ``c - t k``, so ``U_t(D) = L(max(0, c - t k))`` bounds the local sensitivity of every
    data set within distance ``t`` (``L`` non-increasing), ``U_0(D) = L(c) >= LS(D)``,
    and for neighbours ``D, D'`` (``c' >= c - k``) ``U_t(D') <= U_{t+1}(D)``. Hence
    ``S*(D) >= LS(D)`` and ``S*(D') <= exp(beta) S*(D)``: a beta-smooth upper bound on
    the local sensitivity. Terms with ``exp(-beta t) < L(c)`` cannot win, so only
    ``t <= log(1 / L(c)) / beta`` is scanned (and none past ``c / k``, where the count
    reaches 0).

    Examples
    --------
    >>> from skdp.mechanisms.sensitivity import (
    ...     auc_group_local_sensitivity, group_count_smooth_sensitivity)
    >>> def ls(s):
    ...     return auc_group_local_sensitivity(s, s, 5)
    >>> round(group_count_smooth_sensitivity(ls, 100, 5, beta=0.1), 4)
    0.1496
    """
    import math

    import numpy as np

    k = _group_k(max_rows_per_group)
    c = int(count)
    if c < 0:
        raise ValueError("count must be >= 0")
    beta = float(beta)
    if not beta >= 0:
        raise ValueError("beta must be >= 0")
    ls_c = float(np.asarray(local_sensitivity(np.array([c])), dtype=float).ravel()[0])
    if math.isinf(beta):
        return ls_c
    t_max = -(-c // k)  # from here on the count is 0
    if beta > 0 and ls_c > 0:
        t_max = min(t_max, math.ceil(math.log(1.0 / ls_c) / beta) + 1)
    t = np.arange(t_max + 1)
    counts = np.maximum(c - t * k, 0)
    values = np.asarray(local_sensitivity(counts), dtype=float)
    return float(np.max(values * np.exp(-beta * t)))
