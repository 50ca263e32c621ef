"""DPGridSearchCV(selection="private"): random repetitions, only the winner, (2 + eta) eps0."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone

from skdp.accounting import PrivacyLedger
from skdp.base import DPEstimatorMixin
from skdp.exceptions import BudgetExceededError
from skdp.ilp import DPILPClassifier
from skdp.metrics import cv_privacy_spend, make_dp_scorer
from skdp.model_selection import DPGridSearchCV, PrivateSelection
from skdp.model_selection._private import (
    _draw_runs,
    _gamma_for_mean,
    truncated_negative_binomial_mean,
)


class CountingDPClassifier(DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Test double: counts its fits and records the random_state each fit got."""

    fits: list = []

    def __init__(self, epsilon=1.0, delta=0.0, shift=0.0, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.shift = shift
        self.random_state = random_state

    def fit(self, X, y):
        type(self).fits.append(self.random_state)
        X = np.asarray(X, dtype=float)
        self.classes_ = np.array([0, 1])
        self.n_features_in_ = X.shape[1]
        return self._record_privacy_spent(self.epsilon, self.delta)

    def decision_function(self, X):
        return np.asarray(X, dtype=float)[:, 0] - self.shift

    def predict(self, X):
        return (self.decision_function(X) > 0).astype(int)


ACC = make_dp_scorer("accuracy", epsilon=0.25)


@pytest.fixture
def binary():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, size=(1200, 4))
    y = X[:, 0] & X[:, 1]
    return X, y


def _data(seed, n=60):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, (X[:, 0] > 0).astype(int)


# ------------------------------------------------------------------ the total
@pytest.mark.parametrize("eta", [1.0, 0.0, 0.5])
def test_total_matches_the_theorem_by_hand(binary, eta):
    X, y = binary
    ledger = PrivacyLedger(epsilon_budget=100.0)
    search = DPGridSearchCV(
        DPILPClassifier(random_state=0),
        {"epsilon": [0.5, 1.0], "max_clause_length": [1, 2]},
        scoring=ACC,
        cv=3,
        ledger=ledger,
        random_state=0,
        selection=PrivateSelection(eta=eta, expected_runs=3),
    ).fit(X, y)
    # one run: scorer 0.25 + (k - 1) = 2 fits at 2 * 1.0 (replace-one), the largest e_c
    run = 0.25 + 2 * 2 * 1.0
    selection = (2 + eta) * run  # Papernot & Steinke Thm 2, pure-DP limit
    refit = 2 * 1.0
    assert search.epsilon_spent_ == pytest.approx(selection + refit)
    assert search.delta_spent_ == 0.0
    assert search.privacy_breakdown_ == {
        "private_selection": (pytest.approx(selection), 0.0),
        "refit": (pytest.approx(refit), 0.0),
    }
    assert len(ledger) == 1
    assert ledger.epsilon_spent == pytest.approx(search.epsilon_spent_)
    assert search.privacy_relation_ == "replace_one"
    assert search.privacy_guarantee_ == "exact"
    assert search.selection_ == "private"
    assert search.best_estimator_.epsilon_spent_ == search.best_params_["epsilon"]


@pytest.mark.parametrize(
    ("fit_eps", "grid_total", "eta1", "eta0"),
    [  # the table of doc/composition.rst (scorer 0.25, 5 folds, refit included)
        ([1.0] * 2, 18.50, 26.75, 18.50),
        ([1.0] * 3, 26.75, 26.75, 18.50),
        ([1.0] * 4, 35.00, 26.75, 18.50),
        ([1.0] * 20, 167.00, 26.75, 18.50),
        ([0.1, 0.3, 1.0, 3.0], 42.20, 78.75, 54.50),
    ],
)
def test_the_documented_comparison_table(fit_eps, grid_total, eta1, eta0):
    X, y = _data(0, n=20)
    if len(set(fit_eps)) == len(fit_eps):
        grid = {"epsilon": fit_eps}
    else:  # equal budgets: candidates differ in another parameter
        grid = {"epsilon": [fit_eps[0]], "shift": [float(i) for i in range(len(fit_eps))]}
    totals = []
    for sel in ("grid", PrivateSelection(eta=1.0, expected_runs=1), PrivateSelection(eta=0.0)):
        search = DPGridSearchCV(
            CountingDPClassifier(), grid, scoring=ACC, cv=5, random_state=0, selection=sel
        ).fit(X, y)
        totals.append(search.epsilon_spent_)
    assert totals == pytest.approx([grid_total, eta1, eta0])
    planned, _ = cv_privacy_spend(
        epsilon=0.25, n_splits=5, n_candidates=len(fit_eps), fit_epsilon=fit_eps
    )
    assert planned == pytest.approx(grid_total)


def test_budget_refused_before_any_fit():
    X, y = _data(0)
    CountingDPClassifier.fits = []
    search = DPGridSearchCV(
        CountingDPClassifier(),
        {"epsilon": [1.0, 2.0]},
        scoring=ACC,
        cv=2,
        ledger=PrivacyLedger(epsilon_budget=1.0),
        selection="private",
    )
    with pytest.raises(BudgetExceededError):
        search.fit(X, y)
    assert CountingDPClassifier.fits == []


# ------------------------------------------------------------------ only the winner
WINNER_FACTS = {
    "best_estimator_",
    "best_index_",
    "best_params_",
    "best_score_",
    "delta_spent_",
    "epsilon_spent_",
    "multimetric_",
    "n_splits_",
    "privacy_breakdown_",
    "privacy_guarantee_",
    "privacy_plan_",  # public: computed from the parameters alone (privacy_plan())
    "privacy_relation_",
    "privacy_unit_",  # public: "row", or "group" when fit got groups
    "scorer_",
    "selection_",
}


def test_only_winner_facts_exist_and_cv_results_is_unreachable():
    X, y = _data(0)
    search = DPGridSearchCV(
        CountingDPClassifier(random_state=3),
        {"shift": [-1.0, 0.0, 1.0]},
        # a seeded scorer: with fresh entropy the noisy accuracies could (rarely) rank
        # shift -1 above 0 and the last assertion would fail by chance
        scoring=make_dp_scorer("accuracy", epsilon=0.25, random_state=5),
        cv=2,
        random_state=0,
        selection="private",
    )
    # a grid fit first: its cv_results_ must not survive a private refit
    search.set_params(selection="grid").fit(X, y)
    assert hasattr(search, "cv_results_")
    # many expected runs, so that the best candidate is almost surely among those drawn
    # (with few runs the winner is the best of the drawn ones, seed-dependent)
    search.set_params(selection=PrivateSelection(expected_runs=100)).fit(X, y)
    fitted = {k for k in vars(search) if k.endswith("_")}
    assert fitted == WINNER_FACTS
    for name in ("cv_results_", "refit_time_", "n_runs_"):
        assert not hasattr(search, name)
        with pytest.raises(AttributeError, match="withheld by private selection"):
            getattr(search, name)
    blob = pickle.dumps(search)
    for word in (b"cv_results", b"split0", b"mean_test", b"rank_test", b"fit_time", b"n_runs"):
        assert word not in blob
    again = pickle.loads(blob)
    assert not hasattr(again, "cv_results_")
    assert again.best_params_ == search.best_params_
    rng_types = (np.random.SeedSequence, np.random.Generator, np.random.BitGenerator)
    assert not any(isinstance(v, rng_types) for v in vars(search).values())
    # the winner is the clear best candidate (shift 0 gives accuracy 1)
    assert search.best_params_ == {"shift": 0.0}


def test_reproducible_under_an_int_seed_and_each_run_gets_fresh_seeds():
    X, y = _data(0)
    kw = dict(
        scoring=make_dp_scorer("accuracy", epsilon=0.5, random_state=1),
        cv=2,
        random_state=4,
        selection=PrivateSelection(expected_runs=6),
    )
    grid = {"shift": [-1.0, -0.5, 0.0, 0.5]}
    CountingDPClassifier.fits = []
    a = DPGridSearchCV(CountingDPClassifier(random_state=3), grid, **kw).fit(X, y)
    seen_a = list(CountingDPClassifier.fits)
    CountingDPClassifier.fits = []
    b = DPGridSearchCV(CountingDPClassifier(random_state=3), grid, **kw).fit(X, y)
    assert (a.best_params_, a.best_score_) == (b.best_params_, b.best_score_)
    assert CountingDPClassifier.fits == seen_a
    # runs (2 fits each) get fresh seeds, not the user's 3; the refit keeps the user's
    runs = seen_a[:-1]
    assert seen_a[-1] == 3
    assert len(runs) % 2 == 0
    per_run = runs[::2]
    assert all(s != 3 for s in per_run)
    assert len(set(per_run)) == len(per_run)


def test_private_selection_draws_do_not_depend_on_n_jobs():
    """n_jobs says how tasks run: under one int seed, the repetition count, every run's
    seeds and the winner are the same whatever it is (it is not seed material)."""
    X, y = _data(0)
    grid = {"shift": [-1.0, -0.5, 0.0, 0.5]}
    seen = {}
    for n_jobs in (None, 1, 3):
        CountingDPClassifier.fits = []
        search = DPGridSearchCV(
            CountingDPClassifier(random_state=3),
            grid,
            scoring=make_dp_scorer("accuracy", epsilon=0.5, random_state=1),
            cv=2,
            random_state=4,
            n_jobs=n_jobs,
            selection=PrivateSelection(expected_runs=6),
        ).fit(X, y)
        seen[n_jobs] = (list(CountingDPClassifier.fits), search.best_index_, search.best_score_)
    assert seen[None] == seen[1] == seen[3]


def test_number_of_runs_is_independent_across_data_sets():
    counts = set()
    for seed in range(12):
        X, y = _data(seed)
        CountingDPClassifier.fits = []
        DPGridSearchCV(
            CountingDPClassifier(),
            {"shift": [0.0, 1.0]},
            scoring=ACC,
            cv=2,
            random_state=0,
            selection=PrivateSelection(expected_runs=5),
        ).fit(X, y)
        counts.add(len(CountingDPClassifier.fits))
    assert len(counts) > 2  # one int seed, different data sets: different K


# ------------------------------------------------------------------ the repetition law
@pytest.mark.parametrize("eta", [0.0, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("mean", [1.5, 4.0, 20.0])
def test_repetition_count_has_the_right_mean(eta, mean):
    gamma = _gamma_for_mean(eta, mean)
    assert truncated_negative_binomial_mean(eta, gamma) == pytest.approx(mean, rel=1e-9)
    rng = np.random.default_rng(12345)
    draws = np.array([_draw_runs(rng, eta, gamma) for _ in range(20000)])
    assert draws.min() >= 1
    se = draws.std() / math.sqrt(draws.size)
    # 5 standard errors: a false failure has probability < 1e-6 (CLT)
    assert abs(draws.mean() - mean) < 5 * se


def test_geometric_pmf():
    rng = np.random.default_rng(7)
    gamma = _gamma_for_mean(1.0, 4.0)
    draws = np.array([_draw_runs(rng, 1.0, gamma) for _ in range(20000)])
    for k in (1, 2, 3):
        p = gamma * (1 - gamma) ** (k - 1)
        se = math.sqrt(p * (1 - p) / draws.size)
        assert abs(np.mean(draws == k) - p) < 5 * se


@pytest.mark.slow
def test_runs_through_the_search_have_the_right_mean():
    # the refit is one more fit; each run is n_splits fits
    n_splits, mean, n_searches = 2, 3.0, 150
    ks = []
    for seed in range(n_searches):
        X, y = _data(seed, n=20)
        CountingDPClassifier.fits = []
        DPGridSearchCV(
            CountingDPClassifier(),
            {"shift": [0.0, 1.0]},
            scoring=ACC,
            cv=n_splits,
            random_state=seed,
            selection=PrivateSelection(expected_runs=mean),
        ).fit(X, y)
        ks.append((len(CountingDPClassifier.fits) - 1) / n_splits)
    ks = np.array(ks)
    # geometric, mean 3: sd sqrt(6); 5 standard errors
    assert abs(ks.mean() - mean) < 5 * math.sqrt(6.0 / n_searches)


# ------------------------------------------------------------------ refusals
def test_refusals():
    X, y = _data(0)
    with pytest.raises(ValueError, match="pure-DP runs"):
        DPGridSearchCV(CountingDPClassifier(delta=1e-6), {}, scoring=ACC, selection="private").fit(
            X, y
        )
    with pytest.raises(ValueError, match="pure-DP runs"):
        DPGridSearchCV(
            CountingDPClassifier(),
            {},
            scoring=make_dp_scorer("accuracy", epsilon=0.5, delta=1e-6),
            selection="private",
        ).fit(X, y)
    with pytest.raises(ValueError, match="refit=<name"):
        DPGridSearchCV(
            CountingDPClassifier(), {}, scoring={"a": ACC}, refit=False, selection="private"
        ).fit(X, y)
    with pytest.raises(ValueError, match="selection must be"):
        DPGridSearchCV(CountingDPClassifier(), {}, scoring=ACC, selection="best").fit(X, y)
    for bad in (-1.0, math.inf, True):
        with pytest.raises(ValueError, match="eta"):
            DPGridSearchCV(
                CountingDPClassifier(), {}, scoring=ACC, selection=PrivateSelection(eta=bad)
            ).fit(X, y)
    with pytest.raises(ValueError, match="expected_runs"):
        DPGridSearchCV(
            CountingDPClassifier(),
            {},
            scoring=ACC,
            selection=PrivateSelection(expected_runs=0.5),
        ).fit(X, y)


def test_refit_false_releases_the_winner_without_a_refit():
    X, y = _data(0)
    search = DPGridSearchCV(
        CountingDPClassifier(),
        {"shift": [0.0, 1.0]},
        scoring=ACC,
        cv=2,
        refit=False,
        random_state=0,
        selection="private",
    ).fit(X, y)
    assert not hasattr(search, "best_estimator_")
    assert search.privacy_breakdown_["refit"] == (0.0, 0.0)
    assert search.epsilon_spent_ == pytest.approx(3 * (0.25 + 2.0))
    assert clone(search).selection == "private"


class ChattyDPClassifier(CountingDPClassifier):
    """Test double: one warning and one progress record per fit (as ExpMFlow emits)."""

    def fit(self, X, y):
        import warnings

        from skdp.utils._logging import get_logger, log_progress

        warnings.warn("one warning per fit", UserWarning, stacklevel=2)
        log_progress(get_logger("tests.chatty"), estimator="Chatty", step=1, total=1)
        return super().fit(X, y)


def test_number_of_runs_is_not_observable_through_warnings_or_logs(caplog, recwarn):
    """Attack: count per-fit warnings and progress records to learn K, the hidden number of
    runs (revealing K voids the selection theorem). Before the fix the counts were
    K * n_splits (+ the refit) and varied with the draw; now only the refit is seen."""
    X, y = _data(0)
    caplog.set_level("INFO", logger="skdp")
    seen = set()
    for seed in range(6):
        caplog.clear()
        recwarn.clear()
        DPGridSearchCV(
            ChattyDPClassifier(),
            {"shift": [-1.0, 0.0, 1.0]},
            scoring=ACC,
            cv=2,
            random_state=seed,
            selection=PrivateSelection(expected_runs=5),
        ).fit(X, y)
        n_warn = sum("one warning per fit" in str(w.message) for w in recwarn)
        n_logs = sum(hasattr(r, "skdp_progress") for r in caplog.records)
        seen.add((n_warn, n_logs))
    assert seen == {(1, 1)}  # the refit's, whatever K was drawn


class MaybeApproximateDPClassifier(CountingDPClassifier):
    """``approximate=True``: a candidate whose mechanism is approximate (like ExpMFlow)."""

    def __init__(self, epsilon=1.0, delta=0.0, shift=0.0, approximate=False, random_state=None):
        super().__init__(epsilon=epsilon, delta=delta, shift=shift, random_state=random_state)
        self.approximate = approximate

    def _mechanism_guarantee(self):
        return "approximate" if self.approximate else "exact"

    def fit(self, X, y):
        super().fit(X, y)
        guarantee = "approximate" if self.approximate else "exact"
        return self._record_privacy_spent(self.epsilon, self.delta, guarantee=guarantee)


def test_reported_guarantee_does_not_reveal_which_candidates_ran():
    """Attack: the weakest guarantee over the runs that ran told whether the one
    approximate candidate was drawn, i.e. something about K and the draws, which the
    selection theorem keeps hidden. Before the fix privacy_guarantee_ was "exact" for
    some seeds and "approximate" for others; now it is planned over the whole grid."""
    X, y = _data(0)
    seen = set()
    for seed in range(12):
        search = DPGridSearchCV(
            MaybeApproximateDPClassifier(),
            [{"shift": [-1.0, 0.0, 1.0, 2.0, -2.0]}, {"approximate": [True]}],
            scoring=ACC,
            cv=2,
            refit=False,
            random_state=seed,
            selection=PrivateSelection(expected_runs=1.5),
        )
        seen.add(search.fit(X, y).privacy_guarantee_)
    assert seen == {"approximate"}


class UnderstatingDPClassifier(CountingDPClassifier):
    """Plans "exact" but records "approximate": an estimator bug the search catches."""

    def fit(self, X, y):
        super().fit(X, y)
        return self._record_privacy_spent(self.epsilon, self.delta, guarantee="approximate")


def test_a_fit_weaker_than_planned_is_an_error():
    X, y = _data(0)
    search = DPGridSearchCV(
        UnderstatingDPClassifier(),
        {"shift": [0.0, 1.0]},
        scoring=ACC,
        cv=2,
        random_state=0,
        selection="private",
    )
    with pytest.raises(RuntimeError, match="weaker than the 'exact'"):
        search.fit(X, y)


def test_planned_guarantee_of_skdp_estimators():
    from skdp.linear_model import DPLogisticRegression, ExpMFlowClassifier
    from skdp.pipeline import check_pipeline_privacy

    assert DPLogisticRegression()._planned_privacy_guarantee() == "exact"
    sgd = DPLogisticRegression(mechanism="dpsgd", accountant="gdp_clt")
    assert sgd._planned_privacy_guarantee() == "approximate"
    assert DPLogisticRegression(epsilon=math.inf)._planned_privacy_guarantee() == "none"
    assert ExpMFlowClassifier(classes=[0, 1])._planned_privacy_guarantee() == "approximate"
    assert check_pipeline_privacy(ExpMFlowClassifier(classes=[0, 1])).privacy_guarantee == (
        "approximate"
    )


def test_an_invalid_candidate_is_refused_before_any_run():
    """It used to raise only when drawn (telling whether it ran, i.e. something of K):
    for some seeds the search finished, for others it raised."""
    X, y = _data(0)
    for seed in range(4):
        search = DPGridSearchCV(
            DPILPClassifier(binarize=0.0),
            [{"max_clause_length": [1, 2, 3, 4, 5]}, {"max_clause_length": [-1]}],
            scoring=ACC,
            cv=2,
            random_state=seed,
            selection=PrivateSelection(expected_runs=1.5),
        )
        with pytest.raises(ValueError, match="max_clause_length"):
            search.fit(X, y)
