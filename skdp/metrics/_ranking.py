"""Differentially private ROC AUC and average precision (Lantz 2016, ch. 7).

Boyd, Lantz and Page 2015; smooth sensitivity of Nissim, Raskhodnikova and Smith 2007.

Neighbouring relation of every function here: **replace one row** (its label and/or its
score may change); the number of rows ``N`` is public, the class counts ``n`` (positives)
and ``m`` (negatives) are private. With ``groups=``: add or remove one patient with all
their rows (at most ``max_rows_per_group`` of them kept); the counts are then all
private. That is why these functions never raise on single-class ``y_true`` and never
return or store the class counts or the smooth sensitivity.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
from scipy.stats import norm

from skdp.base import _shared_constraints
from skdp.metrics._smooth import (
    _dp_ranking_metric,
)
from skdp.utils._docstrings import insert_docs
from skdp.utils._sklearn_compat import validate_params

__all__ = [
    "binormal_roc_curve",
    "dp_average_precision_score",
    "dp_roc_auc_score",
]


#: Docstring paragraphs the two ranking metrics share (inserted by ``insert_docs``).
_DOCS = dict(
    param_epsilon="""\
epsilon : float
    Total privacy loss of this call (> 0; ``math.inf`` returns the exact value).""",
    param_random_state="""\
random_state : None, int or numpy.random.Generator, default=None
    Source of the noise. ``None`` draws fresh OS entropy on every call.""",
    smooth_mechanism="""\
Mechanism: smooth sensitivity (Nissim, Raskhodnikova and Smith 2007; Lantz 2016,
Thm 7.4). With ``delta == 0`` the output is ``f + (2 (gamma + 1) S / epsilon) * eta``
with ``eta`` drawn from the density proportional to ``1 / (1 + |z|^gamma)`` (standard
Cauchy for the default ``gamma = 2``) and ``beta = epsilon / (2 (gamma + 1))``: pure
``epsilon``-DP. With ``delta > 0`` it is ``f + (2 S / epsilon) * Laplace(1)`` with
``beta = epsilon / (2 ln(2 / delta))``: ``(epsilon, delta)``-DP. The largest admissible
``beta`` is used.""",
    guarantee="""\
Guarantee: exact (a proven bound); one call spends exactly ``(epsilon, delta)``, and
with a ``ledger`` the call is recorded there before the metric is computed. Floating
point: the Cauchy/Laplace noise is drawn in floating point; the guarantee is for the
mathematical mechanism.""",
    param_groups="""\
groups : array-like of shape (n_samples,), default=None
    The patient (or other privacy unit) of each row, as in scikit-learn's
    ``GroupKFold``. With ``groups`` the guarantee is per patient: each patient keeps at
    most ``max_rows_per_group`` rows (chosen at random inside the call) and the smooth
    sensitivity is the patient-level one (Notes). In memory only.
max_rows_per_group : int, default=None
    The public number of rows one patient may contribute (from the visit schedule or
    the study protocol, never from the data). Required with ``groups``.""",
    groups_notes="""\
With ``groups`` (:doc:`/patients`): neighbouring relation add or remove one patient
with all their rows; the number of rows and the class counts are then private. Each
patient keeps at most ``k = max_rows_per_group`` rows, chosen uniformly at random inside
the mechanism (:func:`skdp.utils._groups.bound_contributions`; never the first ``k``:
the order of the rows is data), so a patient adds or removes at most ``k`` rows. The
smooth sensitivity is derived for that relation, not converted by group privacy:
``S = max_{t >= 0} exp(-beta t) L(max(0, c - t k))`` with the patient-level local
bound ``L`` of the count ``c`` a patient moves by at most ``k``
(:func:`~skdp.mechanisms.sensitivity.group_count_smooth_sensitivity`; the proof is
there), and the mechanism above with the same ``beta``. ``(epsilon, delta)`` then
holds per patient and a ledger is charged in unit ``"group"``. The seed material
includes the grouping and ``k``.""",
    references="""\
References
----------
.. [1] K. Boyd, E. Lantz, D. Page. "Differential privacy for classifier evaluation".
   AISec 2015.
.. [2] E. Lantz. "Machine Learning for Risk Prediction and Privacy in Electronic
   Health Records", PhD thesis, ch. 7, University of Wisconsin-Madison, 2016.
.. [3] K. Nissim, S. Raskhodnikova, A. Smith. "Smooth sensitivity and sampling in
   private data analysis". STOC 2007.""",
)


@insert_docs(**_DOCS)
@validate_params(_shared_constraints("random_state"), prefer_skip_nested_validation=True)
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
    groups=None,
    max_rows_per_group=None,
    return_interval=False,
    alpha=0.05,
):
    """Differentially private area under the ROC curve of a binary problem.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels. With ``pos_label=None`` they must lie in {0, 1} or {-1, 1} (or be
        booleans) and 1 (True) is the positive class. A ``dask.array.Array`` or
        ``dask.dataframe.Series`` (here or for ``y_score``) is ranked by a distributed
        sort on the workers (:doc:`/dask`); the release is the same as in memory.
    y_score : array-like of shape (n_samples,)
        Scores, larger meaning "more positive" (probabilities or decision values).
    {param_epsilon}
    delta : float, default=0.0
        ``0`` gives pure DP with Cauchy-type noise; ``delta > 0`` uses Laplace noise and a
        larger smoothing parameter (usually far less noise for small ``epsilon``).
    {param_random_state}
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
    {param_groups}
    return_interval : bool, default=False
        Also return a ``1 - alpha`` confidence interval for the population AUC that
        accounts for the sampling of the rows and for the privacy noise (Notes). The
        ``epsilon`` of the call stays the total: a small share of it releases a noisy
        class count, so the AUC itself gets a little more noise than with ``False``.
        ``False`` gives exactly the release of earlier versions. With ``groups`` the
        interval is per patient (Notes).
    alpha : float, default=0.05
        ``1 - alpha`` is the confidence level of the interval, in (0, 1); only used with
        ``return_interval=True`` (checked always).

    Returns
    -------
    score : float
        The noisy AUC, in [0, 1].
    interval : tuple of float
        ``(lower, upper)``, within [0, 1]; only with ``return_interval=True``, which
        returns ``(score, interval)``.

    Raises
    ------
    ValueError
        For NaN/inf, empty or mismatched inputs, non-binary labels or invalid privacy
        parameters; never because of the class balance. With an ``alpha`` outside
        (0, 1).

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

    {groups_notes}
    Per patient ``c = min(n, m)`` and ``L(s) = min(1, k / s)`` (1 for ``s = 0``):
    adding a patient to ``(n, m)`` moves the AUC by at most the share of the new
    data set's (negative, positive) pairs that involve the patient, at most
    ``k / (s + k)``, and removing one by at most ``k / s``
    (:func:`~skdp.mechanisms.sensitivity.auc_group_local_sensitivity`). For ``k = 1``
    this is the row bound above.

    {smooth_mechanism}
    The result is clamped to [0, 1] (post-processing).

    {guarantee}

    The smooth sensitivity depends on the private class counts, so it is neither returned
    nor stored. The function never raises because ``y_true`` has a single class (that
    would reveal a private count; scikit-learn raises there): the exact value is then
    taken as 0.5 and noised as usual. Otherwise, with ``ties="sklearn"`` and
    ``epsilon=math.inf``, the value is :func:`sklearn.metrics.roc_auc_score`'s.
    ``random_state`` must stay secret for a real release: whoever knows it can subtract
    the noise.

    Interval (``return_interval=True``; same relation, replace one row, ``N`` public):
    the AUC is released as above with ``(1 - rho) epsilon`` and the number of positives
    with Laplace noise of scale ``1 / (rho epsilon)`` (sensitivity 1), ``rho`` a public
    function of ``epsilon``, ``N`` and ``alpha`` in [0.02, 0.5]; by basic composition
    the call is ``(epsilon, delta)``-DP, exactly, and a ledger is charged once. The rest
    is post-processing: the noisy count gives a ``1 - alpha / 10`` confidence set for
    the count; over it, an upper bound on the noise scale (the scale itself depends on
    the private count and is never used) and on the Hanley--McNeil sampling variance at
    a hypothesised population AUC ``a`` (the larger of its two orientations, which is
    at least the binormal model's variance); the interval is the set of ``a`` that a test
    of level ``0.9 alpha`` based on ``score - a ~ sigma(a) Z + s eta`` accepts
    (``Z`` normal, ``eta`` the noise law above; quantiles computed at upper bounds are
    conservative by Anderson's theorem). It accounts for the sampling of the rows from
    a population (independent rows, the scoring model fixed) and for the privacy
    noise, including the clamp to [0, 1]; it assumes the normal approximation of the
    empirical AUC with that variance [4]_ (at least the binormal and the exponential
    models' variances, not a bound for every score distribution; both classes should
    have some tens of rows). Coverage: at least ``1 - alpha`` under these assumptions (union bound),
    approximate otherwise. With few rows or a small ``epsilon`` it can be [0, 1]: the
    Cauchy noise of ``delta = 0`` has heavy tails, ``delta > 0`` gives far narrower
    intervals. With ``epsilon=math.inf`` it is the Hanley--McNeil interval at the exact
    counts (no privacy).

    Interval with ``groups`` (add or remove one patient; every count private): the AUC
    is released as above, per patient, with ``(1 - rho) epsilon`` and ``rho = 0.25`` (a
    public constant: ``N`` is private); the two class counts with independent Laplace
    noise of scale ``k / (rho epsilon)`` (their L1 sensitivity per patient is ``k``);
    basic composition gives ``(epsilon, delta)`` per patient, and a ledger is charged
    once in unit ``"group"``. The noisy counts give one-sided lower bounds ``n_lo``,
    ``m_lo`` (each missed with probability ``alpha / 20``); the noise scale is bounded
    by the patient-level one at ``min(n_lo, m_lo)`` (it is non-increasing in the count)
    and the sampling variance by ``k`` times the Hanley--McNeil variance at
    ``(n_lo, m_lo)`` (both non-increasing in each count). The factor ``k`` bounds the
    design effect of correlated rows: the first-order (DeLong) expansion of the AUC is
    a sum over independent patients of the placement terms of their at most ``k``
    rows, and by Cauchy--Schwarz the variance of a sum of ``k`` terms is at most ``k``
    times the sum of their variances. The interval is for the AUC of a random positive
    and a random negative row (from different patients) of the population of patients,
    with at most ``k`` rows each; it is conservative when the rows of a patient are only
    weakly correlated (``benchmarks/auc_interval.py --clustered`` measures it).

    {references}
    .. [4] J. A. Hanley, B. J. McNeil. "The meaning and use of the area under a receiver
       operating characteristic (ROC) curve". Radiology 143, 1982.

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

    Per patient (here 200 patients of 5 rows, at most 5 rows each):

    >>> patient = np.arange(1000) % 200
    >>> auc = dp_roc_auc_score(y, s, epsilon=1.0, delta=1e-6, groups=patient,
    ...                        max_rows_per_group=5, random_state=0)
    >>> 0.0 <= auc <= 1.0
    True

    With a 95 % interval (sampling and privacy noise):

    >>> auc, (lo, hi) = dp_roc_auc_score(y, s, epsilon=1.0, delta=1e-6,
    ...                                  return_interval=True, random_state=0)
    >>> bool(0.0 <= lo <= auc <= hi <= 1.0)
    True

    Per patient, with the interval:

    >>> auc, (lo, hi) = dp_roc_auc_score(y, s, epsilon=3.0, delta=1e-6, groups=patient,
    ...                                  max_rows_per_group=5, return_interval=True,
    ...                                  random_state=0)
    >>> bool(0.0 <= lo <= hi <= 1.0)
    True
    """
    interval_alpha = _check_interval(return_interval, alpha)
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
        groups=groups,
        max_rows_per_group=max_rows_per_group,
        interval_alpha=interval_alpha,
    )


def _check_interval(return_interval, alpha):
    """``None`` (no interval) or the checked ``alpha``; errors name the parameter."""
    if not isinstance(return_interval, (bool, np.bool_)):
        raise TypeError("return_interval must be True or False")
    if isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, Real):
        raise TypeError("alpha must be a real number in (0, 1)")
    if not 0.0 < float(alpha) < 1.0:  # also NaN
        raise ValueError("alpha must lie in (0, 1)")
    if not return_interval:
        return None
    return float(alpha)


@insert_docs(**_DOCS)
@validate_params(_shared_constraints("random_state"), prefer_skip_nested_validation=True)
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
    groups=None,
    max_rows_per_group=None,
):
    """Differentially private average precision of a binary problem.

    ``AP = (1/n) sum_j T_j / (T_j + F_j)`` over the ``n`` positives, with ``T_j`` and
    ``F_j`` the numbers of positives and negatives scored at least as high as positive
    ``j`` (tied scores form one threshold, as in
    :func:`sklearn.metrics.average_precision_score`).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels (see :func:`dp_roc_auc_score`; Dask input is ranked on the
        workers, :doc:`/dask`).
    y_score : array-like of shape (n_samples,)
        Scores, larger meaning "more positive".
    {param_epsilon}
    delta : float, default=0.0
        ``0``: pure DP (Cauchy-type noise); ``> 0``: Laplace noise.
    {param_random_state}
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
    {param_groups}

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

    {groups_notes}
    Per patient ``c = n`` and ``L(n) = min(1, k G(max(0, n - k)))``, with ``G(j)`` the
    largest change of AP when one row is added to a data set with ``j`` positives
    (``max((H_{j+1} - 1) / j, (4 + H_j) / (4 (j + 1)))``, its log form with
    ``sensitivity_form="log"``): a patient is a path of at most ``k`` one-row additions
    through data sets with at least ``n - k`` positives
    (:func:`~skdp.mechanisms.sensitivity.ap_group_local_sensitivity`). The bound holds
    for both tie conventions.

    {smooth_mechanism}
    The result is clamped to [0, 1] (post-processing): the true minimum AP is above 0 but
    depends on the private counts, so the clamp uses the global range.

    {guarantee}

    The smooth sensitivity depends on the private class counts, so it is neither returned
    nor stored. The function never raises because ``y_true`` has a single class (that
    would reveal a private count): the exact value is then 0 without positives and 1
    without negatives (scikit-learn's values there, with a warning), noised as usual.
    With ``ties="sklearn"`` and ``epsilon=math.inf`` the value is
    :func:`sklearn.metrics.average_precision_score`'s. ``random_state`` must stay secret
    for a real release: whoever knows it can subtract the noise.

    The AP sensitivity carries an extra ``log n`` factor compared with AUC, so for the
    same budget the DP error of AP is several times larger (Lantz 2016, Fig. 7.5).

    {references}

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
        groups=groups,
        max_rows_per_group=max_rows_per_group,
    )


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
