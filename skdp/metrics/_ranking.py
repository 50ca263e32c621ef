"""Differentially private ROC AUC, average precision and accuracy (Lantz 2016, ch. 7).

Boyd, Lantz and Page 2015; smooth sensitivity of Nissim, Raskhodnikova and Smith 2007.

Neighbouring relation of every function here: **replace one row** (its label and/or its
score may change); the number of rows ``N`` is public, the class counts ``n`` (positives)
and ``m`` (negatives) are private. That is why these functions never raise on single-class
``y_true`` and never return or store the class counts or the smooth sensitivity.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
from scipy.stats import norm
from sklearn.utils import check_consistent_length

from skdp.mechanisms import (
    add_geometric,
    laplace_noise,
    smooth_sensitivity_beta,
    smooth_sensitivity_noise,
    smooth_sensitivity_scale,
)
from skdp.mechanisms.sensitivity import (
    ap_local_sensitivity,
    auc_local_sensitivity,
    count_smooth_sensitivity,
)
from skdp.utils._random import release_rng
from skdp.utils.validation import check_finite, check_privacy_params, column_or_1d

__all__ = [
    "binormal_roc_curve",
    "dp_accuracy_score",
    "dp_average_precision_score",
    "dp_roc_auc_score",
]

# --------------------------------------------------------------------------- input checks


def _check_gamma(gamma):
    if isinstance(gamma, bool) or not isinstance(gamma, Real) or not float(gamma) > 1.0:
        raise ValueError("gamma must be a real number > 1")
    if not math.isfinite(float(gamma)):
        raise ValueError("gamma must be finite")
    return float(gamma)


def _distinct_labels(y):
    """Sorted distinct values of ``y`` (at most three are needed: more means non-binary)."""
    if y.dtype.kind in "biuf":
        lo, hi = y.min(), y.max()
        if np.all((y == lo) | (y == hi)):  # O(N), no sort
            return np.unique(np.array([lo, hi], dtype=y.dtype))
    try:
        return np.unique(y)
    except TypeError:  # e.g. None among numbers: labels that cannot be ordered
        raise TypeError(
            "y_true mixes labels that cannot be compared (e.g. None among numbers); "
            "drop or impute missing labels first"
        ) from None


def _check_ledger(ledger):
    """``None`` or an object with a ``spend`` method (a :class:`PrivacyLedger`)."""
    if ledger is not None and not callable(getattr(ledger, "spend", None)):
        raise TypeError(
            f"ledger must be a skdp.accounting.PrivacyLedger or None, got {type(ledger).__name__}"
        )


def _positive_mask(y_true, pos_label):
    """Boolean mask of the positive rows; never raises on single-class ``y_true``.

    Errors depend only on public facts and on the label domain (dtype, the type of
    ``pos_label``, more than two labels), never on which labels are present or how many
    rows each class has: a ``pos_label`` of the right type that no row carries means
    "no positive rows" (raising only when the other class is present would tell a
    neighbouring data set apart).
    """
    y = column_or_1d(y_true, input_name="y_true")
    if y.dtype.kind in "fc":
        check_finite(y, name="y_true")
    if y.shape[0] == 0:
        raise ValueError("y_true is empty")
    labels = _distinct_labels(y)
    if labels.shape[0] > 2:
        raise ValueError("y_true must be binary (at most two distinct labels)")
    if pos_label is None:
        if y.dtype.kind == "b":
            pos_label = True
        elif y.dtype.kind in "iuf":
            allowed = ({0, 1}, {-1, 1})
            if not any(set(labels.tolist()) <= a for a in allowed):
                raise ValueError(
                    "y_true must take values in {0, 1} or {-1, 1} when pos_label is None; "
                    "pass pos_label"
                )
            pos_label = 1
        else:
            raise ValueError("pos_label must be given when y_true holds non-numeric labels")
    else:
        _check_pos_label_type(pos_label, y.dtype)
    return np.asarray(y == pos_label, dtype=bool)


def _check_pos_label_type(pos_label, dtype):
    """``pos_label`` must be comparable with labels of ``dtype`` (a public check)."""
    numeric = isinstance(pos_label, bool | np.bool_ | int | float | np.number)
    if dtype.kind == "b":
        ok = isinstance(pos_label, bool | np.bool_) or pos_label in (0, 1)
    elif dtype.kind in "iuf":
        ok = numeric
    else:
        ok = not numeric or dtype.kind == "O"
    if not ok:
        raise ValueError(
            f"pos_label of type {type(pos_label).__name__} cannot match labels of dtype "
            f"{dtype}; pass a pos_label of the labels' type"
        )


def _check_scores(y_score, n_rows):
    s = column_or_1d(y_score, input_name="y_score")
    if s.dtype.kind not in "biuf":
        raise ValueError("y_score must be numeric")
    s = s.astype(np.float64, copy=False)
    check_finite(s, name="y_score")
    check_consistent_length(np.empty(n_rows), s)
    return s


# ------------------------------------------------------------------------- exact metrics


def _check_ties(ties):
    if ties not in ("sklearn", "pessimistic"):
        raise ValueError("ties must be 'sklearn' or 'pessimistic'")
    return ties


def _exact_auc_ap(pos_mask, scores, ties="sklearn"):
    """Exact AUC and AP under the tie convention ``ties``; O(N log N) (two sorts and
    binary searches).

    ``"sklearn"``: a tied (positive, negative) pair counts 1/2 in the AUC and all rows
    with one score form one threshold of the AP, as in :func:`~sklearn.metrics.roc_auc_score`
    and :func:`~sklearn.metrics.average_precision_score`: ``AP = (1/n) sum_j T_j / (T_j +
    F_j)`` with ``T_j``, ``F_j`` the positives and negatives scored ``>= y_j``.
    ``"pessimistic"``: negatives rank above tied positives (Lantz 2016, eqs. 7.1-7.2):
    a tied pair counts 0 and the ``j``-th positive in decreasing order has precision
    ``j / (j + F_j)``.

    Returns ``(auc, ap, n_positive)``; ``auc = 0.5`` if a class is empty, ``ap = 0``
    without positives and ``1`` without negatives.
    """
    pos = np.sort(scores[pos_mask])
    neg = np.sort(scores[~pos_mask])
    n, m = pos.shape[0], neg.shape[0]
    if n == 0:
        return 0.5, 0.0, 0
    if m == 0:
        return 0.5, 1.0, n
    below = np.searchsorted(neg, pos, side="left")  # #{i: x_i < y_j}, y_j increasing
    if ties == "sklearn":
        below_or_tied = np.searchsorted(neg, pos, side="right")  # #{i: x_i <= y_j}
        twice_u = np.sum(below, dtype=np.int64) + np.sum(below_or_tied, dtype=np.int64)
        auc = float(twice_u) / (2.0 * float(n) * float(m))
        t = n - np.searchsorted(pos, pos, side="left")  # T_j = #{positives >= y_j}
        f = m - below  # F_j = #{negatives >= y_j}
        ap = float(np.mean(t / (t + f)))
        return auc, ap, n
    auc = float(np.sum(below, dtype=np.int64)) / (float(n) * float(m))
    s = m - below[::-1]  # #{i: x_i >= y_j} for the positives in decreasing score order
    j = np.arange(1, n + 1, dtype=np.float64)
    ap = float(np.mean(j / (j + s)))
    return auc, ap, n


# ------------------------------------------------------------------------------ mechanism


def _smooth_sensitivity(local_sensitivities, n, N, beta):
    """``S*_beta = max_{0<=i<=N} LS(i) exp(-beta |i - n|)`` over a window around ``n``.

    ``local_sensitivities(counts)`` returns LS for an array of counts, all values in
    (0, 1]. Terms with ``exp(-beta |i - n|) < LS(n)`` cannot beat the ``i = n`` term, so
    only ``|i - n| <= ln(1 / LS(n)) / beta`` is scanned; this equals
    :func:`~skdp.mechanisms.sensitivity.count_smooth_sensitivity` on the full range and
    keeps a call at N = 10**6 well under a second.
    """
    ls_n = float(local_sensitivities(np.array([n]))[0])
    if beta > 0 and ls_n > 0:
        half = math.ceil(math.log(1.0 / ls_n) / beta) + 1
    else:
        half = N
    lo, hi = max(0, n - half), min(N, n + half)
    counts = np.arange(lo, hi + 1)
    return count_smooth_sensitivity(local_sensitivities(counts), n - lo, beta)


def _noise_parameters(local_sensitivities, n, N, *, epsilon, delta, gamma):
    """Noise scale and kind of Thm 7.4 (Lantz 2016; Nissim et al. 2007), one-dimensional.

    ``local_sensitivities(counts)`` gives the local sensitivity for an array of counts in
    0..N and ``n`` is the private count. Returns ``(scale, "smooth")`` (pure DP, density
    ``1/(1+|z|^gamma)``, ``beta = epsilon / (2 (gamma + 1))``, scale
    ``2 (gamma + 1) S / epsilon``) when ``delta == 0``, else ``(scale, "laplace")``
    (``beta = epsilon / (2 ln(2/delta))``, scale ``2 S / epsilon``). The largest
    admissible ``beta`` is used. The scale depends on the private count: callers must not
    release or store it.
    """
    if delta == 0.0:
        beta = smooth_sensitivity_beta(epsilon, gamma=gamma)  # epsilon / (2 (gamma + 1))
        s_star = _smooth_sensitivity(local_sensitivities, n, N, beta)
        return smooth_sensitivity_scale(s_star, epsilon=epsilon, gamma=gamma), "smooth"
    beta = epsilon / (2.0 * math.log(2.0 / delta))
    s_star = _smooth_sensitivity(local_sensitivities, n, N, beta)
    return 2.0 * s_star / epsilon, "laplace"


def _dp_ranking_metric(
    which, y_true, y_score, *, epsilon, delta, random_state, ledger, pos_label, gamma, form, ties
):
    ties = _check_ties(ties)
    pos_mask = _positive_mask(y_true, pos_label)
    N = pos_mask.shape[0]
    scores = _check_scores(y_score, N)
    epsilon, delta = check_privacy_params(epsilon, delta, n_samples=N)
    gamma = _check_gamma(gamma)
    # the metric, its budget, its options and its inputs are bound into the seed
    # material: two metrics (or two budgets) on one input never share noise under one seed
    rng = release_rng(
        random_state,
        tag=f"dp_{which}_score",
        params={
            "epsilon": epsilon,
            "delta": delta,
            "gamma": gamma,
            "form": form,
            "ties": ties,
        },
        data=(pos_mask, scores),
        order_invariant=True,
    )
    if ledger is not None:
        _check_ledger(ledger)
        ledger.spend(epsilon, delta, label=f"dp_{which}_score")
    auc, ap, n = _exact_auc_ap(pos_mask, scores, ties)
    value = auc if which == "roc_auc" else ap
    if math.isinf(epsilon):
        return float(np.clip(value, 0.0, 1.0))

    def local_sensitivities(counts):
        if which == "roc_auc":  # the same bound for both tie conventions
            return auc_local_sensitivity(counts, N - counts)
        return ap_local_sensitivity(counts, ties=ties, form=form, cap=True)

    scale, kind = _noise_parameters(
        local_sensitivities, n, N, epsilon=epsilon, delta=delta, gamma=gamma
    )
    if kind == "smooth":
        eta = smooth_sensitivity_noise(1, gamma=gamma, rng=rng)
    else:
        eta = laplace_noise(1, scale=1.0, rng=rng)
    eta = float(np.asarray(eta, dtype=float).ravel()[0])
    return float(np.clip(value + scale * eta, 0.0, 1.0))


def dp_roc_auc_score(
    y_true,
    y_score,
    *,
    epsilon,
    delta=0.0,
    random_state=None,
    ledger=None,
    pos_label=None,
    gamma=2.0,
    ties="sklearn",
):
    """Differentially private area under the ROC curve of a binary problem.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels. With ``pos_label=None`` they must lie in {0, 1} or {-1, 1} (or be
        booleans) and 1 (True) is the positive class.
    y_score : array-like of shape (n_samples,)
        Scores, larger meaning "more positive" (probabilities or decision values).
    epsilon : float
        Total privacy loss of this call (> 0; ``math.inf`` returns the exact value).
    delta : float, default=0.0
        ``0`` gives pure DP with Cauchy-type noise; ``delta > 0`` uses Laplace noise and a
        larger smoothing parameter (usually far less noise for small ``epsilon``).
    random_state : None, int or numpy.random.Generator, default=None
        Source of the noise. ``None`` draws fresh OS entropy on every call.
    ledger : PrivacyLedger, optional
        If given, ``ledger.spend(epsilon, delta)`` is called first (and may raise
        :class:`~skdp.exceptions.BudgetExceededError`).
    pos_label : int, float, bool or str, optional
        The positive class label.
    gamma : float, default=2.0
        Tail exponent (> 1) of the pure-DP noise density ``1 / (1 + |z|^gamma)``; only
        used with ``delta == 0``.
    ties : {"sklearn", "pessimistic"}, default="sklearn"
        How a positive and a negative with the same score count. ``"sklearn"``: half a
        correctly ordered pair, as in :func:`sklearn.metrics.roc_auc_score` (so constant
        scores give 0.5). ``"pessimistic"``: a mis-ordered pair (Lantz 2016, §7.2.1; the
        convention of skdp before this option existed), never above the ``"sklearn"``
        value. Both have
        the same sensitivity, hence the same noise.

    Returns
    -------
    score : float
        The noisy AUC, in [0, 1].

    Raises
    ------
    ValueError
        For NaN/inf, empty or mismatched inputs, non-binary labels or invalid privacy
        parameters; never because of the class balance.

    See Also
    --------
    dp_average_precision_score : The same mechanism for average precision.
    binormal_roc_curve : A DP ROC curve from the released AUC (post-processing).

    Notes
    -----
    Neighbouring relation: replace one row (its label and/or its score), with the number
    of rows ``N`` public and the class counts ``n`` (positives) and ``m`` private
    (Lantz 2016, §7.2.2). Unlike skdp's estimators (add/remove one row), the proof needs
    replace-one.

    Sensitivity: the local sensitivity of the AUC is ``1 / min(n, m)`` (1 when a class is
    empty), under either tie convention: the proof only uses that each (negative,
    positive) pair contributes a value in [0, 1] (Lantz 2016, Thm 7.5; the derivation is
    in :func:`~skdp.mechanisms.sensitivity.auc_local_sensitivity`). It depends on ``n``
    only, and a replacement changes ``n`` by at most one, so
    ``S = max_{0 <= i <= N} LS(i, N - i) exp(-beta |i - n|)`` is a ``beta``-smooth upper
    bound on it (Thm 7.6).

    Mechanism: smooth sensitivity (Nissim, Raskhodnikova and Smith 2007; Lantz 2016,
    Thm 7.4). With ``delta == 0`` the output is ``f + (2 (gamma + 1) S / epsilon) * eta``
    with ``eta`` drawn from the density proportional to ``1 / (1 + |z|^gamma)`` (standard
    Cauchy for the default ``gamma = 2``) and ``beta = epsilon / (2 (gamma + 1))``: pure
    ``epsilon``-DP. With ``delta > 0`` it is ``f + (2 S / epsilon) * Laplace(1)`` with
    ``beta = epsilon / (2 ln(2 / delta))``: ``(epsilon, delta)``-DP. The largest admissible
    ``beta`` is used. The result is clamped to [0, 1] (post-processing).

    Guarantee: exact (a proven bound); one call spends exactly ``(epsilon, delta)``, and
    with a ``ledger`` the call is recorded there before the metric is computed. Floating
    point: the Cauchy/Laplace noise is drawn in floating point; the guarantee is for the
    mathematical mechanism.

    The smooth sensitivity depends on the private class counts, so it is neither returned
    nor stored. The function never raises because ``y_true`` has a single class (that
    would reveal a private count; scikit-learn raises there): the exact value is then
    taken as 0.5 and noised as usual. Otherwise, with ``ties="sklearn"`` and
    ``epsilon=math.inf``, the value is :func:`sklearn.metrics.roc_auc_score`'s.
    ``random_state`` must stay secret for a real release: whoever knows it can subtract
    the noise.

    References
    ----------
    .. [1] K. Boyd, E. Lantz, D. Page. "Differential privacy for classifier evaluation".
       AISec 2015.
    .. [2] E. Lantz. "Machine Learning for Risk Prediction and Privacy in Electronic
       Health Records", PhD thesis, ch. 7, University of Wisconsin-Madison, 2016.
    .. [3] K. Nissim, S. Raskhodnikova, A. Smith. "Smooth sensitivity and sampling in
       private data analysis". STOC 2007.

    Examples
    --------
    >>> import math
    >>> import numpy as np
    >>> from skdp.metrics import dp_roc_auc_score
    >>> rng = np.random.default_rng(0)
    >>> y = np.r_[np.zeros(500), np.ones(500)]
    >>> s = np.r_[rng.normal(0, 1, 500), rng.normal(1, 1, 500)]
    >>> auc = dp_roc_auc_score(y, s, epsilon=1.0, delta=1e-6, random_state=0)
    >>> 0.0 <= auc <= 1.0
    True
    >>> dp_roc_auc_score([0, 1, 0, 1], [0.2, 0.2, 0.2, 0.2], epsilon=math.inf)
    0.5
    >>> dp_roc_auc_score([0, 1, 0, 1], [0.2, 0.2, 0.2, 0.2], epsilon=math.inf,
    ...                  ties="pessimistic")
    0.0
    """
    return _dp_ranking_metric(
        "roc_auc",
        y_true,
        y_score,
        epsilon=epsilon,
        delta=delta,
        random_state=random_state,
        ledger=ledger,
        pos_label=pos_label,
        gamma=gamma,
        form="harmonic",
        ties=ties,
    )


def dp_average_precision_score(
    y_true,
    y_score,
    *,
    epsilon,
    delta=0.0,
    random_state=None,
    ledger=None,
    pos_label=None,
    gamma=2.0,
    sensitivity_form="harmonic",
    ties="sklearn",
):
    """Differentially private average precision of a binary problem.

    ``AP = (1/n) sum_j T_j / (T_j + F_j)`` over the ``n`` positives, with ``T_j`` and
    ``F_j`` the numbers of positives and negatives scored at least as high as positive
    ``j`` (tied scores form one threshold, as in
    :func:`sklearn.metrics.average_precision_score`).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels (see :func:`dp_roc_auc_score`).
    y_score : array-like of shape (n_samples,)
        Scores, larger meaning "more positive".
    epsilon : float
        Total privacy loss of this call (> 0; ``math.inf`` returns the exact value).
    delta : float, default=0.0
        ``0``: pure DP (Cauchy-type noise); ``> 0``: Laplace noise.
    random_state : None, int or numpy.random.Generator, default=None
        Source of the noise. ``None`` draws fresh OS entropy on every call.
    ledger : PrivacyLedger, optional
        If given, ``ledger.spend(epsilon, delta)`` is called first.
    pos_label : int, float, bool or str, optional
        The positive class label.
    gamma : float, default=2.0
        Tail exponent of the pure-DP noise density; only used with ``delta == 0``.
    sensitivity_form : {"harmonic", "log"}, default="harmonic"
        Local-sensitivity bound: the tighter harmonic form or its logarithmic upper bound
        (``H_k <= 1 + log k``; for ``ties="pessimistic"`` these are Lantz 2016, eqs. 7.31
        and 7.8). Both are capped at 1.
    ties : {"sklearn", "pessimistic"}, default="sklearn"
        ``"sklearn"``: all rows with one score form one threshold, as in
        :func:`sklearn.metrics.average_precision_score`. ``"pessimistic"``: negatives rank
        above tied positives, ``AP = (1/n) sum_j j / (j + F_j)`` with the positives in
        decreasing order (Lantz 2016, eq. 7.2; the convention of skdp before this option
        existed), never above the ``"sklearn"`` value. The conventions have different
        sensitivities (see Notes).

    Returns
    -------
    score : float
        The noisy AP, in [0, 1].

    Raises
    ------
    ValueError
        For NaN/inf, empty or mismatched inputs, non-binary labels or invalid privacy
        parameters; never because of the class balance.

    See Also
    --------
    dp_roc_auc_score : The same mechanism for the ROC AUC.

    Notes
    -----
    Neighbouring relation: replace one row (its label and/or its score), with the number
    of rows ``N`` public and the class counts private (Lantz 2016, §7.2.2). Unlike skdp's
    estimators (add/remove one row), the proof needs replace-one.

    Sensitivity: the local sensitivity is a function ``LS(n)`` of the number ``n`` of
    positives, 1 for ``n <= 1``. For ``ties="sklearn"``,
    ``LS(n) = max((H_n - 1) / (n - 1), (4 + H_{n-1}) / (4 n))`` (harmonic numbers
    ``H_k``). Derivation (in full in
    :func:`~skdp.mechanisms.sensitivity.ap_local_sensitivity`): one more negative above a
    positive lowers its precision ``T / (T + F)`` by at most ``1 / (T + 1)``, one more
    positive raises it by at most ``1 / (4 T)``, and ``T_j`` is at least the rank of
    ``j``; so moving a negative changes AP by at most ``(H_{n+1} - 1) / n`` and moving a
    positive by ``(4 + H_{n-1}) / (4 n)``; turning a positive into a negative changes it
    by at most ``(H_n - 1) / (n - 1)`` (each remaining positive's precision loss plus
    its share of the renormalisation is at most ``1 / (T'_j + 1)``), the reverse by
    ``(H_{n+1} - 1) / n``. For ``n >= 5`` the bound is attained. For
    ``ties="pessimistic"`` it is Lantz 2016, Thm 7.7 (about twice as large for large
    ``n``, 2.7 times at ``n = 10``), so that option adds about twice the noise. A
    replacement changes ``n`` by at most one, so
    ``S = max_{0 <= i <= N} LS(i) exp(-beta |i - n|)`` is a ``beta``-smooth upper bound
    (Thm 7.8).

    Mechanism: smooth sensitivity (Nissim, Raskhodnikova and Smith 2007; Lantz 2016,
    Thm 7.4). With ``delta == 0`` the output is ``f + (2 (gamma + 1) S / epsilon) * eta``
    with ``eta`` drawn from the density proportional to ``1 / (1 + |z|^gamma)`` (standard
    Cauchy for the default ``gamma = 2``) and ``beta = epsilon / (2 (gamma + 1))``: pure
    ``epsilon``-DP. With ``delta > 0`` it is ``f + (2 S / epsilon) * Laplace(1)`` with
    ``beta = epsilon / (2 ln(2 / delta))``: ``(epsilon, delta)``-DP. The largest admissible
    ``beta`` is used. The result is clamped to [0, 1] (post-processing): the true minimum
    AP is above 0 but depends on the private counts, so the clamp uses the global range.

    Guarantee: exact (a proven bound); one call spends exactly ``(epsilon, delta)``, and
    with a ``ledger`` the call is recorded there before the metric is computed. Floating
    point: the Cauchy/Laplace noise is drawn in floating point; the guarantee is for the
    mathematical mechanism.

    The smooth sensitivity depends on the private class counts, so it is neither returned
    nor stored. The function never raises because ``y_true`` has a single class (that
    would reveal a private count): the exact value is then 0 without positives and 1
    without negatives (scikit-learn's values there, with a warning), noised as usual.
    With ``ties="sklearn"`` and ``epsilon=math.inf`` the value is
    :func:`sklearn.metrics.average_precision_score`'s. ``random_state`` must stay secret
    for a real release: whoever knows it can subtract the noise.

    The AP sensitivity carries an extra ``log n`` factor compared with AUC, so for the
    same budget the DP error of AP is several times larger (Lantz 2016, Fig. 7.5).

    References
    ----------
    .. [1] K. Boyd, E. Lantz, D. Page. "Differential privacy for classifier evaluation".
       AISec 2015.
    .. [2] E. Lantz. "Machine Learning for Risk Prediction and Privacy in Electronic
       Health Records", PhD thesis, ch. 7, University of Wisconsin-Madison, 2016.
    .. [3] K. Nissim, S. Raskhodnikova, A. Smith. "Smooth sensitivity and sampling in
       private data analysis". STOC 2007.

    Examples
    --------
    >>> import math
    >>> import numpy as np
    >>> from skdp.metrics import dp_average_precision_score
    >>> rng = np.random.default_rng(0)
    >>> y = np.r_[np.zeros(500), np.ones(500)]
    >>> s = np.r_[rng.normal(0, 1, 500), rng.normal(1, 1, 500)]
    >>> ap = dp_average_precision_score(y, s, epsilon=1.0, delta=1e-6, random_state=0)
    >>> 0.0 <= ap <= 1.0
    True
    >>> round(dp_average_precision_score([0, 1, 1], [0.9, 0.5, 0.5], epsilon=math.inf), 4)
    0.6667
    >>> round(dp_average_precision_score([0, 1, 1], [0.9, 0.5, 0.5], epsilon=math.inf,
    ...                                  ties="pessimistic"), 4)
    0.5833
    """
    if sensitivity_form not in ("harmonic", "log"):
        raise ValueError("sensitivity_form must be 'harmonic' or 'log'")
    return _dp_ranking_metric(
        "average_precision",
        y_true,
        y_score,
        epsilon=epsilon,
        delta=delta,
        random_state=random_state,
        ledger=ledger,
        pos_label=pos_label,
        gamma=gamma,
        form=sensitivity_form,
        ties=ties,
    )


def dp_accuracy_score(y_true, y_pred, *, epsilon, delta=0.0, random_state=None, ledger=None):
    """Differentially private accuracy (fraction of correct predictions).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels (any number of classes).
    y_pred : array-like of shape (n_samples,)
        Predicted labels.
    epsilon : float
        Total privacy loss of this call (> 0; ``math.inf`` returns the exact value).
    delta : float, default=0.0
        Accepted for a uniform signature; the Laplace mechanism is pure DP, so the call
        spends ``(epsilon, 0)`` whatever ``delta`` is.
    random_state : None, int or numpy.random.Generator, default=None
        Source of the noise. ``None`` draws fresh OS entropy on every call.
    ledger : PrivacyLedger, optional
        If given, ``ledger.spend(epsilon, 0.0)`` is called first.

    Returns
    -------
    score : float
        The noisy accuracy, clamped to [0, 1].

    Notes
    -----
    Neighbouring relation: replace one row, ``N`` public (as for the other scorers).
    Replacing a row changes the number of correct predictions by at
    most one (sensitivity 1); the geometric mechanism adds two-sided geometric noise
    ``G(epsilon)`` to that count (Ghosh, Roughgarden and Sundararajan 2009), and the
    noisy count is divided by the public ``N``: the discrete counterpart of
    ``Laplace(1 / (N epsilon))`` on the accuracy (Lantz 2016, §7.2.2). Pure
    ``epsilon``-DP, exact guarantee; division and clamping to [0, 1] are
    post-processing. Floating point: exact -- the noise is an integer drawn in integer
    arithmetic (Canonne, Kamath and Steinke 2020), so no floating-point gap (Mironov
    2012) can tell neighbours apart.

    References
    ----------
    .. [1] C. Dwork, F. McSherry, K. Nissim, A. Smith. "Calibrating noise to sensitivity
       in private data analysis". TCC 2006.

    Examples
    --------
    >>> from skdp.metrics import dp_accuracy_score
    >>> acc = dp_accuracy_score([0, 1, 1, 0] * 250, [0, 1, 0, 0] * 250, epsilon=1.0,
    ...                         random_state=0)
    >>> abs(acc - 0.75) < 0.05
    True
    """
    yt = column_or_1d(y_true, input_name="y_true")
    yp = column_or_1d(y_pred, input_name="y_pred")
    check_consistent_length(yt, yp)
    N = yt.shape[0]
    if N == 0:
        raise ValueError("y_true is empty")
    if yt.dtype.kind in "fc":
        check_finite(yt, name="y_true")
    if yp.dtype.kind in "fc":
        check_finite(yp, name="y_pred")
    epsilon, delta = check_privacy_params(epsilon, delta)
    rng = release_rng(
        random_state,
        tag="dp_accuracy_score",
        params={"epsilon": epsilon, "delta": delta},
        data=(yt, yp),
        order_invariant=True,
    )
    if ledger is not None:
        _check_ledger(ledger)
        ledger.spend(epsilon, 0.0, label="dp_accuracy_score")
    value = float(np.mean(yt == yp))
    if math.isinf(epsilon):
        return value
    correct = int(np.count_nonzero(yt == yp))
    noisy = int(add_geometric(correct, sensitivity=1, epsilon=epsilon, rng=rng))
    return float(np.clip(noisy / N, 0.0, 1.0))


def binormal_roc_curve(auc, *, fpr=None, n_points=101):
    """Symmetric binormal ROC curve with a given area (e.g. a DP AUC).

    With ``a = sqrt(2) * Phi^{-1}(auc)`` and ``b = 1`` the curve is
    ``tpr = Phi(a + Phi^{-1}(fpr))``: the ROC curve of two unit-variance normal score
    distributions whose area is exactly ``auc`` (Lantz 2016, §7.5).

    Parameters
    ----------
    auc : float
        Area under the curve, clamped to ``[1e-6, 1 - 1e-6]`` first.
    fpr : array-like, optional
        False-positive rates to evaluate; default ``linspace(0, 1, n_points)``.
    n_points : int, default=101
        Number of points when ``fpr`` is not given (>= 2).

    Returns
    -------
    fpr, tpr : ndarray
        Monotone, from (0, 0) to (1, 1).

    Notes
    -----
    Pure post-processing: applied to the output of :func:`dp_roc_auc_score` it spends no
    further privacy budget (a DP ROC curve at the AUC's ``(epsilon, delta)``). It assumes
    equal class variances; with unequal variances the curve is misspecified.

    References
    ----------
    .. [1] E. Lantz. PhD thesis, §7.5, 2016.

    Examples
    --------
    >>> from skdp.metrics import binormal_roc_curve
    >>> fpr, tpr = binormal_roc_curve(0.8, n_points=5)
    >>> float(tpr[0]), float(tpr[-1])
    (0.0, 1.0)
    """
    auc = float(auc)
    if not math.isfinite(auc):
        raise ValueError("auc must be finite")
    auc = min(max(auc, 1e-6), 1.0 - 1e-6)
    if fpr is None:
        if int(n_points) < 2:
            raise ValueError("n_points must be >= 2")
        fpr = np.linspace(0.0, 1.0, int(n_points))
    else:
        fpr = np.asarray(fpr, dtype=float)
        if np.any(~np.isfinite(fpr)) or np.any((fpr < 0) | (fpr > 1)):
            raise ValueError("fpr must lie in [0, 1]")
    a = math.sqrt(2.0) * norm.ppf(auc)
    with np.errstate(divide="ignore"):
        tpr = norm.cdf(a + norm.ppf(fpr))
    return fpr, tpr
