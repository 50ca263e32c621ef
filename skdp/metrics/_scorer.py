"""DP scorers for scikit-learn model selection and the privacy spend of a CV / grid search.

Composition: sequential over candidates scored on the same rows, parallel over disjoint
folds (McSherry 2009); relations: :ref:`neighbouring-relation`.
"""

from __future__ import annotations

import copy
import functools

import numpy as np
from sklearn.utils.validation import _num_samples

from skdp.base import _shared_constraints
from skdp.exceptions import (
    BudgetExceededError,
    LedgerCopyError,
    PrivacySpendAborted,
    PrivacyUnitError,
)
from skdp.metrics._accuracy import dp_accuracy_score
from skdp.metrics._ranking import (
    dp_average_precision_score,
    dp_roc_auc_score,
)
from skdp.metrics._regression import (
    _check_bounds_y,
    dp_mean_absolute_error,
    dp_mean_squared_error,
    dp_r2_score,
)
from skdp.utils._groups import check_max_rows_per_group
from skdp.utils._random import ScrubSeedsOnPickleMixin
from skdp.utils._rowsum import enforce_meta, is_dask_collection
from skdp.utils._sklearn_compat import validate_params
from skdp.utils.validation import check_privacy_params

__all__ = ["DPScorer", "make_dp_scorer"]

_RANKING = ("decision_function", "predict_proba")


def _neg_mean_squared_error(y_true, y_pred, **kwargs):
    """``-dp_mean_squared_error``: a scorer is greater-is-better (scikit-learn's rule)."""
    return -dp_mean_squared_error(y_true, y_pred, **kwargs)


def _neg_mean_absolute_error(y_true, y_pred, **kwargs):
    """``-dp_mean_absolute_error`` (greater is better)."""
    return -dp_mean_absolute_error(y_true, y_pred, **kwargs)


# name -> (function, default response_method, takes pos_label)
_METRICS = {
    "roc_auc": (dp_roc_auc_score, _RANKING, True),
    "average_precision": (dp_average_precision_score, _RANKING, True),
    "accuracy": (dp_accuracy_score, "predict", False),
    "r2": (dp_r2_score, "predict", False),
    "neg_mean_squared_error": (_neg_mean_squared_error, "predict", False),
    "neg_mean_absolute_error": (_neg_mean_absolute_error, "predict", False),
}
_CLASSIFICATION = frozenset({"roc_auc", "average_precision", "accuracy"})
_BY_FUNCTION = {fn: name for name, (fn, _, _) in _METRICS.items()}
# an error metric given as a function is scored as its negative (greater is better)
_BY_FUNCTION[dp_mean_squared_error] = "neg_mean_squared_error"
_BY_FUNCTION[dp_mean_absolute_error] = "neg_mean_absolute_error"


class DPScorer(ScrubSeedsOnPickleMixin):
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
        Extra keyword arguments for ``metric`` (e.g. ``sensitivity_form``;
        ``max_rows_per_group`` for a patient-level scorer).
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
    def _method(self, estimator):
        """The first of the scorer's response methods that ``estimator`` has."""
        methods = (
            (self.response_method,)
            if isinstance(self.response_method, str)
            else tuple(self.response_method)
        )
        _check_scored_estimator(estimator, self.metric)
        for method in methods:
            if callable(getattr(estimator, method, None)):
                return method
        # TypeError: the estimator is of the wrong kind for this scorer
        raise TypeError(
            f"{type(estimator).__name__} has none of the response methods {methods} "
            "this scorer needs; score a fitted classifier (or pass response_method=)"
        )

    def _response(self, estimator, X, groups=None):
        method = self._method(estimator)
        if is_dask_collection(X):  # scored per partition; the rows stay on the workers
            return self._dask_response(estimator, X, method)
        if groups is not None and _num_samples(X) == 0:
            # a patient-level call on an empty fold: the metric releases noise only, so
            # the estimator (which may refuse zero rows) is not asked to predict
            empty, _, dtype = self._empty_response(estimator, method)
            out, pos_label = self._select(empty, estimator, method)
            return out.astype(dtype, copy=False), pos_label
        return self._select(np.asarray(getattr(estimator, method)(X)), estimator, method)

    @staticmethod
    def _empty_response(estimator, method):
        """``(zero-row output of method, classes, dtype of the selected response)``, from
        the fitted classes alone."""
        classes = getattr(estimator, "classes_", None)
        width = 0 if classes is None else len(classes)
        empty = np.zeros((0, width)) if method == "predict_proba" and width else np.zeros(0)
        dtype = np.asarray(classes).dtype if method == "predict" and width else np.float64
        return empty, classes, dtype

    def _dask_response(self, estimator, X, method):
        """The response as a lazy 1-D Dask array, one block per partition of ``X``."""
        # the positive label and the class checks come from the fitted classes alone
        empty, _, dtype = self._empty_response(estimator, method)
        _, pos_label = self._select(empty, estimator, method)
        scorer = copy.copy(self)
        scorer.ledger = None  # the workers need the class logic, never the ledger
        X = enforce_meta(X, "X")  # a partition unlike its meta: an error naming X
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

    def __call__(self, estimator, X, y_true, sample_weight=None, groups=None, **kwargs):
        """Score ``estimator`` on ``(X, y_true)``, spending ``(epsilon, delta)``.

        ``X`` and ``y_true`` may be Dask collections (:doc:`/dask`): the estimator's
        response is computed partition by partition on the workers and the metric counts
        it there; the release is the same as for the same rows in memory.

        ``groups`` (the patient of each scored row, in memory) makes the call's
        guarantee per patient: the metric keeps at most the scorer's
        ``max_rows_per_group`` rows a patient (:doc:`/patients`).
        """
        if sample_weight is not None:
            raise ValueError("DP scorers do not support sample_weight (it changes sensitivity)")
        if kwargs:
            raise ValueError(f"DP scorers take no extra score parameters, got {sorted(kwargs)}")
        y_score, pos_label = self._response(estimator, X, groups)
        kw = dict(self.metric_kwargs)
        if self.takes_pos_label:
            kw["pos_label"] = pos_label
        if groups is not None:  # only then: a metric without the keyword still works
            kw["groups"] = groups
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
        from skdp.metrics._cv_spend import cv_privacy_spend

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
    metric : {"roc_auc", "average_precision", "accuracy", "r2", \
            "neg_mean_squared_error", "neg_mean_absolute_error"} or callable
        The DP metric, by name or as the function (:func:`dp_roc_auc_score`,
        :func:`dp_average_precision_score`, :func:`dp_accuracy_score`,
        :func:`dp_r2_score`, and :func:`dp_mean_squared_error` /
        :func:`dp_mean_absolute_error`, which are scored as their negatives so that
        greater is better, as in scikit-learn). The regression metrics need
        ``bounds_y=(lo, hi)``, the public target range. Another callable must accept
        ``(y_true, y_score, *, epsilon, delta, random_state, ledger)`` and then needs an
        explicit ``response_method``. A name skdp has no DP version of (``"f1"``,
        ``"log_loss"``, ...) is refused.
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
        Passed on to the metric (e.g. ``sensitivity_form="log"``, ``gamma=3.0``;
        ``bounds_y=(lo, hi)`` for the regression metrics; ``max_rows_per_group=k``, the
        public contribution bound of a patient-level scorer). ``groups`` is not one of
        them: it belongs to each call.

    Returns
    -------
    scorer : DPScorer
        Callable ``scorer(estimator, X, y) -> float``, picklable.

    Notes
    -----
    Privacy of one call: that of the metric (replace-one neighbouring relation on the
    rows scored, their number public; pure ``epsilon``-DP with ``delta=0``, otherwise
    ``(epsilon, delta)``-DP; exact guarantee) -- see :func:`dp_roc_auc_score`.

    Patients (:doc:`/patients`): a scorer made with ``max_rows_per_group=k`` and called
    as ``scorer(estimator, X, y, groups=patients)`` spends its ``(epsilon, delta)`` per
    patient (add, remove or replace one patient with all their rows): the metric keeps
    at most ``k`` rows a patient, at random, and calibrates its noise to ``k`` rows
    (:func:`dp_accuracy_score`, :func:`dp_r2_score`, ...). Its seed material then
    includes the grouping. The ``"roc_auc"`` and ``"average_precision"`` scorers use the
    smooth sensitivity derived for add/remove one patient of at most ``k`` rows
    (:func:`dp_roc_auc_score`, Notes), not the row-level one. scikit-learn's model
    selection does not pass ``groups`` to a scorer: call it yourself, use
    :class:`~skdp.model_selection.DPGridSearchCV` or
    :func:`~skdp.model_selection.dp_cross_validate` with ``groups=``, or see
    :doc:`/patients`.

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
    Score a DP model with a DP scorer, so that the whole run has a privacy total:

    >>> import numpy as np
    >>> from sklearn.model_selection import KFold, cross_val_score
    >>> from skdp.linear_model import DPLogisticRegression
    >>> from skdp.metrics import cv_privacy_spend, make_dp_scorer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(500, 3))  # features declared in [0, 1]
    >>> y = (X @ [1.0, -1.0, 0.5] + rng.normal(0, 0.1, 500) > 0.2).astype(int)
    >>> model = DPLogisticRegression(epsilon=1.0, bounds_X=(0, 1), classes=[0, 1],
    ...                              random_state=0)
    >>> scorer = make_dp_scorer("roc_auc", epsilon=1.0, random_state=0)
    >>> cv = KFold(5, shuffle=True, random_state=0)
    >>> scores = cross_val_score(model, X, y, cv=cv, scoring=scorer)
    >>> cv_privacy_spend(epsilon=1.0, n_splits=5, fit_epsilon=1.0, refit=False)
    (9.0, 0.0)

    A regression scorer needs the public range of the target:

    >>> r2 = make_dp_scorer("r2", epsilon=1.0, bounds_y=(25, 346), random_state=0)
    """
    if isinstance(metric, str):
        if metric not in _METRICS:
            raise ValueError(
                f"skdp has no differentially private version of the metric {metric!r}: "
                f"metric must be one of {sorted(_METRICS)} or a callable with the DP "
                "metrics' keyword interface (a scikit-learn metric computed on private "
                "rows would release them without noise)"
            )
        fn, default_method, takes_pos = _METRICS[metric]
    elif callable(metric):
        fn = metric
        name = _BY_FUNCTION.get(metric)
        if name is not None:
            fn, default_method, takes_pos = _METRICS[name]
        else:
            if response_method is None:
                raise ValueError("response_method is required for a custom metric")
            default_method, takes_pos = None, pos_label is not None
    else:
        raise ValueError("metric must be a string or a callable")
    epsilon, delta = check_privacy_params(epsilon, delta)
    if _BY_FUNCTION.get(fn) not in (None, *_CLASSIFICATION):
        if "bounds_y" not in metric_kwargs:
            raise ValueError(
                "a DP regression scorer needs bounds_y=(lo, hi): the public range of the "
                "target, declared before seeing the data (its width sets the noise)"
            )
        metric_kwargs["bounds_y"] = _check_bounds_y(metric_kwargs["bounds_y"])
    _check_patient_kwargs(fn, metric_kwargs)
    if metric_kwargs.get("return_interval", False):
        raise ValueError(
            "return_interval=True cannot go into a scorer: a scorer returns one number "
            "(call dp_roc_auc_score(..., return_interval=True) yourself for the interval)"
        )
    if response_method is None:
        response_method = default_method
    if isinstance(response_method, str):
        methods = (response_method,)
    elif isinstance(response_method, list | tuple):
        methods = tuple(response_method)
    else:
        raise TypeError(
            f"response_method must be a string or a tuple of strings, got "
            f"{type(response_method).__name__}"
        )
    allowed = {"predict", "predict_proba", "decision_function"}
    if not all(isinstance(m, str) for m in methods):
        raise TypeError("response_method must be a string or a tuple of strings")
    if not methods or not set(methods) <= allowed:
        raise ValueError(f"response_method must be among {sorted(allowed)}")
    if ledger is not None and not callable(getattr(ledger, "spend", None)):
        raise TypeError(
            f"ledger must be a PrivacyLedger (an object with a spend method) or None, got "
            f"{type(ledger).__name__}"
        )
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


def _check_patient_kwargs(metric, metric_kwargs):
    """``groups`` belongs to each call; ``max_rows_per_group`` is checked here (every
    built-in metric has a patient-level version)."""
    if "groups" in metric_kwargs:
        raise ValueError(
            "groups is one label per scored row: pass it to each scorer call "
            "(scorer(estimator, X, y, groups=...)), not to make_dp_scorer"
        )
    if metric_kwargs.get("max_rows_per_group", 0) is None:  # None: the default
        del metric_kwargs["max_rows_per_group"]
    if "max_rows_per_group" in metric_kwargs and _BY_FUNCTION.get(metric) is not None:
        # a custom metric checks its own
        value = check_max_rows_per_group(metric_kwargs["max_rows_per_group"])
        metric_kwargs["max_rows_per_group"] = value


def _check_scored_estimator(estimator, metric):
    """``TypeError`` for an object a DP scorer cannot score (a class, a regressor given
    to a classification metric), before any method of it is called."""
    from sklearn.base import is_classifier, is_regressor

    if isinstance(estimator, type):
        raise TypeError(
            f"a DP scorer scores a fitted estimator instance, got the class {estimator.__name__}"
        )
    try:  # scikit-learn's tags: an object that is no estimator has none
        regressor, classifier = is_regressor(estimator), is_classifier(estimator)
    except (AttributeError, TypeError):
        regressor = classifier = False
    name = _BY_FUNCTION.get(metric)
    if name in _CLASSIFICATION and regressor:
        raise TypeError(
            f"{name} is a classification metric; {type(estimator).__name__} is a regressor "
            "(score regressors with 'r2', 'neg_mean_squared_error' or "
            "'neg_mean_absolute_error' and bounds_y=)"
        )
    if name is not None and name not in _CLASSIFICATION and classifier:
        raise TypeError(
            f"{name} is a regression metric; {type(estimator).__name__} is a classifier"
        )


class _AbortOnRefusal:
    """The ledger as a :class:`DPScorer` hands it to its metric: a refusal aborts the run.

    scikit-learn's model selection turns every :class:`Exception` a scorer raises into
    ``error_score`` (NaN by default) and carries on, so a refused spend would leave a
    search that selects among the scores released before the budget ran out. The
    ledger's :class:`~skdp.exceptions.BudgetExceededError`,
    :class:`~skdp.exceptions.LedgerCopyError` or
    :class:`~skdp.exceptions.PrivacyUnitError` is therefore re-raised as
    :class:`~skdp.exceptions.PrivacySpendAborted` (a :class:`BaseException`).
    """

    __slots__ = ("ledger",)

    def __init__(self, ledger):
        self.ledger = ledger

    def spend(self, epsilon, delta=0.0, *, label=None, **unit):
        try:  # unit: {"unit": "group"} for a patient-level call, else nothing
            self.ledger.spend(epsilon, delta, label=label, **unit)
        except (BudgetExceededError, LedgerCopyError, PrivacyUnitError) as exc:
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
