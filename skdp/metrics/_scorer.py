"""DP scorers for scikit-learn model selection and the privacy spend of a CV / grid search.

Composition: sequential over candidates scored on the same rows, parallel over disjoint
folds (McSherry 2009); relations: :ref:`neighbouring-relation`.
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Sequence
from numbers import Integral, Real

import numpy as np

from skdp.accounting._ledger import _check_relation, _replace_one_from_add_remove
from skdp.base import _shared_constraints
from skdp.exceptions import BudgetExceededError, LedgerCopyError, PrivacySpendAborted
from skdp.metrics._accuracy import dp_accuracy_score
from skdp.metrics._ranking import (
    dp_average_precision_score,
    dp_roc_auc_score,
)
from skdp.utils._rowsum import is_dask_collection
from skdp.utils._sklearn_compat import validate_params
from skdp.utils.validation import check_privacy_params

__all__ = ["DPScorer", "cv_privacy_spend", "make_dp_scorer"]

_RANKING = ("decision_function", "predict_proba")

# name -> (function, default response_method, takes pos_label)
_METRICS = {
    "roc_auc": (dp_roc_auc_score, _RANKING, True),
    "average_precision": (dp_average_precision_score, _RANKING, True),
    "accuracy": (dp_accuracy_score, "predict", False),
}
_BY_FUNCTION = {fn: name for name, (fn, _, _) in _METRICS.items()}


class DPScorer:
    """A differentially private scorer: ``scorer(estimator, X, y) -> float``.

    Made by :func:`make_dp_scorer`; usable as ``scoring=`` (alone or in a dict) in
    :func:`~sklearn.model_selection.cross_val_score`,
    :func:`~sklearn.model_selection.cross_validate` and
    :class:`~sklearn.model_selection.GridSearchCV`. Every call spends ``(epsilon,
    delta)`` on the rows it is given (see :func:`make_dp_scorer` for the accounting).

    Parameters
    ----------
    metric : callable
        One of :func:`dp_roc_auc_score`, :func:`dp_average_precision_score`,
        :func:`dp_accuracy_score`, or a function with the same keyword interface.
    epsilon, delta : float
        Privacy loss of one call.
    random_state : None, int or numpy.random.Generator
        ``None``: fresh OS entropy on every call. Otherwise every call draws its noise
        from a stream seeded by ``random_state`` together with a digest of the call's
        inputs, so that calls on different rows never reuse the same noise, even in
        joblib worker copies, and a run gives the same scores whatever ``n_jobs`` is.
    ledger : PrivacyLedger or None
        Charged on each call (``ledger.spend(epsilon, delta)``). A refusal (budget
        exhausted, or the ledger is a copy in a joblib worker) raises
        :class:`~skdp.exceptions.PrivacySpendAborted`, which stops a search.
    response_method : str or tuple of str
        Estimator method(s) giving the scores, the first one available is used.
    pos_label : label or None
        Positive class; ``None`` means ``estimator.classes_[-1]``.
    metric_kwargs : dict
        Extra keyword arguments for ``metric`` (e.g. ``sensitivity_form``).
    """

    def __init__(
        self,
        metric,
        *,
        epsilon,
        delta,
        random_state,
        ledger,
        response_method,
        pos_label,
        takes_pos_label,
        metric_kwargs,
    ):
        self.metric = metric
        self.epsilon = epsilon
        self.delta = delta
        self.random_state = random_state
        self.ledger = ledger
        self.response_method = response_method
        self.pos_label = pos_label
        self.takes_pos_label = takes_pos_label
        self.metric_kwargs = dict(metric_kwargs)

    def __repr__(self):
        name = getattr(self.metric, "__name__", repr(self.metric))
        return (
            f"make_dp_scorer({name}, epsilon={self.epsilon!r}, delta={self.delta!r}, "
            f"response_method={self.response_method!r})"
        )

    # ---------------------------------------------------------------- scores from model
    def _response(self, estimator, X):
        methods = (
            (self.response_method,)
            if isinstance(self.response_method, str)
            else tuple(self.response_method)
        )
        for method in methods:
            if hasattr(estimator, method):
                break
        else:
            raise AttributeError(
                f"{type(estimator).__name__} has none of the response methods {methods}"
            )
        if is_dask_collection(X):  # scored per partition; the rows stay on the workers
            return self._dask_response(estimator, X, method)
        return self._select(np.asarray(getattr(estimator, method)(X)), estimator, method)

    def _dask_response(self, estimator, X, method):
        """The response as a lazy 1-D Dask array, one block per partition of ``X``."""
        classes = getattr(estimator, "classes_", None)
        width = 0 if classes is None else len(classes)
        # the positive label and the class checks come from the fitted classes alone
        empty = np.zeros((0, width)) if method == "predict_proba" and width else np.zeros(0)
        _, pos_label = self._select(empty, estimator, method)
        dtype = np.asarray(classes).dtype if method == "predict" and width else np.float64
        scorer = copy.copy(self)
        scorer.ledger = None  # the workers need the class logic, never the ledger
        block = functools.partial(_block_response, scorer, estimator, method)
        if hasattr(X, "chunks"):  # a Dask array: one block of rows, all columns
            X = X.rechunk({1: -1}) if X.ndim == 2 else X
            out = X.map_blocks(
                block, dtype=dtype, drop_axis=list(range(1, X.ndim)), chunks=(X.chunks[0],)
            )
        else:  # a Dask DataFrame
            out = X.map_partitions(_series_response, block, meta=("score", dtype))
        return out, pos_label

    def _select(self, out, estimator, method):
        """The positive class's scores from the output of ``method`` (and ``pos_label``)."""
        if method == "predict" or not self.takes_pos_label:
            return out, self.pos_label
        classes = getattr(estimator, "classes_", None)
        pos_label = self.pos_label
        if classes is None:
            if method == "predict_proba" and out.ndim == 2:
                out = out[:, -1]
            return out, pos_label
        classes = np.asarray(classes)
        if classes.shape[0] > 2:
            raise ValueError("DP ranking scorers support binary classifiers only")
        if pos_label is None:
            pos_label = classes[-1]
        is_pos = classes == pos_label
        if classes.shape[0] == 2 and not is_pos.any():
            raise ValueError("pos_label is not one of the estimator's classes")
        if method == "predict_proba":
            if out.ndim == 2:
                if is_pos.any():
                    out = out[:, int(np.flatnonzero(is_pos)[0])]
                else:  # the classifier never saw the positive class
                    out = np.zeros(out.shape[0])
        else:  # decision_function: scores of classes_[1]
            if out.ndim == 2 and out.shape[1] == 1:
                out = out[:, 0]
            if classes.shape[0] == 2 and is_pos[0]:
                out = -out
        return out, pos_label

    def __call__(self, estimator, X, y_true, sample_weight=None, **kwargs):
        """Score ``estimator`` on ``(X, y_true)``, spending ``(epsilon, delta)``.

        ``X`` and ``y_true`` may be Dask collections (:doc:`/dask`): the estimator's
        response is computed partition by partition on the workers and the metric counts
        it there; the release is the same as for the same rows in memory.
        """
        if sample_weight is not None:
            raise ValueError("DP scorers do not support sample_weight (it changes sensitivity)")
        if kwargs:
            raise ValueError(f"DP scorers take no extra score parameters, got {sorted(kwargs)}")
        y_score, pos_label = self._response(estimator, X)
        kw = dict(self.metric_kwargs)
        if self.takes_pos_label:
            kw["pos_label"] = pos_label
        return float(
            self.metric(
                y_true,
                y_score,
                epsilon=self.epsilon,
                delta=self.delta,
                # the metric binds the seed to itself, its budget and this call's inputs
                random_state=self.random_state,
                ledger=_scorer_ledger(self.ledger),
                **kw,
            )
        )

    def privacy_spend(self, *, n_splits, n_candidates=1, **kwargs):
        """Total ``(epsilon, delta)`` of a CV or grid search scored by this scorer.

        Shorthand for :func:`cv_privacy_spend` with this scorer's ``epsilon``/``delta``.
        """
        return cv_privacy_spend(
            epsilon=self.epsilon,
            delta=self.delta,
            n_splits=n_splits,
            n_candidates=n_candidates,
            **kwargs,
        )


@validate_params(_shared_constraints("random_state"), prefer_skip_nested_validation=True)
def make_dp_scorer(
    metric,
    *,
    epsilon,
    delta=0.0,
    random_state=None,
    ledger=None,
    response_method=None,
    pos_label=None,
    **metric_kwargs,
):
    """Make a differentially private scorer for scikit-learn model selection.

    Parameters
    ----------
    metric : {"roc_auc", "average_precision", "accuracy"} or callable
        The DP metric, by name or as the function (:func:`dp_roc_auc_score`,
        :func:`dp_average_precision_score`, :func:`dp_accuracy_score`). Another callable
        must accept ``(y_true, y_score, *, epsilon, delta, random_state, ledger)`` and
        then needs an explicit ``response_method``.
    epsilon : float
        Privacy loss of **one** scorer call (> 0).
    delta : float, default=0.0
        ``delta`` of one call; 0 gives pure DP (Cauchy-type noise for AUC/AP).
    random_state : None, int or numpy.random.Generator, default=None
        ``None`` (use this for a real release) draws fresh noise on every call. A fixed
        value makes runs reproducible: each call's noise is seeded by ``random_state``
        and a digest of its inputs, so distinct calls never share noise, including in
        joblib worker copies, and ``n_jobs=1`` and ``n_jobs=2`` give the same scores.
    ledger : PrivacyLedger, optional
        Each call runs ``ledger.spend(epsilon, delta)``: a sequential, conservative
        record (it does not know that folds are disjoint). Only with ``n_jobs=1``: see
        Notes.
    response_method : str or tuple of str, optional
        Default ``("decision_function", "predict_proba")`` for AUC and AP (as
        scikit-learn's ``roc_auc`` scorer), ``"predict"`` for accuracy.
    pos_label : label, optional
        Positive class for AUC/AP; default ``estimator.classes_[-1]``.
    **metric_kwargs
        Passed on to the metric (e.g. ``sensitivity_form="log"``, ``gamma=3.0``).

    Returns
    -------
    scorer : DPScorer
        Callable ``scorer(estimator, X, y) -> float``, picklable.

    Notes
    -----
    Privacy of one call: that of the metric (replace-one neighbouring relation on the
    rows scored, their number public; pure ``epsilon``-DP with ``delta=0``, otherwise
    ``(epsilon, delta)``-DP; exact guarantee) -- see :func:`dp_roc_auc_score`.

    Accounting across model selection (McSherry 2009, parallel composition): the
    test folds of one cross-validation are disjoint, so one candidate's calls compose in
    **parallel** (one ``(epsilon, delta)`` per candidate); candidates of a grid are scored
    on the same rows, so they compose **sequentially**. :func:`cv_privacy_spend` (or
    :meth:`DPScorer.privacy_spend`) returns the total of a run; charge it to your ledger
    before the run (``ledger.spend(*cv_privacy_spend(...))``). That is the way with
    ``n_jobs > 1``: scikit-learn pickles the scorer into joblib workers, where the
    ledger is a copy that could neither record into your ledger nor enforce its budget,
    so a copy refuses to spend and the run stops. A scorer given ``ledger=`` suits
    ``n_jobs=1`` (the same scorer object is called in your process and charges your
    ledger). When the ledger refuses a spend, the scorer raises
    :class:`~skdp.exceptions.PrivacySpendAborted`, a :class:`BaseException`
    that scikit-learn's ``error_score`` cannot turn into a NaN score: the search fails
    instead of returning a selection made from the scores released so far. Wrapping
    the scorer in an object that scikit-learn clones (``sklearn.base.clone`` deep-copies
    parameters, e.g. a ``GridSearchCV`` inside ``cross_validate``) copies the ledger too.

    Parallel composition needs folds that do not depend on the private data: pass
    ``cv=KFold(n_splits, shuffle=True, random_state=...)`` explicitly. With ``cv=<int>``
    scikit-learn uses ``StratifiedKFold`` for classifiers, whose fold membership and fold
    sizes depend on the private labels; neither the parallel composition nor the public
    fold sizes are then justified. ``return_train_score=True`` scores the training rows
    too (more calls per row; say so to :func:`cv_privacy_spend`).

    A private ``GridSearchCV`` selection (``best_params_``, ``best_score_``,
    ``cv_results_``) is only as private as its scorer, and only with respect to the rows
    being scored: the scores also depend on models trained on the other folds, so the
    run is differentially private for every row only if the estimator's ``fit`` is DP
    too (add its budget with ``fit_epsilon``). The refit model (``best_estimator_``) is
    not private unless the estimator is.

    References
    ----------
    .. [1] E. Lantz. PhD thesis, ch. 7, 2016.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import KFold, cross_val_score
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skdp.metrics import make_dp_scorer
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> scorer = make_dp_scorer("roc_auc", epsilon=1.0, delta=1e-4, random_state=0)
    >>> cv = KFold(5, shuffle=True, random_state=0)
    >>> model = make_pipeline(StandardScaler(), LogisticRegression())
    >>> scores = cross_val_score(model, X, y, cv=cv, scoring=scorer)
    >>> scorer.privacy_spend(n_splits=5)  # disjoint folds: parallel composition
    (1.0, 0.0001)
    """
    if isinstance(metric, str):
        if metric not in _METRICS:
            raise ValueError(f"metric must be one of {sorted(_METRICS)} or a callable")
        fn, default_method, takes_pos = _METRICS[metric]
    elif callable(metric):
        fn = metric
        name = _BY_FUNCTION.get(metric)
        if name is not None:
            _, default_method, takes_pos = _METRICS[name]
        else:
            if response_method is None:
                raise ValueError("response_method is required for a custom metric")
            default_method, takes_pos = None, pos_label is not None
    else:
        raise ValueError("metric must be a string or a callable")
    epsilon, delta = check_privacy_params(epsilon, delta)
    if response_method is None:
        response_method = default_method
    if isinstance(response_method, str):
        methods = (response_method,)
    else:
        methods = tuple(response_method)
    allowed = {"predict", "predict_proba", "decision_function"}
    if not methods or not set(methods) <= allowed:
        raise ValueError(f"response_method must be among {sorted(allowed)}")
    return DPScorer(
        fn,
        epsilon=epsilon,
        delta=delta,
        random_state=random_state,
        ledger=ledger,
        response_method=response_method,
        pos_label=pos_label,
        takes_pos_label=takes_pos,
        metric_kwargs=metric_kwargs,
    )


class _AbortOnRefusal:
    """The ledger as a :class:`DPScorer` hands it to its metric: a refusal aborts the run.

    scikit-learn's model selection turns every :class:`Exception` a scorer raises into
    ``error_score`` (NaN by default) and carries on, so a refused spend would leave a
    search that selects among the scores released before the budget ran out. The
    ledger's :class:`~skdp.exceptions.BudgetExceededError` or
    :class:`~skdp.exceptions.LedgerCopyError` is therefore re-raised as
    :class:`~skdp.exceptions.PrivacySpendAborted` (a :class:`BaseException`).
    """

    __slots__ = ("ledger",)

    def __init__(self, ledger):
        self.ledger = ledger

    def spend(self, epsilon, delta=0.0, *, label=None):
        try:
            self.ledger.spend(epsilon, delta, label=label)
        except (BudgetExceededError, LedgerCopyError) as exc:
            raise PrivacySpendAborted.from_refusal(exc) from exc
        return self

    def __getattr__(self, name):  # anything else a custom metric reads
        if name == "ledger":  # not set yet: no recursion
            raise AttributeError(name)
        return getattr(self.ledger, name)


def _block_response(scorer, estimator, method, X):
    """The positive class's scores of one block of rows (runs on a worker)."""
    return np.asarray(
        scorer._select(np.asarray(getattr(estimator, method)(X)), estimator, method)[0]
    )


def _series_response(frame, block):
    import pandas as pd

    return pd.Series(block(frame), index=frame.index, name="score")


def _scorer_ledger(ledger):
    return None if ledger is None else _AbortOnRefusal(ledger)


_NUMBER = (Real, np.floating, np.integer)


def _check_flag(value, name):
    """A real bool (``True``/``False``, or a numpy bool): no strings, no 0/1."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be a bool (True or False), got {type(value).__name__}")
    return bool(value)


def _check_amount(value, name, *, positive, high, allow_inf):
    """One epsilon or delta: a real number (not a bool or a string) in its range."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, _NUMBER):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must not be NaN")
    if math.isinf(value) and not allow_inf:
        raise ValueError(f"{name} must be finite")
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'}")
    if high is not None and value >= high:
        raise ValueError(f"{name} must be < {high}")
    return value


def _as_budgets(value, name, **check):
    """A number, or a non-empty 1-D sequence / array of numbers, as a list of floats.

    A string is refused (it is a sequence of characters: ``"12"`` is not two budgets).
    """
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            value = value.item()
        elif value.ndim == 1:
            value = value.tolist()
        else:
            raise ValueError(f"{name} must be a number or a 1-D sequence of numbers")
    if isinstance(value, str | bytes) or not isinstance(value, _NUMBER + (Sequence,)):
        raise TypeError(
            f"{name} must be a number or a sequence of numbers, got {type(value).__name__}"
        )
    if not isinstance(value, Sequence):
        return [_check_amount(value, name, **check)]
    if len(value) == 0:
        raise ValueError(f"{name} must not be empty")
    return [_check_amount(v, f"{name}[{i}]", **check) for i, v in enumerate(value)]


def _check_count(value, name, minimum):
    """An integer >= ``minimum`` (not a bool, a float or a string)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, _NUMBER):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if not isinstance(value, Integral | np.integer):
        raise ValueError(f"{name} must be an integer")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}")
    if value > _MAX_COUNT:  # the per-candidate lists below are built in memory
        raise ValueError(f"{name} must be at most {_MAX_COUNT}")
    return int(value)


_MAX_COUNT = 10**7


def _per_candidate(values, name, n_candidates):
    if len(values) == 1:
        return values * n_candidates
    if len(values) != n_candidates:
        raise ValueError(f"{name} must be a number or have one entry per candidate (n_candidates)")
    return values


def cv_privacy_spend(
    *,
    epsilon,
    n_splits,
    delta=0.0,
    n_candidates=1,
    disjoint_folds=True,
    n_repeats=1,
    return_train_score=False,
    fit_epsilon=0.0,
    fit_delta=0.0,
    fit_relation="add_remove",
    refit=True,
):
    """Total ``(epsilon, delta)`` of a ``cross_validate`` / ``GridSearchCV`` run with DP scorers.

    The total is stated under **replace one row** (the relation of skdp's DP scorers):
    the fits' add/remove budgets are converted by group privacy. A pure function of
    public quantities, so it gives the same answer whatever ``n_jobs`` is; charge it to
    your ledger before the run (``ledger.spend(*cv_privacy_spend(...))``).

    Parameters
    ----------
    epsilon : float or sequence of float
        ``epsilon`` of one call of each scorer (a sequence for a dict of scorers), as
        given to :func:`make_dp_scorer` (replace-one).
    n_splits : int
        Number of train/test splits of the CV (per repeat).
    delta : float or sequence of float, default=0.0
        ``delta`` of one call of each scorer (same length as ``epsilon`` if a sequence).
    n_candidates : int, default=1
        Number of hyper-parameter candidates (``len(ParameterGrid(param_grid))``;
        1 for ``cross_validate``).
    disjoint_folds : bool, default=True
        Whether the test sets of one repeat partition the rows: every row is in exactly
        one test set (``KFold``, ``GroupKFold`` with data-independent groups). ``False``
        for ``ShuffleSplit`` and other splitters whose test sets overlap or leave rows
        out: every split is then counted for every row.
    n_repeats : int, default=1
        Repeats of the CV (``RepeatedKFold(n_splits=k, n_repeats=r)``).
    return_train_score : bool, default=False
        Whether the scorers were also called on the training rows.
    fit_epsilon : float or sequence of float, default=0.0
        Budget of one ``fit`` of a DP estimator (its ``epsilon_spent_``), to include the
        models in the total; ``inf`` for a non-private estimator. A sequence gives one
        value per candidate (``n_candidates`` of them), for a grid over ``epsilon``.
        ``0`` leaves the fits out (see Notes).
    fit_delta : float or sequence of float, default=0.0
        ``delta`` of one fit (its ``delta_spent_``), a number or one per candidate.
    fit_relation : {"add_remove", "replace"}, default="add_remove"
        The neighbouring relation ``fit_epsilon``/``fit_delta`` are stated under.
        Every skdp estimator reports add/remove one row; its replace-one cost
        ``(2 epsilon, (1 + e^epsilon) delta)`` is charged. ``"replace"`` takes them as
        they are.
    refit : bool, default=True
        Whether a final fit on all rows follows (``GridSearchCV(refit=True)``, its
        default); counts one more fit, at the largest ``fit_epsilon``/``fit_delta`` over
        the candidates (the refit candidate is chosen from the data). ``False`` for
        ``cross_validate`` and ``GridSearchCV(refit=False)``.

    Returns
    -------
    epsilon, delta : float
        Total spend under replace one row, by basic composition (delta capped at 1).

    Notes
    -----
    Neighbouring relation: replace one row, with the number of rows and the split
    layout public (data-independent splits such as ``KFold(shuffle=True)``; not
    ``StratifiedKFold``, whose folds depend on the private labels). skdp's DP scorers
    are replace-one; skdp's estimators are add/remove (``n`` public), and a replacement
    is a removal and an addition, so an add/remove ``(e, d)``-DP fit is
    ``(2 e, (1 + exp(e)) d)``-DP under replace-one (group privacy). Adding the scorers'
    replace-one epsilon to the fits' add/remove epsilon would understate the total.

    Per candidate and repeat, a row is in the test set of a split (scored by every
    scorer: ``S = sum(epsilon)``) or in its training set (one fit, ``F`` after the
    conversion above, plus ``S`` with ``return_train_score``). With disjoint folds a row
    is tested once and trained on ``n_splits - 1`` times (parallel composition over the
    test folds); otherwise each split costs it at most the larger of the two. Candidates
    and repeats share rows and compose sequentially::

        train = F_c + (S if return_train_score else 0)
        per_c = S + (n_splits - 1) * train           if disjoint_folds
              = n_splits * max(S, train)              otherwise
        eps   = n_repeats * sum_c per_c + (max_c F_c if refit else 0)

    and the same for ``delta`` (with ``sum(delta)`` and the converted fit delta). With
    ``fit_epsilon=0`` the total covers the scorer calls only: the selection is then
    private with respect to the rows being scored, but the scores also depend on
    non-private models trained on the other rows, and the refit model releases its
    training data. A private grid search is only as private as its scorer and its
    estimator.

    References
    ----------
    .. [1] F. McSherry. "Privacy integrated queries". SIGMOD 2009 (parallel composition).
    .. [2] E. Lantz. PhD thesis, Thm 2.4 (sequential composition), 2016.
    .. [3] C. Dwork, A. Roth. "The Algorithmic Foundations of Differential Privacy",
       2014, Thm 2.2 (group privacy).

    Examples
    --------
    >>> from skdp.metrics import cv_privacy_spend
    >>> cv_privacy_spend(epsilon=0.5, n_splits=5, n_candidates=4)
    (2.0, 0.0)
    >>> cv_privacy_spend(epsilon=0.5, delta=1e-6, n_splits=4, disjoint_folds=False)
    (2.0, 4e-06)

    A DP estimator with ``epsilon`` in the grid (one fit budget per candidate), refit on
    all rows: each add/remove fit epsilon counts twice under replace-one.

    >>> cv_privacy_spend(epsilon=0.1, n_splits=5, n_candidates=2, fit_epsilon=[0.5, 1.0])
    (14.2, 0.0)
    """
    eps = _as_budgets(epsilon, "epsilon", positive=True, high=None, allow_inf=True)
    dls = _as_budgets(delta, "delta", positive=False, high=1.0, allow_inf=False)
    if len(dls) == 1 and len(eps) > 1:
        dls = dls * len(eps)
    if len(dls) != len(eps):
        raise ValueError("epsilon and delta must have the same length")
    n_splits = _check_count(n_splits, "n_splits", 1)
    n_candidates = _check_count(n_candidates, "n_candidates", 1)
    n_repeats = _check_count(n_repeats, "n_repeats", 1)
    disjoint_folds = _check_flag(disjoint_folds, "disjoint_folds")
    return_train_score = _check_flag(return_train_score, "return_train_score")
    refit = _check_flag(refit, "refit")
    fit_relation = _check_relation(fit_relation, "fit_relation")
    fit_eps = _as_budgets(fit_epsilon, "fit_epsilon", positive=False, high=None, allow_inf=True)
    fit_dls = _as_budgets(fit_delta, "fit_delta", positive=False, high=1.0, allow_inf=False)
    fit_eps = _per_candidate(fit_eps, "fit_epsilon", n_candidates)
    fit_dls = _per_candidate(fit_dls, "fit_delta", n_candidates)
    fits = [
        _replace_one_from_add_remove(e, d) if fit_relation == "add_remove" else (e, d)
        for e, d in zip(fit_eps, fit_dls, strict=True)
    ]

    def total(score, fit_costs):
        """One coordinate (epsilon or delta) of the total."""
        parts = []  # per repeat
        for fit in fit_costs:
            train = fit + (score if return_train_score else 0.0)
            if not disjoint_folds:
                parts.append(n_splits * max(score, train))
            elif n_splits > 1:  # (no 0 * inf)
                parts += [score, (n_splits - 1) * train]
            else:
                parts.append(score)
        return n_repeats * math.fsum(parts) + (max(fit_costs) if refit else 0.0)

    total_eps = total(math.fsum(eps), [e for e, _ in fits])
    total_delta = total(math.fsum(dls), [d for _, d in fits])
    return float(total_eps), float(min(1.0, total_delta))
