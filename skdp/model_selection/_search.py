"""DPGridSearchCV: grid search with DP scorers, data-independent folds and one total."""

from __future__ import annotations

import copy
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin
from sklearn.utils import get_tags

from skdp.model_selection._budget import warn_if_tuning_starves
from skdp.model_selection._delegation import BestEstimatorMixin
from skdp.model_selection._holdout import split_holdout
from skdp.model_selection._plan import _check_common, _check_scoring, _num_samples
from skdp.model_selection._private import WITHHELD
from skdp.model_selection._search_fit import _WHERE, SearchFitMixin
from skdp.utils._docstrings import insert_docs
from skdp.utils._keyword_init import REQUIRED, keyword_init
from skdp.utils._random import ScrubSeedsOnPickleMixin
from skdp.utils._sklearn_compat import HasMethods, Hidden, Interval, StrOptions, check_is_fitted

__all__ = ["DPGridSearchCV"]


@insert_docs
class DPGridSearchCV(
    ScrubSeedsOnPickleMixin, SearchFitMixin, BestEstimatorMixin, MetaEstimatorMixin, BaseEstimator
):
    """Grid search over a DP estimator with DP scorers and one stated total.

    Every candidate of ``param_grid`` is cross-validated on the same data-independent
    folds (:func:`dp_cross_validate`), the candidate with the best mean noisy score is
    selected, and (``refit=True``) refitted on all rows. ``epsilon_spent_`` /
    ``delta_spent_`` is the total of the whole search under replace one row -- every
    fold fit of every candidate, every scorer call, and the refit -- computed with
    :func:`skdp.metrics.cv_privacy_spend` before any row is read and charged once to
    ``ledger``.

    Give the total you want to spend as ``epsilon=`` (and ``delta=``) and the search
    splits it between the fold fits, the scorer calls and the refit by a public rule
    (Notes, "One total"); without it each candidate spends its own declared budget and
    the total follows. ``best_score_`` is the largest of the candidates' noisy scores
    and so reads high (Notes, "Selection bias"); ``holdout=`` reports the winner's score
    on rows the search never saw, ``best_score_unbiased_``.

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
        holding this search's ``ledger``); anything else raises ``TypeError``. With
        ``epsilon=`` their own ``epsilon``/``delta`` are only weights between several
        scorers: the search sets the budget of each call.
    epsilon : float or None, default=None
        The total epsilon of the whole search (replace one row: what ``epsilon_spent_``
        reports and ``ledger`` is charged), split by the rule in Notes ("One total"):
        every fit (fold fits and refit) gets the same add/remove epsilon ``e``, each
        test fold's scoring ``2 * scoring_weight * e``, and ``e`` is the largest value
        whose composition stays within the total. Decided from the parameters only
        (:meth:`privacy_plan` shows it without data). The candidates' declared budgets
        are weights between the DP steps of a pipeline; a ``param_grid`` over
        ``epsilon``/``delta`` (or ``<step>__epsilon``) is refused. ``None``: the
        candidates' and scorers' own budgets, the total follows from them.
    delta : float or None, default=None
        The total delta of the search (with ``epsilon``), split in the same units;
        required (``> 0``) when a candidate or a scorer declares ``delta > 0`` (declare
        ``delta=0`` on steps that do not need it), refused without ``epsilon``.
    cv : int, KFold or None, default=None
        The folds, shared by every candidate. ``None``: 5. An int ``k >= 2``: a uniformly
        random balanced partition of the row positions into ``k`` folds, keyed by
        ``random_state``. ``KFold(k, shuffle=True, random_state=s)`` (``s`` an int or
        ``None``): that splitter's folds. Splitters that read ``y`` (``StratifiedKFold``
        and its variants) or ``groups``, ``KFold(shuffle=False)``, ``PredefinedSplit``,
        iterables of index arrays and splitters that are not one partition of the rows
        are refused with the reason (``ValueError``; see :func:`dp_cross_validate`).
        Folds of whole patients: ``fit(..., groups=)`` with an int ``cv``.
    n_splits : int, optional
        Deprecated alias of an int ``cv`` (``FutureWarning`` at ``fit``; removed in 0.2):
        the same folds and results as ``cv=n_splits``.
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
        Key of the folds of an int ``cv`` (fresh OS entropy if ``None``; see
        :func:`dp_cross_validate`) and of private selection's draws; a ``KFold`` keys its
        folds with its own seed.
    allow_nonprivate : bool, default=False
        Run an estimator that learns without a guarantee anyway, with a
        :class:`~skdp.exceptions.PrivacyLeakWarning`; the total is then ``inf``.
    n_jobs : int or None, default=None
        Candidate x fold tasks run in parallel through joblib (scikit-learn's meaning:
        ``None`` is 1 unless inside a :func:`joblib.parallel_backend` context, ``-1``
        all CPUs). Under ``joblib.parallel_backend("dask")`` the tasks run on the Dask
        workers (:doc:`/dask`). The total is charged once, in the calling process, before
        any task starts, and the results equal a sequential run's. Private selection
        runs its repetitions in the calling process.
    selection : "grid", "private" or PrivateSelection, default="grid"
        ``"grid"``: every candidate on every fold, every score released in
        ``cv_results_``. ``"private"`` (:class:`PrivateSelection` defaults) or a
        :class:`PrivateSelection`: a random number of runs of uniformly random
        candidates, only the winner released (``best_params_``, ``best_index_``,
        ``best_score_``, ``best_estimator_``); ``cv_results_`` and timings are withheld
        (reading them raises ``AttributeError`` saying why). Total: ``(2 + eta)`` times
        one run's epsilon plus the refit (see Notes). Needs pure-DP candidates and scorer
        (``delta=0``) and, with several scorers, ``refit=<name>`` (only that scorer is
        called and charged).
    scoring_weight : float, default=1.0
        With ``epsilon=``: the budget of one test fold's scoring relative to one fit,
        both under replace-one (``s = 2 * scoring_weight * e``). Larger: less noisy
        scores, noisier fits.
    holdout : float, int or None, default=None
        Rows set aside before the search: a fraction in (0, 1) of ``n`` (rounded down)
        or a count, a uniformly random subset of the row positions keyed by
        ``random_state`` (never by the data). The selection and the refit use the
        other rows; ``best_score_unbiased_`` is one DP score of ``best_estimator_`` on
        the held-out rows with the selecting scorer, released at the selection's own
        total at no extra cost (disjoint rows compose in parallel). Needs ``refit``.
        ``None``: every row goes to the search and there is no unbiased score. With
        ``fit(..., groups=)`` a fraction only: whole patients are held out, each by a
        keyed hash of their label (``skdp.model_selection._holdout``).

    Attributes
    ----------
    cv_results_ : dict of numpy arrays
        ``params``, ``param_<name>``, ``split<j>_test_<score>``, ``mean_test_<score>``,
        ``std_test_<score>``, ``rank_test_<score>`` (``<score>`` is ``score`` for one
        scorer). Noisy scores only: every one is a DP release counted in the total.
        No timings. Grid mode only: withheld under private selection (``AttributeError``).
    best_index_, best_params_, best_score_ : int, dict, float
        The selected candidate and its mean noisy score (when ``refit`` is set; under
        private selection always: the winning run's candidate and mean noisy score).
        ``best_score_`` is the maximum of noisy scores, so it overstates the winner's
        score on new rows (Notes, "Selection bias"); use ``best_score_unbiased_``.
    best_score_unbiased_ : float
        With ``holdout``: the selecting scorer's DP score of ``best_estimator_`` on the
        held-out rows, which played no part in the selection or the refit: not biased
        upward (up to the scorer's clamping to the metric's range, which pulls a very
        noisy score towards the middle of the range).
    n_holdout_ : int
        With ``holdout``: the number of held-out rows (a function of ``n`` and
        ``holdout``). Not set with ``groups`` (the held-out patients' row count is
        private).
    best_estimator_ : estimator
        The selected candidate refitted on all rows (``refit=True``; with ``holdout``,
        on the rows not held out). Its own
        ``epsilon_spent_`` is that one fit under add/remove; the search's total counts
        it (as ``2 epsilon`` under replace-one).
    epsilon_spent_, delta_spent_ : float
        The total of the search under replace one row (see Notes), already charged to
        ``ledger``. Do not charge the search again with
        :meth:`~skdp.accounting.PrivacyLedger.spend_fitted` (its
        ``relation="replace"`` would convert this replace-one total a second time).
    privacy_breakdown_ : dict
        ``{"scorer_calls": (eps, delta), "cv_fits": ..., "refit": ...}`` (private
        selection: ``{"private_selection": ..., "refit": ...}``), replace-one; these
        parts add up to the total (composed by :func:`~skdp.metrics.cv_privacy_spend`
        or the private-selection bound). With ``holdout`` also ``"holdout_score"``:
        spent on the held-out rows only, in parallel with the rest, so it is not added
        (it equals the total).
    privacy_plan_ : dict
        :meth:`privacy_plan` of the parameters the search was fitted with: the budget of
        every fit and scorer call, the same for every data set.
    privacy_guarantee_ : {"exact", "approximate", "none"}
        The weakest guarantee over the fits (scorers are exact).
    privacy_relation_ : str
        ``"replace_one"``.
    selection_ : {"grid", "private"}
        The mode of the fit.
    scorer_ : DPScorer or dict
        The scorers as given; with ``epsilon=``, copies holding the budget the split
        gave each call.
    multimetric_ : bool
    n_splits_ : int
        The number of folds.
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
    replaced row is in one test fold and ``k - 1`` training sets; candidates and
    the refit share the rows and compose sequentially. With scorer epsilons summing to
    ``S``, candidate fit budgets ``e_c`` and ``k`` folds::

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
    ``cv_results_`` and any timings must be withheld: only the winner is released. With
    ``selection="private"`` (or a :class:`PrivateSelection`) each run picks a uniformly
    random candidate and cross-validates it on fresh data-independent folds with the
    selecting scorer (``eps0 = max_c [s + (k - 1) 2 e_c]`` under replace-one, ``s`` that
    scorer's epsilon); the number of runs ``K`` is drawn from a truncated negative
    binomial ``D(eta, gamma)`` (its mean ``expected_runs`` sets ``gamma``) from the
    search's own stream; only the best run is released. By Papernot and Steinke (2022),
    Theorem 2, in its pure-DP limit (stated in :class:`PrivateSelection`), this is
    ``(2 + eta) eps0``-DP whatever the grid size and ``gamma`` (``eta = 1``, geometric:
    Liu and Talwar's ``3 eps0``)::

        epsilon_spent_ = (2 + eta) * max_c [s + (k - 1) * 2 e_c] + max_c 2 e_c   (refit)

    It lowers the total when the grid sum ``sum_c [s + (k - 1) 2 e_c]`` exceeds
    ``(2 + eta) eps0``, e.g. for equal budgets with more than ``2 + eta`` candidates;
    for smaller grids ``selection="grid"`` is cheaper and also releases every score.
    Nothing about the runs may be observable besides the winner: every candidate's
    parameters are validated before the first run, the runs' warnings and progress
    records are silenced, and ``privacy_guarantee_`` is planned from the parameters. An
    error raised inside a run (a fit or scorer failing on the rows) propagates, as in
    grid mode.

    **One total** (``epsilon=T``, ``delta=D``). The search sets every fit's budget
    and every scorer call's from ``T`` before any row is read, from parameters only:
    every fit (each fold fit of each candidate, and the refit) gets the same add/remove
    epsilon ``e`` -- the refitted model is fitted at the budget it was selected at --
    and the scoring of one test fold gets ``s = 2 w e`` (``w = scoring_weight``; shared
    by several scorers in proportion to their declared epsilons). The composition
    above is linear in ``e``, so with ``C`` candidates, ``k`` folds and ``r = 1`` with
    a refit (0 without)::

        grid:    T = C (s + (k - 1) 2 e) + r 2 e,  e = T / (2 [C (w + k - 1) + r])
        private: T = (2 + eta) (s + (k - 1) 2 e) + r 2 e,
                 e = T / (2 [(2 + eta)(w + k - 1) + r])

    e.g. ``T = 3``, four candidates, ``k = 5``, ``w = 1``: ``e = 3 / 42 = 0.071`` and
    ``s = 0.143`` (private selection with ``eta = 0``: ``e = 3 / 22 = 0.136``). A
    pipeline's ``e`` is shared by its DP steps in proportion to their declared epsilons
    (and its delta by their declared deltas). Where a candidate or a scorer declares
    ``delta > 0``, ``D`` is split in replace-one units: each such fit gets ``u``
    (add/remove ``u / (1 + e^e)``), each test fold's scoring ``w u`` when the scorers
    declare delta, with ``u`` the value whose composition is ``D``. The totals are
    computed by the same accounting as without ``epsilon=`` (and nudged down by a few
    ulps where rounding would exceed ``T``): ``epsilon_spent_ <= T``, ``delta_spent_
    <= D``, and ``privacy_breakdown_`` adds up to them. Refused (``ValueError``, before
    anything runs): a ``param_grid`` over a budget (``epsilon``, ``delta``,
    ``<step>__epsilon``, ...: the search sets them), a candidate without a DP step to
    receive ``e``, or whose declared spend does not follow its ``epsilon``/``delta``
    parameters, a step that learns without a guarantee (even with
    ``allow_nonprivate``), a missing ``delta=`` where one is needed, and ``delta > 0``
    under private selection.

    **When tuning pays.** Under one total the final model gets ``e``, a fraction
    ``1 / (C (w + k - 1) + r)`` (grid) of the epsilon ``T / 2`` that one untuned fit
    charged the same total would get: 1/21 for four candidates and five folds. Tuning
    pays only when the best candidate beats the default by more than the model loses at
    that fraction of the budget: at large budgets, or between candidates that differ a
    lot. A :class:`~skdp.exceptions.TuningBudgetWarning` is raised before the search
    runs when ``e < T / 20`` (a tenth of ``T / 2``) and ``e < 1``, in either mode
    (without ``epsilon=``, ``e`` is the refit's budget and ``T`` the planned total):
    decided from the plan, never from the rows. Fewer candidates or folds, or private
    selection (``2 + eta`` instead of ``C``), raise the fraction.

    **Selection bias.** ``best_score_`` is the largest of the candidates' mean noisy
    scores, and the maximum of noisy estimates is on average above the true score of
    the candidate it picks (the winner's curse; more so with more candidates, smaller
    folds, more noise): fine to *choose*, not to *report*. ``best_score_unbiased_``
    (``holdout``) scores ``best_estimator_`` on rows that neither the selection nor the
    refit read: given the model, unbiased for its score on new rows (the DP noise has
    mean zero), except that the scorers' clamping to the metric's range pulls a very
    noisy score towards the middle. Privacy: the held-out rows are a data-independent
    subset of the positions (replace-one keeps the replaced row in or out of it), read
    by that one call only; the other rows reach it only through the released refit
    (post-processing). The parts compose in parallel, so the call is released at the
    selection's total (``privacy_breakdown_["holdout_score"]``) and the total does not
    change; the cost is rows (the search sees ``n - n_holdout_``).

    **Exact.** ``privacy_guarantee_`` is ``"exact"`` when every fit's is (the DP
    scorers are exact for the mathematical mechanism). Under private selection it is
    planned from the parameters of every candidate in the grid, not read off the runs
    that ran (which would reveal the hidden number of runs); a fit that records a weaker
    guarantee than its parameters plan raises ``RuntimeError``.

    References
    ----------
    .. [1] J. Liu, K. Talwar. "Private selection from private candidates". STOC 2019.
    .. [2] N. Papernot, T. Steinke. "Hyperparameter tuning with Renyi differential
       privacy". ICLR 2022.
    .. [3] F. McSherry. "Privacy integrated queries". SIGMOD 2009.
    .. [4] {ref_dwork_roth2014_groups}

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
    ...     cv=3, ledger=ledger, random_state=0,
    ... ).fit(X, y)
    >>> search.epsilon_spent_  # 2 * 0.25 + 2 * 2 * (0.5 + 1.0) + 2 * 1.0
    8.5
    >>> cv_privacy_spend(epsilon=0.25, n_splits=3, n_candidates=2, fit_epsilon=[0.5, 1.0])
    (8.5, 0.0)
    >>> ledger.epsilon_spent, len(ledger)
    (8.5, 1)
    >>> search.best_estimator_.clauses_
    [('x0', 'x1')]

    One total for the whole search: 30, split by the rule (here ``e = 30 / (2 (2 (1 + 5
    - 1) + 1)) = 30 / 22`` per fit), with a fifth of the rows held out for an unbiased
    score of the winner:

    >>> search = DPGridSearchCV(
    ...     DPILPClassifier(random_state=0),
    ...     {"max_clause_length": [1, 2]},
    ...     scoring=make_dp_scorer("accuracy", epsilon=1.0, random_state=0),
    ...     epsilon=30.0, cv=5, holdout=0.2, random_state=0,
    ... ).fit(X, y)
    >>> search.epsilon_spent_ <= 30.0, round(search.best_estimator_.epsilon, 3)
    (True, 1.364)
    >>> search.n_holdout_, search.best_params_
    (600, {'max_clause_length': 2})
    >>> bool(search.best_score_unbiased_ > 0.9)
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"])],
        "param_grid": [dict, list],
        "scoring": "no_validation",  # checked in fit, with a message about DP scorers
        "cv": "no_validation",  # checked in fit (check_cv), with the reason of a refusal
        "n_splits": [
            Interval(Integral, 2, None, closed="left"),
            Hidden(StrOptions({"deprecated"})),
        ],
        "refit": ["boolean", str],
        "ledger": "no_validation",
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
        "allow_nonprivate": ["boolean"],
        "n_jobs": [None, Integral],
        "selection": "no_validation",  # checked in fit
        "epsilon": "no_validation",  # checked with the total's own messages
        "delta": "no_validation",
        "scoring_weight": "no_validation",
        "holdout": "no_validation",  # checked in fit (it needs the row count)
    }

    __init__ = keyword_init(
        [
            ("estimator", REQUIRED),
            ("param_grid", REQUIRED),
            ("scoring", REQUIRED),
            ("epsilon", None),
            ("delta", None),
            ("cv", None),
            ("n_splits", "deprecated"),
            ("refit", True),
            ("ledger", None),
            ("random_state", None),
            ("allow_nonprivate", False),
            ("n_jobs", None),
            ("selection", "grid"),
            ("scoring_weight", 1.0),
            ("holdout", None),
        ],
        positional=("estimator", "param_grid"),
        qualname="DPGridSearchCV.__init__",
    )

    def __getattr__(self, name):
        if name in WITHHELD and self.__dict__.get("selection_") == "private":
            raise AttributeError(
                f"{name} is withheld by private selection (selection='private'): only the "
                "winning candidate and its score are released; the other runs' scores, "
                "their number and timings are not covered by the privacy guarantee, so "
                "they are not kept. Use selection='grid' to release every score."
            )
        if name == "best_score_unbiased_" and "best_index_" in self.__dict__:
            raise AttributeError(
                "best_score_unbiased_ exists only for a search fitted with holdout= (rows "
                "set aside before the search and scored once, after it)"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

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

    def fit(self, X, y, *, groups=None):
        """Charge the total, cross-validate every candidate, select, refit.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        groups : array-like of shape (n_samples,), default=None
            The patient of each row: every fold then holds whole patients (a keyed hash
            of the patient's label picks the fold, so no patient's fold depends on the
            others), the candidates are fitted and the scorers called with ``groups``,
            and the total is per patient (:doc:`/patients`), under *add or remove one
            patient* (``privacy_relation_ = "add_remove"``: a replaced patient's new
            label may hash to another fold); the total charged is the replace-one one,
            which bounds it. Needs candidates that take ``groups``, scorers made with
            ``max_rows_per_group`` and ``cv=<int>`` (a splitter's folds would not be
            whole patients fixed without the data); works with grid and private
            selection (one patient fold assignment for every run) and with a
            ``holdout`` fraction (whole patients held out). A fold or held-out side
            without patients is scored with noise only; ``ValueError`` (before the
            charge) only when every patient falls in one fold, an event of
            probability ``n_splits ** (1 - G)`` for ``G`` patients (:doc:`/patients`).

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
        _check_common(self.estimator, X, y, self.allow_nonprivate)
        p = self._planned()
        n = _num_samples(X)
        if groups is not None:
            groups = self._check_groups(groups, n, p)
        if self.holdout is not None:  # row positions, or whole patients with groups
            X, y, groups, hold, n_holdout = split_holdout(
                X, y, groups, self.holdout, p.folds.n_splits, self.random_state
            )
        if groups is None:  # with groups the row count is private: group_folds decides
            p.folds.check_n_samples(_num_samples(X))
        if p.refit_metric is not None:
            warn_if_tuning_starves(max(e for e, _ in p.plan.fit_budgets), p.epsilon, _WHERE)
        for key in list(vars(self)):
            if key.endswith("_") and not key.startswith("__"):
                delattr(self, key)  # a refit must not keep the previous fit's facts
        if p.run is not None:
            self._fit_private(X, y, p, groups)
        else:
            self._fit_grid(X, y, p, groups)
        self.privacy_unit_ = "row" if groups is None else "group"
        if self.holdout is not None:
            scorer = copy.copy(p.scorers[p.scorer_name])
            scorer.epsilon, scorer.delta = p.breakdown["holdout_score"]
            if n_holdout is not None:  # with groups the held-out row count is private
                self.n_holdout_ = n_holdout
            kw = {} if hold[2] is None else {"groups": hold[2]}
            self.best_score_unbiased_ = float(scorer(self.best_estimator_, *hold[:2], **kw))
        self.scorer_ = p.scoring
        self.multimetric_ = p.multimetric
        self.n_splits_ = p.folds.n_splits
        self.epsilon_spent_ = p.epsilon
        self.delta_spent_ = p.delta
        self.privacy_breakdown_ = dict(p.breakdown)
        self.privacy_plan_ = p.public()
        # with groups: add/remove one patient (a replaced patient's new label may hash to
        # another fold); the replace-one total charged bounds the add/remove one
        self.privacy_relation_ = "replace_one" if groups is None else "add_remove"
        return self

    def privacy_plan(self):
        """The privacy plan of a fit with the current parameters, without any data.

        What :meth:`fit` spends and how it splits it, computed from the parameters alone
        (the total, the grid, the folds, the selection mode, the declared budgets): the
        same for every data set, which is what makes it public. ``fit`` stores it as
        ``privacy_plan_``.

        Returns
        -------
        plan : dict
            ``"epsilon"``, ``"delta"``: the total (replace one row), what ``fit`` charges
            and reports as ``epsilon_spent_``/``delta_spent_``; ``"fit_budgets"``: the
            ``(epsilon, delta)`` of one fit of each candidate (add/remove; every fold fit
            and the refit); ``"scorer_budgets"``: ``{name: (epsilon, delta)}`` of one
            call of each scorer that is called; ``"breakdown"``: the parts of the total,
            as ``privacy_breakdown_``; ``"refit_epsilon"``: the refit's budget (0 without
            a refit).

        Examples
        --------
        >>> from skdp.ilp import DPILPClassifier
        >>> from skdp.metrics import make_dp_scorer
        >>> from skdp.model_selection import DPGridSearchCV
        >>> search = DPGridSearchCV(
        ...     DPILPClassifier(), {"max_clause_length": [1, 2]},
        ...     scoring=make_dp_scorer("accuracy", epsilon=1.0), epsilon=3.0, cv=5)
        >>> plan = search.privacy_plan()
        >>> plan["fit_budgets"][0][0]  # 3 / (2 * (2 * (1 + 5 - 1) + 1))
        0.13636363636363635
        >>> plan["epsilon"]
        3.0
        """
        self._validate_params()
        return self._planned().public()

    def score(self, X, y):
        """A new DP score of ``best_estimator_`` on ``(X, y)``; spends the scorer's budget.

        Uses the refit scorer as given in ``scoring``. Each call is a fresh DP release on
        the rows given, with that scorer's own ``(epsilon, delta)`` (also under
        ``epsilon=``, which sets the budgets inside the search only) under replace one
        row of ``(X, y)``, and is charged to ``ledger`` (when set) -- it is not part of
        ``epsilon_spent_``.

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
