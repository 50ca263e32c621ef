"""The steps of :meth:`DPGridSearchCV.fit`, a mixin of the search.

:meth:`SearchFitMixin._planned` decides everything before a row is read -- the folds, the
candidates, the scorers, the refit metric, the selection mode and the split of the total
-- as one public :class:`~skdp.model_selection._budget.SearchPlan`; ``_fit_grid`` runs
every candidate on every fold and selects by the noisy mean score, ``_fit_private`` runs
private selection and keeps only the winner; ``_results`` lays the noisy scores out as
``cv_results_``. The estimator, its parameters and its docstring are
:mod:`skdp.model_selection._search`.
"""

from __future__ import annotations

import copy
import math

import numpy as np
from scipy.stats import rankdata
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid

from skdp.model_selection._budget import SearchPlan, check_total, plan_search
from skdp.model_selection._folds import check_cv
from skdp.model_selection._holdout import check_holdout, check_holdout_groups
from skdp.model_selection._plan import (
    _check_fitted_spend,
    _check_scoring,
    check_group_support,
    check_no_survival_estimator,
    group_folds,
)
from skdp.model_selection._private import PrivateSelection
from skdp.utils._groups import check_groups
from skdp.utils._meta_privacy import weakest_guarantee

__all__ = ["SearchFitMixin"]

_WHERE = "DPGridSearchCV"


class SearchFitMixin:
    """The plan, the grid and private-selection runs, and ``cv_results_`` of a search.

    Reads the search's parameters (``cv``, ``n_splits``, ``param_grid``, ``scoring``,
    ``refit``, ``selection``, ``epsilon``, ``delta``, ``scoring_weight``, ``holdout``,
    ``ledger``, ``allow_nonprivate``, ``random_state``, ``n_jobs``) and sets its fitted
    selection attributes.
    """

    def _private_selection(self):
        sel = self.selection
        if isinstance(sel, PrivateSelection):
            return sel
        if isinstance(sel, str) and sel == "private":
            return PrivateSelection()
        if isinstance(sel, str) and sel == "grid":
            return None
        raise ValueError(
            "selection must be 'grid', 'private' or a skdp.model_selection.PrivateSelection, "
            f"got {sel!r}"
        )

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

    def _planned(self):
        """Everything fixed before a row is read (no data: the plan is public)."""
        folds = check_cv(self.cv, self.n_splits, where=_WHERE)
        candidates = list(ParameterGrid(self.param_grid))
        check_no_survival_estimator(self.estimator, _WHERE)
        scorers, multimetric = _check_scoring(self.scoring, self.ledger)
        refit_metric = self._refit_metric(scorers, multimetric)
        private = self._private_selection()
        total = check_total(self.epsilon, self.delta, self.scoring_weight)
        name = refit_metric if refit_metric is not None else ("score" if not multimetric else None)
        if private is not None and name is None:
            raise ValueError(
                "selection='private' with several scorers needs refit=<name of the scorer "
                "that selects>: only that scorer is called and charged"
            )
        if self.holdout is not None:
            if refit_metric is None:
                raise ValueError(
                    "holdout= scores the refitted winner on the held-out rows: it needs "
                    "refit=True (or the name of the selecting scorer)"
                )
            check_holdout(self.holdout)
        plan, run, used = plan_search(
            self.estimator,
            candidates,
            self.scoring,
            folds,
            plan_refit=private is not None or refit_metric is not None,
            ledger=self.ledger,
            allow=self.allow_nonprivate,
            where=_WHERE,
            total=total,
            selection=private,
            scorer_name=name,
            run_refit=refit_metric is not None,
        )
        return SearchPlan(
            folds, candidates, multimetric, refit_metric, name, plan, run, used, self.holdout
        )

    def _fit_grid(self, X, y, p, groups=None):
        plan = p.plan
        unit, folds = "row", None
        if groups is not None:  # refused before the charge only if one fold holds all
            unit, folds = "group", group_folds(groups, plan.n_splits, self.random_state)
        plan.charge(self.ledger, "DPGridSearchCV (replace-one)", unit=unit)
        scores, guarantees, _ = plan.run(
            X, y, self.random_state, n_jobs=self.n_jobs, groups=groups, folds=folds
        )
        self.cv_results_ = self._results(p.candidates, scores, p.multimetric)
        if p.refit_metric is not None:
            self.best_index_ = int(np.argmin(self.cv_results_[f"rank_test_{p.refit_metric}"]))
            self.best_params_ = p.candidates[self.best_index_]
            means = self.cv_results_[f"mean_test_{p.refit_metric}"]
            self.best_score_ = float(means[self.best_index_])
            refit_kw = {} if groups is None else {"groups": groups}
            model = clone(plan.estimators[self.best_index_]).fit(X, y, **refit_kw)
            guarantees.append(
                _check_fitted_spend(model, plan.fit_budgets[self.best_index_], _WHERE)
            )
            self.best_estimator_ = model
        self.privacy_guarantee_ = (
            "none" if math.isinf(plan.epsilon) else weakest_guarantee(guarantees)
        )
        self.selection_ = "grid"

    def _fit_private(self, X, y, p, groups=None):
        """Private selection: random repetitions, only the winner (see PrivateSelection).

        With ``groups`` every run uses one patient fold assignment, drawn before the
        charge (an empty fold is scored with noise only; the assignment is refused only
        if one fold holds every patient): a run that failed would reveal that it ran."""
        plan, run = p.plan, p.run
        stand_in = copy.copy(self)
        stand_in.ledger = None
        unit, folds = "row", None
        if groups is not None:
            unit, folds = "group", group_folds(groups, plan.n_splits, self.random_state)
        run.charge(self.ledger, "DPGridSearchCV private selection (replace-one)", unit=unit)
        best, score = run.run(X, y, self.random_state, stand_in, groups=groups, folds=folds)
        self.best_index_ = int(best)
        self.best_params_ = p.candidates[best]
        self.best_score_ = score
        if p.refit_metric is not None:
            refit_kw = {} if groups is None else {"groups": groups}
            model = clone(plan.estimators[best]).fit(X, y, **refit_kw)
            run.check_guarantee(_check_fitted_spend(model, plan.fit_budgets[best], _WHERE), best)
            self.best_estimator_ = model
        # planned over the whole grid, never over the runs that ran: which candidates
        # ran (and so the weakest of their guarantees) would reveal the hidden K
        self.privacy_guarantee_ = "none" if math.isinf(run.epsilon) else run.guarantee
        self.selection_ = "private"

    def _check_groups(self, groups, n, p):
        """``groups`` as an array, or a ``ValueError`` naming what cannot take it."""
        check_groups(groups, n)
        if p.folds.splitter is not None:
            raise ValueError(
                f"{_WHERE}: with groups= pass cv=<int>: the folds are then whole patients, "
                "each patient's fold a keyed hash of their own label (fixed without the "
                f"data); cv={type(p.folds.splitter).__name__}(...) splits row positions, "
                "so a patient's rows would fall in several folds"
            )
        if self.holdout is not None:
            check_holdout_groups(self.holdout)
        check_group_support([self.estimator] + list(p.plan.estimators), p.plan.scorers, "groups=")
        return np.asarray(groups)

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
