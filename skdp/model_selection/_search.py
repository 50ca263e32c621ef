"""Cross-validation and grid search with DP scorers, data-independent folds and one total."""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Mapping
from numbers import Integral

import numpy as np
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils import check_consistent_length, get_tags
from sklearn.utils.metaestimators import available_if

from skdp.accounting._ledger import _replace_one_from_add_remove
from skdp.exceptions import PrivacyLeakWarning
from skdp.metrics import DPScorer, cv_privacy_spend
from skdp.model_selection._folds import _check_n_splits, assign_folds
from skdp.utils._meta_privacy import check_pipeline_privacy, weakest_guarantee
from skdp.utils._sklearn_compat import HasMethods, Interval, check_is_fitted

__all__ = ["DPGridSearchCV", "dp_cross_validate"]

_RTOL = 1e-9
_NOT_DP = (
    "scoring must be a DP scorer made by skdp.metrics.make_dp_scorer, or a dict of "
    "them (name -> scorer); got {what}. scikit-learn scorers release exact scores of the "
    "private rows. skdp's DP scorers are for binary classification (roc_auc, "
    "average_precision) and accuracy; there is no DP scorer for regression metrics yet, "
    "so a regressor cannot be tuned this way."
)


# ----------------------------------------------------------------------------- checks
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


def _plan_candidate(estimator, params, allow_nonprivate, where):
    """A clone with ``params`` and its declared fit budget ``(epsilon, delta)``."""
    est = clone(estimator).set_params(**params)
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

    def __init__(self, estimator, candidates, scoring, n_splits, refit, ledger, allow, where):
        self.scorers, self.multimetric = _check_scoring(scoring, ledger)
        self.where = where
        planned = [_plan_candidate(estimator, p, allow, where) for p in candidates]
        self.params = list(candidates)
        self.estimators = [est for est, _, _ in planned]
        self.fit_budgets = [(e, d) for _, e, d in planned]
        self.n_splits = n_splits
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

    def charge(self, ledger, label):
        if ledger is not None:
            ledger.spend(self.epsilon, self.delta, label=label)

    def run(self, X, y, random_state, keep_models=False):
        """Fit and score every candidate on every fold; scores are DP releases."""
        n = _num_samples(X)
        folds = assign_folds(n, self.n_splits, random_state)
        scores = {name: np.empty((len(self.params), self.n_splits)) for name in self.scorers}
        guarantees, models = [], []
        for c, template in enumerate(self.estimators):
            for j in range(self.n_splits):
                test = folds == j
                model = clone(template).fit(_take(X, ~test), _take(y, ~test))
                guarantees.append(_check_fitted_spend(model, self.fit_budgets[c], self.where))
                X_test, y_test = _take(X, test), _take(y, test)
                for name, scorer in self.scorers.items():
                    scores[name][c, j] = scorer(model, X_test, y_test)
                if keep_models:
                    models.append(model)
        return scores, guarantees, models


def _check_common(estimator, n_splits, X, y, allow_nonprivate):
    if y is None:
        raise ValueError("y is required: the DP scorers compare predictions with labels")
    check_consistent_length(X, y)
    if isinstance(n_splits, bool) or not isinstance(n_splits, Integral | np.integer):
        raise TypeError(f"n_splits must be an int, got {type(n_splits).__name__}")
    _check_bool(allow_nonprivate, "allow_nonprivate")
    if not hasattr(estimator, "fit"):
        raise TypeError("estimator must be an estimator with a fit method")


# ----------------------------------------------------------------------------- API
def dp_cross_validate(
    estimator,
    X,
    y,
    *,
    scoring,
    n_splits=5,
    ledger=None,
    random_state=None,
    return_estimator=False,
    allow_nonprivate=False,
):
    """Cross-validate a DP estimator with DP scorers; one total, charged once.

    Every row is in exactly one test fold and in ``n_splits - 1`` training folds; the
    folds are a uniformly random balanced partition of the row positions drawn from a
    fresh key, independent of the data. The total privacy spend of the run (every fit
    and every scorer call, under replace one row) is computed with
    :func:`skdp.metrics.cv_privacy_spend` before any row is read, charged once to
    ``ledger``, and returned.

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
        Anything else raises ``TypeError`` (there is no DP scorer for regression).
    n_splits : int, default=5
        Number of folds (>= 2).
    ledger : PrivacyLedger, optional
        Charged once, before any fit, with the total (label ``"dp_cross_validate
        (replace-one)"``). A refusal raises :class:`~skdp.exceptions.BudgetExceededError`
        (or ``LedgerCopyError`` for a copy) and nothing runs. The entry is stated under
        replace one row: keep the ledger's other entries under the same relation
        (``spend_fitted(est, relation="replace")``).
    random_state : None, int, SeedSequence or Generator, default=None
        Key of the folds only (see Notes). ``None``: fresh OS entropy. The estimator's
        and the scorers' own ``random_state`` decide their noise.
    return_estimator : bool, default=False
        Also return the fold models (they are counted in the total).
    allow_nonprivate : bool, default=False
        Run an estimator that learns without a guarantee anyway, with a
        :class:`~skdp.exceptions.PrivacyLeakWarning`; the total is then ``inf`` (a
        ledger with a finite budget refuses it).

    Returns
    -------
    result : dict
        ``"test_score"`` (one scorer) or ``"test_<name>"`` (a dict of scorers): the noisy
        score of every fold, shape ``(n_splits,)``; ``"epsilon_spent"``,
        ``"delta_spent"``: the total under replace one row; ``"privacy_guarantee"``;
        ``"n_splits"``; ``"estimator"``: the fold models, with ``return_estimator``. No
        timings (a fit's duration can depend on the data).

    Notes
    -----
    **Relation.** Replace one row, ``n`` public: the relation of the DP scorers.
    Estimators report add/remove one row; a replacement is a removal and an addition,
    so a fit with ``(e, d)`` costs ``(2 e, (1 + e^e) d)`` here (group privacy).

    **Accounting.** The folds do not depend on the data: the partition is a function of
    ``n``, ``n_splits`` and the key, so on two neighbouring data sets every row keeps
    its fold and the replaced row's replacement takes its place. The replaced row is
    then in one test fold (one call of each scorer, ``S = sum(epsilon)`` of the
    scorers; the other folds' calls see identical rows: parallel composition) and in
    ``n_splits - 1`` training sets (``2 e`` each)::

        epsilon_spent = S + (n_splits - 1) * 2 e

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
    ``random_state`` is given), cut into folds whose sizes depend on ``n`` alone.
    Assigning folds by a keyed hash of each row's values would keep the other rows'
    folds when a row is *added*, but under replace-one it lets the replacement land in
    another fold, changing two test folds and their sizes, which the DP scorers (``N``
    public) do not allow. A given ``random_state`` is hashed (as in
    :func:`skdp.utils._random.fit_streams`) with ``n`` and ``n_splits`` but not with the
    data, and the key is never stored.

    **Exact.** The total is a proven bound when the estimator's guarantee is exact
    (``privacy_guarantee`` is the weakest over the fits; the DP scorers are exact for
    the mathematical mechanism).

    References
    ----------
    .. [1] F. McSherry. "Privacy integrated queries". SIGMOD 2009 (parallel composition).
    .. [2] C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy",
       2014 (Thm 3.16: composition; Thm 2.2: group privacy).

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
    ...     scoring=make_dp_scorer("accuracy", epsilon=0.5), n_splits=3, ledger=ledger,
    ...     random_state=0)
    >>> res["epsilon_spent"], ledger.epsilon_spent  # 0.5 + 2 * (2 * 1.0)
    (4.5, 4.5)
    >>> bool(np.all(res["test_score"] > 0.9))
    True
    """
    _check_common(estimator, n_splits, X, y, allow_nonprivate)
    return_estimator = _check_bool(return_estimator, "return_estimator")
    plan = _Plan(
        estimator,
        [{}],
        scoring,
        n_splits,
        False,
        ledger,
        allow_nonprivate,
        "dp_cross_validate",
    )
    _check_n_splits(n_splits, _num_samples(X))
    plan.charge(ledger, "dp_cross_validate (replace-one)")
    scores, guarantees, models = plan.run(X, y, random_state, keep_models=return_estimator)
    out = {}
    for name, values in scores.items():
        key = "test_score" if not plan.multimetric else f"test_{name}"
        out[key] = values[0].copy()
    out["epsilon_spent"] = plan.epsilon
    out["delta_spent"] = plan.delta
    out["privacy_guarantee"] = "none" if math.isinf(plan.epsilon) else weakest_guarantee(guarantees)
    out["n_splits"] = int(n_splits)
    if return_estimator:
        out["estimator"] = models
    return out


def _search_estimator_has(attr):
    def check(self):
        est = self.best_estimator_ if hasattr(self, "best_estimator_") else self.estimator
        getattr(est, attr)
        return True

    return check


class DPGridSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Grid search over a DP estimator with DP scorers and one stated total.

    Every candidate of ``param_grid`` is cross-validated on the same data-independent
    folds (:func:`dp_cross_validate`), the candidate with the best mean noisy score is
    selected, and (``refit=True``) refitted on all rows. ``epsilon_spent_`` /
    ``delta_spent_`` is the total of the whole search under replace one row -- every
    fold fit of every candidate, every scorer call, and the refit -- computed with
    :func:`skdp.metrics.cv_privacy_spend` before any row is read and charged once to
    ``ledger``.

    Parameters
    ----------
    estimator : estimator
        A skdp DP estimator or a pipeline of DP steps; each candidate's fit budget is
        read from its declared ``epsilon``/``delta`` (summed over pipeline steps), so a
        grid over ``epsilon`` is counted per candidate.
    param_grid : dict or list of dicts
        As in :class:`~sklearn.model_selection.GridSearchCV`.
    scoring : DPScorer or dict of str -> DPScorer
        Scorers made by :func:`skdp.metrics.make_dp_scorer` (without ``ledger=``, or
        holding this search's ``ledger``); anything else raises ``TypeError``.
    n_splits : int, default=5
        Number of folds.
    refit : bool or str, default=True
        Refit the best candidate on all rows (``best_estimator_``), charged in the
        total at the largest candidate fit budget. With several scorers, the name of the
        scorer that selects. ``False``: no selection, no refit, only ``cv_results_``.
    ledger : PrivacyLedger, optional
        Charged once, before any fit, with ``epsilon_spent_``/``delta_spent_`` (label
        ``"DPGridSearchCV (replace-one)"``); a refusal raises
        :class:`~skdp.exceptions.BudgetExceededError` and nothing runs. The entry is
        stated under replace one row: keep the ledger's other entries under the same
        relation (``spend_fitted(est, relation="replace")``). Note that
        :func:`sklearn.base.clone` copies the ledger, and a copy refuses to spend.
    random_state : None, int, SeedSequence or Generator, default=None
        Key of the folds only (fresh OS entropy if ``None``; see
        :func:`dp_cross_validate`).
    allow_nonprivate : bool, default=False
        Run an estimator that learns without a guarantee anyway, with a
        :class:`~skdp.exceptions.PrivacyLeakWarning`; the total is then ``inf``.

    Attributes
    ----------
    cv_results_ : dict of numpy arrays
        ``params``, ``param_<name>``, ``split<j>_test_<score>``, ``mean_test_<score>``,
        ``std_test_<score>``, ``rank_test_<score>`` (``<score>`` is ``score`` for one
        scorer). Noisy scores only: every one is a DP release counted in the total.
        No timings.
    best_index_, best_params_, best_score_ : int, dict, float
        The selected candidate and its mean noisy score (when ``refit`` is set).
    best_estimator_ : estimator
        The selected candidate refitted on all rows (``refit=True``). Its own
        ``epsilon_spent_`` is that one fit under add/remove; the search's total counts
        it (as ``2 epsilon`` under replace-one).
    epsilon_spent_, delta_spent_ : float
        The total of the search under replace one row (see Notes), already charged to
        ``ledger``. Do not charge the search again with
        :meth:`~skdp.accounting.PrivacyLedger.spend_fitted` (its
        ``relation="replace"`` would convert this replace-one total a second time).
    privacy_breakdown_ : dict
        ``{"scorer_calls": (eps, delta), "cv_fits": ..., "refit": ...}``, replace-one;
        the parts of the total (which is composed by
        :func:`~skdp.metrics.cv_privacy_spend`).
    privacy_guarantee_ : {"exact", "approximate", "none"}
        The weakest guarantee over the fits (scorers are exact).
    privacy_relation_ : str
        ``"replace_one"``.
    scorer_ : DPScorer or dict
        The scorers as given.
    multimetric_ : bool
    n_splits_ : int
    classes_, n_features_in_, feature_names_in_
        Of ``best_estimator_``.

    See Also
    --------
    dp_cross_validate : One candidate.
    skdp.metrics.cv_privacy_spend : The same total for a planned run.

    Notes
    -----
    **Relation.** Replace one row, ``n`` public (that of the DP scorers); fits, which
    skdp states under add/remove one row, are converted by group privacy:
    ``(e, d) -> (2 e, (1 + e^e) d)``.

    **Accounting.** The folds are a random balanced partition of the row positions,
    independent of the data (see :func:`dp_cross_validate`), so for each candidate the
    replaced row is in one test fold and ``n_splits - 1`` training sets; candidates and
    the refit share the rows and compose sequentially. With scorer epsilons summing to
    ``S``, candidate fit budgets ``e_c`` and ``k = n_splits``::

        epsilon_spent_ = sum_c [S + (k - 1) * 2 e_c] + max_c 2 e_c   (refit)

    and the same for delta, which is what :func:`~skdp.metrics.cv_privacy_spend`
    returns for the run (so the ledger entry, ``epsilon_spent_`` and
    ``cv_privacy_spend`` agree). The selection, ``best_params_``, ``best_score_`` and
    ``cv_results_`` are post-processing of the noisy scores. The refit is charged at the
    largest candidate budget because which candidate is refitted depends on the data.

    **Ledger.** Charged once in the calling process before any fit; the scorers are
    called without a ledger, so no score is counted twice. A refused spend raises before
    anything runs; errors of fits and scorers propagate (no ``error_score``): a NaN
    score would hide them, and a selection among the remaining scores would still leak.

    **Private selection.** Releasing every candidate's scores costs the sum over
    candidates. Liu and Talwar (2019) show that if one randomly chosen candidate's full
    evaluation (its fits and DP scores) is ``eps``-DP, repeating it a random,
    geometrically distributed number of times and releasing only the best candidate
    and its score is ``3 eps``-DP whatever the grid size (``2 eps`` with a score
    threshold); Papernot and Steinke (2022) extend this to Rényi DP with other
    repetition distributions (truncated negative binomial, Poisson). In that mode
    ``cv_results_`` and any timings must be withheld: only the winner is released. It is
    **not implemented** here: ``DPGridSearchCV`` releases every candidate's scores and
    pays the full sequential sum, which is the smaller total for grids of about three
    candidates or fewer.

    **Exact.** ``privacy_guarantee_`` is ``"exact"`` when every fit's is (the DP
    scorers are exact for the mathematical mechanism).

    References
    ----------
    .. [1] J. Liu, K. Talwar. "Private selection from private candidates". STOC 2019.
    .. [2] N. Papernot, T. Steinke. "Hyperparameter tuning with Renyi differential
       privacy". ICLR 2022.
    .. [3] F. McSherry. "Privacy integrated queries". SIGMOD 2009.
    .. [4] C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy",
       2014 (Thm 3.16: composition; Thm 2.2: group privacy).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.accounting import PrivacyLedger
    >>> from skdp.ilp import DPILPClassifier
    >>> from skdp.metrics import cv_privacy_spend, make_dp_scorer
    >>> from skdp.model_selection import DPGridSearchCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 2, size=(3000, 4))
    >>> y = X[:, 0] & X[:, 1]
    >>> ledger = PrivacyLedger(epsilon_budget=20.0)
    >>> search = DPGridSearchCV(
    ...     DPILPClassifier(max_clause_length=2, random_state=0),
    ...     {"epsilon": [0.5, 1.0]},
    ...     scoring=make_dp_scorer("accuracy", epsilon=0.25),
    ...     n_splits=3, ledger=ledger, random_state=0,
    ... ).fit(X, y)
    >>> search.epsilon_spent_  # 2 * 0.25 + 2 * 2 * (0.5 + 1.0) + 2 * 1.0
    8.5
    >>> cv_privacy_spend(epsilon=0.25, n_splits=3, n_candidates=2, fit_epsilon=[0.5, 1.0])
    (8.5, 0.0)
    >>> ledger.epsilon_spent, len(ledger)
    (8.5, 1)
    >>> search.best_estimator_.clauses_
    [('x0', 'x1')]
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"])],
        "param_grid": [dict, list],
        "scoring": "no_validation",  # checked in fit, with a message about DP scorers
        "n_splits": [Interval(Integral, 2, None, closed="left")],
        "refit": ["boolean", str],
        "ledger": "no_validation",
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
        "allow_nonprivate": ["boolean"],
    }

    def __init__(
        self,
        estimator,
        param_grid,
        *,
        scoring,
        n_splits=5,
        refit=True,
        ledger=None,
        random_state=None,
        allow_nonprivate=False,
    ):
        self.estimator = estimator
        self.param_grid = param_grid
        self.scoring = scoring
        self.n_splits = n_splits
        self.refit = refit
        self.ledger = ledger
        self.random_state = random_state
        self.allow_nonprivate = allow_nonprivate

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        sub = get_tags(self.estimator)
        tags.estimator_type = sub.estimator_type
        tags.classifier_tags = copy.deepcopy(sub.classifier_tags)
        tags.regressor_tags = copy.deepcopy(sub.regressor_tags)
        tags.input_tags.pairwise = sub.input_tags.pairwise
        tags.input_tags.sparse = sub.input_tags.sparse
        tags.array_api_support = False
        return tags

    def _refit_metric(self, scorers, multimetric):
        refit = self.refit
        if isinstance(refit, bool | np.bool_):
            if refit and multimetric:
                raise ValueError(
                    "refit must be the name of one of the scorers when scoring is a dict "
                    f"(one of {sorted(scorers)}), or False"
                )
            return ("score" if not multimetric else None) if refit else None
        if isinstance(refit, str) and multimetric and refit in scorers:
            return refit
        raise ValueError(
            "refit must be True, False, or (with a dict of scorers) one of their names"
        )

    def fit(self, X, y):
        """Charge the total, cross-validate every candidate, select, refit.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : DPGridSearchCV

        Raises
        ------
        BudgetExceededError
            If ``ledger`` refuses the total (nothing runs).
        ValueError
            If the estimator learns without a guarantee (and ``allow_nonprivate`` is
            False), or ``scoring``/``refit`` are invalid.
        TypeError
            If ``scoring`` is not a DP scorer.
        """
        self._validate_params()
        _check_common(self.estimator, self.n_splits, X, y, self.allow_nonprivate)
        candidates = list(ParameterGrid(self.param_grid))
        scorers, multimetric = _check_scoring(self.scoring, self.ledger)
        refit_metric = self._refit_metric(scorers, multimetric)
        plan = _Plan(
            self.estimator,
            candidates,
            self.scoring,
            self.n_splits,
            refit_metric is not None,
            self.ledger,
            self.allow_nonprivate,
            "DPGridSearchCV",
        )
        _check_n_splits(self.n_splits, _num_samples(X))
        plan.charge(self.ledger, "DPGridSearchCV (replace-one)")
        scores, guarantees, _ = plan.run(X, y, self.random_state)
        self.cv_results_ = self._results(candidates, scores, multimetric)
        self.scorer_ = self.scoring
        self.multimetric_ = multimetric
        self.n_splits_ = int(self.n_splits)
        if refit_metric is not None:
            self.best_index_ = int(np.argmin(self.cv_results_[f"rank_test_{refit_metric}"]))
            self.best_params_ = candidates[self.best_index_]
            means = self.cv_results_[f"mean_test_{refit_metric}"]
            self.best_score_ = float(means[self.best_index_])
            model = clone(plan.estimators[self.best_index_]).fit(X, y)
            guarantees.append(
                _check_fitted_spend(model, plan.fit_budgets[self.best_index_], "DPGridSearchCV")
            )
            self.best_estimator_ = model
        self.epsilon_spent_ = plan.epsilon
        self.delta_spent_ = plan.delta
        self.privacy_breakdown_ = plan.breakdown
        self.privacy_guarantee_ = (
            "none" if math.isinf(plan.epsilon) else weakest_guarantee(guarantees)
        )
        self.privacy_relation_ = "replace_one"
        return self

    @staticmethod
    def _results(candidates, scores, multimetric):
        results = {"params": candidates}
        names = sorted({k for p in candidates for k in p})
        for key in names:
            col = np.ma.MaskedArray(np.empty(len(candidates), dtype=object), mask=True)
            for i, p in enumerate(candidates):
                if key in p:
                    col[i] = p[key]
            results[f"param_{key}"] = col
        for name, values in scores.items():
            for j in range(values.shape[1]):
                results[f"split{j}_test_{name}"] = values[:, j].copy()
            mean = values.mean(axis=1)
            results[f"mean_test_{name}"] = mean
            results[f"std_test_{name}"] = values.std(axis=1)
            results[f"rank_test_{name}"] = rankdata(-mean, method="min").astype(np.int32)
        return results

    # ------------------------------------------------------------------ delegation
    @property
    def classes_(self):
        """Class labels of ``best_estimator_``."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.classes_

    @property
    def n_features_in_(self):
        """Number of features seen by ``best_estimator_``."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.n_features_in_

    @available_if(_search_estimator_has("predict"))
    def predict(self, X):
        """Predict with ``best_estimator_`` (post-processing: spends nothing)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    @available_if(_search_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """``best_estimator_.predict_proba`` (post-processing: spends nothing)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_proba(X)

    @available_if(_search_estimator_has("decision_function"))
    def decision_function(self, X):
        """``best_estimator_.decision_function`` (post-processing: spends nothing)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.decision_function(X)

    @available_if(_search_estimator_has("transform"))
    def transform(self, X):
        """``best_estimator_.transform`` (post-processing: spends nothing)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.transform(X)

    def score(self, X, y):
        """A new DP score of ``best_estimator_`` on ``(X, y)``; spends the scorer's budget.

        Uses the refit scorer. Each call is a fresh DP release on the rows given, with
        the scorer's ``(epsilon, delta)`` under replace one row of ``(X, y)``, and is
        charged to ``ledger`` (when set) -- it is not part of ``epsilon_spent_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        score : float
        """
        check_is_fitted(self, "best_estimator_")
        scorers, multimetric = _check_scoring(self.scoring, self.ledger)
        name = self._refit_metric(scorers, multimetric)
        scorer = copy.copy(scorers[name])
        scorer.ledger = self.ledger
        return scorer(self.best_estimator_, X, y)
