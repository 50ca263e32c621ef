"""dp_cross_validate: cross-validation with DP scorers, data-independent folds and one total."""

from __future__ import annotations

import math

import numpy as np

from skdp.base import _shared_constraints
from skdp.model_selection._folds import check_cv
from skdp.model_selection._plan import (
    _check_bool,
    _check_common,
    _num_samples,
    _Plan,
    check_group_support,
    group_folds,
)
from skdp.utils._docstrings import insert_docs
from skdp.utils._groups import check_groups
from skdp.utils._meta_privacy import weakest_guarantee
from skdp.utils._sklearn_compat import validate_params

__all__ = ["dp_cross_validate"]


# ----------------------------------------------------------------------------- API
@insert_docs
@validate_params(_shared_constraints("random_state", "n_jobs"), prefer_skip_nested_validation=True)
def dp_cross_validate(
    estimator,
    X,
    y,
    *,
    scoring,
    cv=None,
    n_splits="deprecated",
    ledger=None,
    random_state=None,
    return_estimator=False,
    allow_nonprivate=False,
    n_jobs=None,
    groups=None,
):
    """Cross-validate a DP estimator with DP scorers; one total, charged once.

    Every row is in exactly one test fold and in ``k - 1`` training folds; the folds are
    a uniformly random balanced partition of the row positions drawn from a fresh key
    (``cv=k``), or those of a ``KFold(k, shuffle=True)``, independent of the data. The
    total privacy spend of the run (every fit and every scorer call, under replace one
    row) is computed with :func:`skdp.metrics.cv_privacy_spend` before any row is read,
    charged once to ``ledger``, and returned.

    Parameters
    ----------
    estimator : estimator
        A skdp DP estimator, or a pipeline of DP steps (:class:`skdp.pipeline.DPPipeline`);
        its fit budget is read from its declared ``epsilon``/``delta`` parameters (summed
        over the steps, :func:`skdp.pipeline.check_pipeline_privacy`). An estimator
        that learns without a guarantee is refused (``ValueError``).
    X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Labels (required: the DP scorers compare predictions with labels).
    scoring : DPScorer or dict of str -> DPScorer
        Scorers made by :func:`skdp.metrics.make_dp_scorer`, without ``ledger=``
        (or holding this call's ``ledger``: they are called ledger-free either way).
        Anything else raises ``TypeError`` (for a regressor, use
        ``make_dp_scorer("r2", epsilon=..., bounds_y=(lo, hi))``).
    cv : int, KFold or None, default=None
        The folds. ``None``: 5. An int ``k >= 2``: ``k`` folds, a uniformly random
        balanced partition of the row positions keyed by ``random_state``.
        ``sklearn.model_selection.KFold(k, shuffle=True, random_state=s)`` with an int or
        ``None`` seed ``s``: that splitter's folds (``None``: fresh OS entropy on every
        call, never numpy's global generator). Both depend on the row count and a key
        only, and are accounted alike (see Notes). Every other value is refused with the
        reason (``ValueError``): splitters that read ``y`` (``StratifiedKFold`` and its
        variants: a split that reads ``y`` is a statistic of the private labels) or
        ``groups`` (``GroupKFold``, ``LeaveOneGroupOut``, ...; for folds of whole
        patients pass ``groups=`` with an int ``cv``), ``KFold(shuffle=False)``
        (its folds follow the row order, which can depend on the data), ``PredefinedSplit``
        and iterables of ``(train, test)`` index arrays (nothing shows they were made
        without the data), and splitters whose folds are not one partition of the rows
        (``ShuffleSplit``, ``RepeatedKFold``, ``LeaveOneOut``, ...).
    n_splits : int, optional
        Deprecated alias of an int ``cv`` (``FutureWarning``; removed in 0.2): the same
        folds and results as ``cv=n_splits``.
    ledger : PrivacyLedger, optional
        Charged once, before any fit, with the total (label ``"dp_cross_validate
        (replace-one)"``). A refusal raises :class:`~skdp.exceptions.BudgetExceededError`
        (or ``LedgerCopyError`` for a copy) and nothing runs. The entry is stated under
        replace one row: keep the ledger's other entries under the same relation
        (``spend_fitted(est, relation="replace")``).
    random_state : None, int, SeedSequence or Generator, default=None
        Key of the folds of an int ``cv`` only (see Notes; a ``KFold`` uses its own
        seed). ``None``: fresh OS entropy. The estimator's and the scorers' own
        ``random_state`` decide their noise.
    return_estimator : bool, default=False
        Also return the fold models (they are counted in the total).
    allow_nonprivate : bool, default=False
        Run an estimator that learns without a guarantee anyway, with a
        :class:`~skdp.exceptions.PrivacyLeakWarning`; the total is then ``inf`` (a
        ledger with a finite budget refuses it).
    n_jobs : int or None, default=None
        Folds run in parallel through joblib (``None``: 1 unless inside a
        :func:`joblib.parallel_backend` context, e.g. Dask's; see :doc:`/dask`). The
        total is charged once, here, before any fold runs; the results equal a
        sequential run's.
    groups : array-like of shape (n_samples,), default=None
        The patient of each row: every fold then holds whole patients (a keyed hash of
        the patient's label picks the fold, so no patient's fold depends on the
        others), the fits and the scorer calls take ``groups``, and the total is per
        patient under *add or remove one patient* (the replace-one total charged
        bounds it; :doc:`/patients`). Needs an estimator that takes ``groups``,
        scorers made with ``max_rows_per_group`` and ``cv=<int>``. A fold without
        patients is scored with noise only; ``ValueError`` (before the charge) only
        when every patient falls in one fold (probability ``n_splits ** (1 - G)`` for
        ``G`` patients).

    Returns
    -------
    result : dict
        ``"test_score"`` (one scorer) or ``"test_<name>"`` (a dict of scorers): the noisy
        score of every fold, shape ``(k,)``; ``"epsilon_spent"``,
        ``"delta_spent"``: the total under replace one row; ``"privacy_guarantee"``;
        ``"n_splits"``: the number of folds ``k``; ``"privacy_unit"``: ``"row"``, or
        ``"group"`` with ``groups``; ``"estimator"``: the fold models, with
        ``return_estimator``. No timings (a fit's duration can depend on the data).

    Notes
    -----
    **Relation.** Replace one row, ``n`` public: the relation of the DP scorers.
    Estimators report add/remove one row; a replacement is a removal and an addition,
    so a fit with ``(e, d)`` costs ``(2 e, (1 + e^e) d)`` here (group privacy).

    **Accounting.** The folds do not depend on the data: the partition is a function of
    ``n``, the number of folds ``k`` and the key, so on two neighbouring data sets every
    row keeps its fold and the replaced row's replacement takes its place. The replaced
    row is then in one test fold (one call of each scorer, ``S = sum(epsilon)`` of the
    scorers; the other folds' calls see identical rows: parallel composition) and in
    ``k - 1`` training sets (``2 e`` each)::

        epsilon_spent = S + (k - 1) * 2 e

    exactly :func:`skdp.metrics.cv_privacy_spend` with ``n_candidates=1, refit=False``.
    ``e``/``d`` are the estimator's declared ``epsilon``/``delta`` (every skdp estimator
    spends at most those; each fit's ``epsilon_spent_`` is checked against them after
    the fit, and a larger one raises ``RuntimeError``). A step declaring more than it
    spends (``DPSimpleImputer(strategy="constant")`` keeps ``epsilon``) is charged the
    declared value.

    **Ledger.** The total is charged once, in the calling process, before any fit; the
    scorers are called without their ledger, so nothing is counted twice. A scorer
    holding a different ledger is refused. Errors of a fit or a scorer are raised, never
    turned into NaN scores.

    **Folds.** Not ``KFold`` on the caller's order nor ``StratifiedKFold`` (which reads
    the labels): a random permutation of the positions (a fresh key per call unless
    ``random_state`` is given), cut into folds whose sizes depend on ``n`` alone. A
    ``KFold(k, shuffle=True)`` is the same construction with scikit-learn's
    permutation and cut, keyed by its own ``random_state``; it is accounted as
    ``cv=k``. Contiguous folds of the caller's order (``KFold(shuffle=False)``) are
    refused: a table sorted by outcome would put the rows of one outcome together, and
    replacing one row could then move other rows across fold boundaries. Splitters
    that read ``y`` or ``groups``, and precomputed folds, are refused for the same
    reason: the accounting holds only for folds fixed by ``n`` and a key. Assigning
    folds by a keyed hash of each row's values would keep the other rows' folds when a
    row is *added*, but under replace-one it lets the replacement land in another
    fold, changing two test folds and their sizes, which the DP scorers (``N`` public)
    do not allow. A given ``random_state`` is hashed (as in
    :func:`skdp.utils._random.fit_streams`) with ``n`` and ``k`` but not with the data,
    and the key is never stored.

    **Exact.** The total is a proven bound when the estimator's guarantee is exact
    (``privacy_guarantee`` is the weakest over the fits; the DP scorers are exact for
    the mathematical mechanism).

    References
    ----------
    .. [1] F. McSherry. "Privacy integrated queries". SIGMOD 2009 (parallel composition).
    .. [2] {ref_dwork_roth2014_groups}

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.accounting import PrivacyLedger
    >>> from skdp.ilp import DPILPClassifier
    >>> from skdp.metrics import make_dp_scorer
    >>> from skdp.model_selection import dp_cross_validate
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 2, size=(3000, 4))
    >>> y = X[:, 0] & X[:, 1]
    >>> ledger = PrivacyLedger(epsilon_budget=10.0)
    >>> res = dp_cross_validate(
    ...     DPILPClassifier(epsilon=1.0, max_clause_length=2, random_state=0), X, y,
    ...     scoring=make_dp_scorer("accuracy", epsilon=0.5), cv=3, ledger=ledger,
    ...     random_state=0)
    >>> res["epsilon_spent"], ledger.epsilon_spent  # 0.5 + 2 * (2 * 1.0)
    (4.5, 4.5)
    >>> bool(np.all(res["test_score"] > 0.9))
    True

    A shuffled ``KFold`` gives its own folds, accounted the same way; a splitter that
    reads the labels is refused:

    >>> from sklearn.model_selection import KFold, StratifiedKFold
    >>> res = dp_cross_validate(
    ...     DPILPClassifier(epsilon=1.0, max_clause_length=2, random_state=0), X, y,
    ...     scoring=make_dp_scorer("accuracy", epsilon=0.5),
    ...     cv=KFold(3, shuffle=True, random_state=0))
    >>> res["epsilon_spent"], res["n_splits"]
    (4.5, 3)
    >>> dp_cross_validate(
    ...     DPILPClassifier(epsilon=1.0), X, y, scoring=make_dp_scorer("accuracy", epsilon=0.5),
    ...     cv=StratifiedKFold(3))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: dp_cross_validate: cv=StratifiedKFold(...) is refused: it reads y, ...
    """
    _check_common(estimator, X, y, allow_nonprivate)
    folds = check_cv(cv, n_splits, where="dp_cross_validate")
    return_estimator = _check_bool(return_estimator, "return_estimator")
    plan = _Plan(
        estimator,
        [{}],
        scoring,
        folds,
        False,
        ledger,
        allow_nonprivate,
        "dp_cross_validate",
    )
    if groups is None:  # with groups the row count is private: group_folds decides
        folds.check_n_samples(_num_samples(X))
    else:
        check_groups(groups, _num_samples(X))
        if folds.splitter is not None:
            raise ValueError(
                "dp_cross_validate: with groups= the folds are a keyed hash of each "
                "patient's label; pass cv=<int>, not a splitter"
            )
        check_group_support([estimator], plan.scorers, "dp_cross_validate")
        groups = np.asarray(groups)
    unit, group_fold = "row", None
    if groups is not None:  # refused before the charge only if one fold holds all
        unit, group_fold = "group", group_folds(groups, folds.n_splits, random_state)
    plan.charge(ledger, "dp_cross_validate (replace-one)", unit=unit)
    scores, guarantees, models = plan.run(
        X,
        y,
        random_state,
        keep_models=return_estimator,
        n_jobs=n_jobs,
        groups=groups,
        folds=group_fold,
    )
    out = {}
    for name, values in scores.items():
        key = "test_score" if not plan.multimetric else f"test_{name}"
        out[key] = values[0].copy()
    out["epsilon_spent"] = plan.epsilon
    out["delta_spent"] = plan.delta
    out["privacy_guarantee"] = "none" if math.isinf(plan.epsilon) else weakest_guarantee(guarantees)
    out["n_splits"] = folds.n_splits
    out["privacy_unit"] = unit
    if return_estimator:
        out["estimator"] = models
    return out
