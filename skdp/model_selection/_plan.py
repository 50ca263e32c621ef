"""The cross-validation plan shared by :func:`dp_cross_validate` and :class:`DPGridSearchCV`.

Candidate checks, the scorers' privacy spend, the fold loop and the single ledger charge.
"""

from __future__ import annotations

import copy
import inspect
import math
import warnings
from collections.abc import Mapping

import numpy as np
from sklearn.base import clone
from sklearn.utils import check_consistent_length
from sklearn.utils.parallel import Parallel, delayed

from skdp.accounting._ledger import _replace_one_from_add_remove
from skdp.exceptions import PrivacyLeakWarning
from skdp.metrics import DPScorer, cv_privacy_spend
from skdp.model_selection._folds import assign_group_folds
from skdp.utils._meta_privacy import check_pipeline_privacy
from skdp.utils._random import is_seed_object, seed_objects

_RTOL = 1e-9
_NOT_DP = (
    "scoring must be a DP scorer made by skdp.metrics.make_dp_scorer, or a dict of "
    "them (name -> scorer); got {what}. scikit-learn scorers release exact scores of the "
    "private rows. skdp's DP scorers: roc_auc, average_precision, accuracy, and for "
    "regressors r2, neg_mean_squared_error, neg_mean_absolute_error (with bounds_y=, the "
    "public target range), e.g. make_dp_scorer('r2', epsilon=1.0, bounds_y=(lo, hi))."
)


# ----------------------------------------------------------------------------- checks
def check_no_survival_estimator(estimator, where):
    """``TypeError`` for a survival estimator (or a pipeline ending in one): skdp has no
    DP scorer of a survival model yet, and a search needs one."""
    steps = getattr(estimator, "steps", None)
    final = steps[-1][1] if steps else estimator
    if type(final).__module__.startswith("skdp.survival"):
        raise TypeError(
            f"{where}: {type(final).__name__} cannot be selected by a DP search yet: its "
            "score is Harrell's concordance, which compares every pair of patients, and "
            "skdp has no DP concordance scorer (one patient moves up to n pair counts, so "
            "its sensitivity needs a bounded, smoothed version not implemented here). "
            "Choose its parameters from public knowledge, or compare fits with a "
            "held-out non-private evaluation you are allowed to run."
        )


def _check_scoring(scoring, ledger):
    """``({name: ledger-free DPScorer}, multimetric)``; refuses anything not DP."""
    if ledger is not None and not callable(getattr(ledger, "spend", None)):
        raise TypeError(
            f"ledger must be a skdp.accounting.PrivacyLedger or None, got {type(ledger).__name__}"
        )
    if isinstance(scoring, DPScorer):
        scorers, multimetric = {"score": scoring}, False
    elif isinstance(scoring, Mapping) and scoring:
        bad = [k for k, v in scoring.items() if not isinstance(v, DPScorer)]
        if bad or not all(isinstance(k, str) for k in scoring):
            raise TypeError(_NOT_DP.format(what=f"a dict with non-DP entries {bad!r}"))
        scorers, multimetric = dict(scoring), True
    else:
        raise TypeError(_NOT_DP.format(what=repr(scoring)))
    for name, scorer in scorers.items():
        if scorer.ledger is not None and scorer.ledger is not ledger:
            raise ValueError(
                f"scorer {name!r} holds a PrivacyLedger of its own. The search charges "
                "its whole total once, before it runs, to the ledger passed as ledger=; "
                "make the scorer without ledger= and pass that ledger to the search "
                "(a scorer that also charged each call would count the scores twice)."
            )
    return {name: _without_ledger(s) for name, s in scorers.items()}, multimetric


def _without_ledger(scorer):
    """A shallow copy that charges nothing: the search charges its total once."""
    out = copy.copy(scorer)
    out.ledger = None
    return out


def _check_bool(value, name):
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__}")
    return bool(value)


def _num_samples(X):
    if hasattr(X, "shape") and len(getattr(X, "shape", ())) > 0:
        return int(X.shape[0])
    if hasattr(X, "__len__"):
        return len(X)
    raise ValueError("X must be an array-like of samples (got a scalar or None)")


def _take(a, mask):
    """Rows of ``a`` where ``mask`` is True (numpy, pandas, scipy.sparse or a list)."""
    idx = np.flatnonzero(mask)
    if hasattr(a, "iloc"):
        return a.iloc[idx]
    if hasattr(a, "tocsr"):
        return a.tocsr()[idx]
    return np.asarray(a)[idx] if not isinstance(a, np.ndarray) else a[idx]


def _plan_candidate(estimator, params, allow_nonprivate, where, budget=None):
    """A clone with ``params`` and its declared fit budget ``(epsilon, delta)``.

    ``budget``: parameters set after ``params`` (the budget a search under one total
    gives the candidate's DP steps, see :mod:`skdp.model_selection._budget`).
    """
    est = clone(estimator).set_params(**params)
    if budget:
        est.set_params(**budget)
    report = check_pipeline_privacy(est)
    leaks = report.learns_without_guarantee
    if leaks:
        what = "; ".join(f"step {s.name!r} ({s.estimator}): {s.reason}" for s in leaks)
        cand = f" (candidate {params!r})" if params else ""
        if not allow_nonprivate:
            raise ValueError(
                f"{where}: the estimator{cand} learns from the rows without a privacy "
                f"guarantee: {what}. Use skdp DP estimators and private or "
                "public-metadata transformers, or pass allow_nonprivate=True to run "
                "anyway with epsilon_spent_=inf."
            )
        warnings.warn(
            f"{where}(allow_nonprivate=True): the estimator{cand} learns from the rows "
            f"without a privacy guarantee ({what}); epsilon_spent_ is inf.",
            PrivacyLeakWarning,
            stacklevel=4,
        )
    return est, report.epsilon, report.delta


def _check_fitted_spend(model, declared, where):
    """The fit's actual spend, checked against the budget charged before the run."""
    report = check_pipeline_privacy(model)
    eps, delta = report.epsilon, report.delta
    d_eps, d_delta = declared
    if eps > d_eps * (1 + _RTOL) + 1e-15 or delta > d_delta * (1 + _RTOL) + 1e-300:
        raise RuntimeError(
            f"{where}: a fit of {type(model).__name__} spent (epsilon={eps:g}, "
            f"delta={delta:g}), more than its declared epsilon/delta parameters "
            f"(epsilon={d_eps:g}, delta={d_delta:g}) that were charged before the run. "
            "Declare the estimator's full budget in its epsilon/delta parameters."
        )
    return report.privacy_guarantee or "exact"


# ----------------------------------------------------------------------------- engine
class _Plan:
    """Everything decided before any row is read: candidates, budgets, the total."""

    def __init__(
        self, estimator, candidates, scoring, folds, refit, ledger, allow, where, budgets=None
    ):
        check_no_survival_estimator(estimator, where)
        self.scorers, self.multimetric = _check_scoring(scoring, ledger)
        self.where = where
        budgets = budgets if budgets is not None else [None] * len(candidates)
        planned = [
            _plan_candidate(estimator, p, allow, where, b)
            for p, b in zip(candidates, budgets, strict=True)
        ]
        self.params = list(candidates)
        self.estimators = [est for est, _, _ in planned]
        self.fit_budgets = [(e, d) for _, e, d in planned]
        self.folds = folds  # a FoldSpec (skdp.model_selection._folds.check_cv)
        n_splits = self.n_splits = folds.n_splits
        self.refit = refit
        eps_s = [s.epsilon for s in self.scorers.values()]
        dl_s = [s.delta for s in self.scorers.values()]
        self.epsilon, self.delta = cv_privacy_spend(
            epsilon=eps_s,
            delta=dl_s,
            n_splits=n_splits,
            n_candidates=len(candidates),
            fit_epsilon=[e for e, _ in self.fit_budgets],
            fit_delta=[d for _, d in self.fit_budgets],
            fit_relation="add_remove",
            refit=bool(refit),
        )
        self.breakdown = self._breakdown(eps_s, dl_s)

    def _breakdown(self, eps_s, dl_s):
        n_cand, k = len(self.params), self.n_splits
        fits = [_replace_one_from_add_remove(e, d) for e, d in self.fit_budgets]
        cv_eps = math.fsum(e * (k - 1) for e, _ in fits)
        cv_delta = math.fsum(d * (k - 1) for _, d in fits)
        return {
            "scorer_calls": (n_cand * math.fsum(eps_s), min(1.0, n_cand * math.fsum(dl_s))),
            "cv_fits": (cv_eps, min(1.0, cv_delta)),
            "refit": (
                (max(e for e, _ in fits), max(d for _, d in fits)) if self.refit else (0.0, 0.0)
            ),
        }

    def charge(self, ledger, label, unit="row"):
        if ledger is not None:
            ledger.spend(self.epsilon, self.delta, label=label, unit=unit)

    def run(self, X, y, random_state, keep_models=False, n_jobs=None, groups=None, folds=None):
        """Fit and score every candidate on every fold; scores are DP releases.

        The candidate x fold tasks run through :class:`joblib.Parallel` (``n_jobs``, or
        the active ``joblib.parallel_backend``, e.g. Dask's). Each task is a pure
        function of its inputs: the fits' and scorers' noise comes from their own
        ``random_state`` and the data, so the results equal a sequential run's. The
        total was charged before, in this process; the scorers hold no ledger. A pickle
        forgets seed objects (:class:`~skdp.utils._random.ScrubSeedsOnPickleMixin`), so
        a ``Generator``/``RandomState``/``SeedSequence`` seed travels to each task
        beside its estimator and scorers, and a worker process fits with the seed a
        sequential run uses.
        """
        n = _num_samples(X)
        if folds is None and groups is None:
            folds = self.folds.assign(n, random_state)
        elif folds is None:  # whole patients per fold, by a keyed hash of their labels
            folds = group_folds(groups, self.n_splits, random_state)
        scores = {name: np.empty((len(self.params), self.n_splits)) for name in self.scorers}
        tasks = [(c, j) for c in range(len(self.estimators)) for j in range(self.n_splits)]
        seeds = [seed_objects(est) for est in self.estimators]
        scorer_seeds = {
            name: s.random_state
            for name, s in self.scorers.items()
            if is_seed_object(getattr(s, "random_state", None))
        }
        results = Parallel(n_jobs=n_jobs)(
            delayed(_fit_and_score)(
                self.estimators[c],
                X,
                y,
                folds == j,
                self.scorers,
                self.fit_budgets[c],
                self.where,
                seeds=(seeds[c], scorer_seeds),
                groups=groups,
            )
            for c, j in tasks
        )
        guarantees, models = [], []
        for (c, j), (model, guarantee, values) in zip(tasks, results, strict=True):
            guarantees.append(guarantee)
            for name, value in values.items():
                scores[name][c, j] = value
            if keep_models:
                models.append(model)
        return scores, guarantees, models


def _fit_and_score(template, X, y, test, scorers, budget, where, seeds=({}, {}), groups=None):
    """One candidate on one fold: ``(model, its guarantee, {scorer: noisy score})``.

    ``seeds``: the seed objects of the template and of the scorers (a pickled copy in a
    worker process holds ``None`` in their place). ``groups``: the patient of each row
    (the fit and every scorer call then protect patients).
    """
    # copies, as clone makes: every task starts from the seed states of the templates,
    # in this process and in a worker alike
    est_seeds, scorer_seeds = copy.deepcopy(seeds)
    if scorer_seeds:
        scorers = dict(scorers)
        for name, rs in scorer_seeds.items():
            scorers[name] = copy.copy(scorers[name])
            scorers[name].random_state = rs
    fit_kw, score_kw = {}, {}
    if groups is not None:
        fit_kw, score_kw = {"groups": _take(groups, ~test)}, {"groups": _take(groups, test)}
    model = clone(template).set_params(**est_seeds)
    model.fit(_take(X, ~test), _take(y, ~test), **fit_kw)
    guarantee = _check_fitted_spend(model, budget, where)
    X_test, y_test = _take(X, test), _take(y, test)
    values = {name: scorer(model, X_test, y_test, **score_kw) for name, scorer in scorers.items()}
    return model, guarantee, values


def _check_common(estimator, X, y, allow_nonprivate):
    if y is None:
        raise ValueError("y is required: the DP scorers compare predictions with labels")
    check_consistent_length(X, y)
    _check_bool(allow_nonprivate, "allow_nonprivate")
    if not hasattr(estimator, "fit"):
        raise TypeError("estimator must be an estimator with a fit method")


def check_group_support(estimators, scorers, where):
    """Refuse ``groups=`` unless every candidate takes ``groups`` (or routes it, as
    ``DPPipeline`` does) and every scorer was made with ``max_rows_per_group``: a fit or
    a score per row would make the total protect rows, not patients."""
    for est in estimators:
        if hasattr(est, "_route_groups"):  # a DPPipeline: its own check, before any fit
            est._route_groups({"groups": np.zeros(0)})
            continue
        if "groups" not in inspect.signature(est.fit).parameters:
            raise ValueError(
                f"{where}: groups= but {type(est).__name__} does not support patient-level "
                "privacy yet, so the total would protect rows, not patients"
            )
    for name, scorer in scorers.items():
        if getattr(scorer, "metric_kwargs", {}).get("max_rows_per_group") is None:
            raise ValueError(
                f"{where}: groups= but the scorer {name!r} was made without "
                "max_rows_per_group; make it with make_dp_scorer(..., max_rows_per_group=k)"
            )


def group_folds(groups, n_splits, random_state):
    """The patient folds (:func:`assign_group_folds`).

    A fold without patients is allowed: its scorer calls see no rows and release noise
    only (the patient-level scorers never refuse an empty input), so whether the search
    runs does not depend on which patients are present. The one refusal left, before
    anything is charged or fitted, is every patient falling in one fold (no training
    rows anywhere): with ``G`` patients its probability is ``n_splits ** (1 - G)``
    over the key (below ``1e-12`` for ``G >= 19`` at five folds): a failure term of the
    search's guarantee that adds to ``delta`` and is not in ``delta_spent_``, which
    cannot depend on the private ``G`` (:doc:`/patients`).
    """
    folds = assign_group_folds(groups, n_splits, random_state)
    if folds.shape[0] == 0 or np.all(folds == folds[0]):
        raise ValueError(
            f"groups=: the {n_splits} patient folds (a keyed hash of the labels) put every "
            "patient in one fold, so no fold has training rows; use more patients"
        )
    return folds
