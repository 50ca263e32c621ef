"""DP scorers for scikit-learn model selection and the privacy spend of a CV / grid search.

Spec: ``lantz.md`` §0 item 7, spec README §2 row 20.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Integral, Real

import numpy as np

from skdp.metrics._ranking import (
    dp_accuracy_score,
    dp_average_precision_score,
    dp_roc_auc_score,
)
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
        Records each call made **in this process** (``ledger.spend(epsilon, delta)``).
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
        out = np.asarray(getattr(estimator, method)(X))
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

    def _call_random_state(self, y_true, y_score):
        # the metric functions bind the seed to the metric, its budget and the
        # call's inputs (skdp.utils._random.release_rng); nothing to add here
        return self.random_state

    def __call__(self, estimator, X, y_true, sample_weight=None, **kwargs):
        """Score ``estimator`` on ``(X, y_true)``, spending ``(epsilon, delta)``."""
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
                random_state=self._call_random_state(y_true, y_score),
                ledger=self.ledger,
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
        Each call in the calling process runs ``ledger.spend(epsilon, delta)``: a
        sequential, conservative record (it does not know that folds are disjoint). Not
        reliable with ``n_jobs > 1``: see Notes.
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

    Accounting across model selection (skdp spec ``lantz.md`` §0 item 7): the
    test folds of one cross-validation are disjoint, so one candidate's calls compose in
    **parallel** (one ``(epsilon, delta)`` per candidate); candidates of a grid are scored
    on the same rows, so they compose **sequentially**. :func:`cv_privacy_spend` (or
    :meth:`DPScorer.privacy_spend`) returns the total of a run; charge it to your ledger
    before the run (``ledger.spend(*cv_privacy_spend(...))``). That is the reliable way
    with ``n_jobs > 1``: scikit-learn pickles the scorer into joblib workers, where the
    ledger is a copy whose spends never reach your ledger. With a budgeted ledger pass
    ``error_score="raise"``: scikit-learn otherwise turns the scorer's
    :class:`~skdp.exceptions.BudgetExceededError` into a NaN score and a warning.

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


def _as_budgets(value, name):
    if isinstance(value, (Real, np.floating, np.integer)) and not isinstance(value, bool):
        return [float(value)]
    if isinstance(value, Sequence) and len(value) > 0:
        return [float(v) for v in value]
    raise ValueError(f"{name} must be a number or a non-empty sequence of numbers")


def _check_count(value, name, minimum):
    if isinstance(value, bool) or not isinstance(value, (Integral, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}")
    return int(value)


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
    refit=False,
):
    """Total ``(epsilon, delta)`` of a ``cross_validate`` / ``GridSearchCV`` run with DP scorers.

    A pure function of public quantities, so it gives the same answer whatever
    ``n_jobs`` is (unlike a ledger held by the scorer, whose worker copies record
    separately).

    Parameters
    ----------
    epsilon : float or sequence of float
        ``epsilon`` of one call of each scorer (a sequence for a dict of scorers).
    n_splits : int
        Number of train/test splits of the CV (per repeat).
    delta : float or sequence of float, default=0.0
        ``delta`` of one call of each scorer (same length as ``epsilon`` if a sequence).
    n_candidates : int, default=1
        Number of hyper-parameter candidates (``len(ParameterGrid(param_grid))``;
        1 for ``cross_validate``).
    disjoint_folds : bool, default=True
        Whether every row is in at most one test fold per repeat (``KFold``,
        ``GroupKFold`` with data-independent groups). ``False`` for ``ShuffleSplit`` and
        other splitters whose test sets overlap: then every split is counted for every row.
    n_repeats : int, default=1
        Repeats of the CV (``RepeatedKFold(n_splits=k, n_repeats=r)``).
    return_train_score : bool, default=False
        Whether the scorers were also called on the training rows.
    fit_epsilon, fit_delta : float, default=0.0
        Budget of one ``fit`` of a DP estimator, to include the models in the total
        (each row is in the training set of ``n_splits - 1`` fits per candidate and
        repeat with disjoint folds, of up to ``n_splits`` otherwise).
    refit : bool, default=False
        Whether a final fit on all rows follows (``GridSearchCV(refit=True)``); counts one
        more ``fit_epsilon``.

    Returns
    -------
    epsilon, delta : float
        Total spend under basic composition (sums of ``epsilon`` and of ``delta``).

    Notes
    -----
    Neighbouring relation: replace one row, with the total number of rows and the split
    layout public (data-independent splits such as ``KFold(shuffle=True)``; not
    ``StratifiedKFold``, whose folds depend on the private labels). For one candidate and
    one repeat a row is scored once with disjoint folds (parallel composition over the
    test folds), or in every split otherwise; with ``return_train_score`` it is scored in
    every split (once as a test row, otherwise as a training row). Candidates, repeats
    and scorers share rows and compose sequentially; so do the fits. The total is::

        calls = n_repeats * (1 if disjoint_folds and not return_train_score else n_splits)
        fits  = n_repeats * (n_splits - 1 if disjoint_folds else n_splits)
        eps   = n_candidates * (calls * sum(epsilon) + fits * fit_epsilon)
                + (fit_epsilon if refit else 0)

    and the same for ``delta``. Without ``fit_epsilon`` the total covers the scorer
    calls only: the selection is then private with respect to the rows being scored, but
    the scores also depend on non-private models trained on the other rows. A private
    grid search is only as private as its scorer and its estimator; the refit model is
    not private unless the estimator is.

    References
    ----------
    .. [1] F. McSherry. "Privacy integrated queries". SIGMOD 2009 (parallel composition).
    .. [2] E. Lantz. PhD thesis, Thm 2.4 (sequential composition), 2016.

    Examples
    --------
    >>> from skdp.metrics import cv_privacy_spend
    >>> cv_privacy_spend(epsilon=0.5, n_splits=5, n_candidates=4)
    (2.0, 0.0)
    >>> cv_privacy_spend(epsilon=0.5, delta=1e-6, n_splits=4, disjoint_folds=False)
    (2.0, 4e-06)
    """
    eps = _as_budgets(epsilon, "epsilon")
    dls = _as_budgets(delta, "delta")
    if len(dls) == 1 and len(eps) > 1:
        dls = dls * len(eps)
    if len(dls) != len(eps):
        raise ValueError("epsilon and delta must have the same length")
    for e, d in zip(eps, dls, strict=True):
        check_privacy_params(e, d)
    fit_epsilon, fit_delta = float(fit_epsilon), float(fit_delta)
    if not (fit_epsilon >= 0 and 0 <= fit_delta < 1):
        raise ValueError("fit_epsilon must be >= 0 and fit_delta in [0, 1)")
    n_splits = _check_count(n_splits, "n_splits", 1)
    n_candidates = _check_count(n_candidates, "n_candidates", 1)
    n_repeats = _check_count(n_repeats, "n_repeats", 1)
    calls = n_repeats * (1 if disjoint_folds and not return_train_score else n_splits)
    fits = n_repeats * (n_splits - 1 if disjoint_folds else n_splits)
    total_eps = n_candidates * (calls * math.fsum(eps) + fits * fit_epsilon)
    total_delta = n_candidates * (calls * math.fsum(dls) + fits * fit_delta)
    if refit:
        total_eps += fit_epsilon
        total_delta += fit_delta
    return float(total_eps), float(total_delta)
