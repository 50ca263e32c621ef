"""DPGridSearchCV under one total (issue 31 item 4): the split rule, the reported total,
the tuning warning, the refusals, the data independence of the plan, and the held-out
score that is not biased upward."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from skdp.accounting import PrivacyLedger
from skdp.base import DPEstimatorMixin
from skdp.exceptions import PrivacyAdvisoryWarning, TuningBudgetWarning
from skdp.ilp import DPILPClassifier
from skdp.metrics import make_dp_scorer
from skdp.model_selection import DPGridSearchCV, PrivateSelection
from skdp.model_selection._holdout import holdout_mask
from skdp.pipeline import make_dp_pipeline
from skdp.preprocessing import DPSimpleImputer, PublicBoundsScaler


class BudgetRecorder(DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Test double: records the ``(epsilon, delta)`` of every fit and its training ids.

    Column 0 holds row ids; predicts ``X[:, column] > 0``; ``shift`` moves the threshold
    (a hyperparameter to tune).
    """

    fits: list = []

    def __init__(self, epsilon=1.0, delta=0.0, column=1, shift=0.0):
        self.epsilon = epsilon
        self.delta = delta
        self.column = column
        self.shift = shift

    def fit(self, X, y):
        X = np.asarray(X, dtype=float)
        type(self).fits.append((self.epsilon, self.delta, frozenset(X[:, 0].astype(int))))
        self.classes_ = np.array([0, 1])
        self.n_features_in_ = X.shape[1]
        return self._record_privacy_spent(self.epsilon, self.delta)

    def decision_function(self, X):
        return np.asarray(X, dtype=float)[:, self.column] - self.shift

    def predict(self, X):
        return (self.decision_function(X) > 0).astype(int)


class FixedSpend(BudgetRecorder):
    """Declares a spend that does not follow its epsilon parameter."""

    def _planned_privacy_spend(self):
        return 0.5, 0.0


SCORED = []


def recording_metric(y_true, y_score, *, epsilon, delta, random_state, ledger):
    """A 'DP metric' that records the budget of each call (accuracy of the sign)."""
    SCORED.append((epsilon, delta))
    return float(np.mean((np.asarray(y_score) > 0) == np.asarray(y_true)))


def recording_scorer(epsilon=1.0, delta=0.0):
    return make_dp_scorer(
        recording_metric, epsilon=epsilon, delta=delta, response_method="decision_function"
    )


@pytest.fixture(autouse=True)
def _clear():
    BudgetRecorder.fits = []
    SCORED.clear()


def _data(seed=0, n=200):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.arange(n), rng.normal(size=n), rng.normal(size=n)])
    y = (X[:, 1] + rng.normal(0, 0.5, n) > 0).astype(int)
    return X, y


def _all_close(values, target, rel=1e-12):
    return len(values) > 0 and all(v == pytest.approx(target, rel=rel) for v in values)


def _quiet(search, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TuningBudgetWarning)
        return search.fit(X, y)


# ------------------------------------------------------------------ the hand counts
def test_grid_total_is_split_by_the_rule_and_reported_exactly():
    X, y = _data()
    ledger = PrivacyLedger(epsilon_budget=3.0)
    search = DPGridSearchCV(
        BudgetRecorder(),
        {"shift": [-0.5, 0.5]},
        scoring=recording_scorer(),
        epsilon=3.0,
        cv=3,
        ledger=ledger,
        random_state=0,
    )
    _quiet(search, X, y)
    # C = 2 candidates, k = 3 folds, w = 1, refit: T = 2 e [C (w + k - 1) + 1] = 14 e
    e = 3.0 / 14.0
    s = 2.0 * e
    # by hand, replace one row: per candidate one test fold (s) and k - 1 = 2 fits (2 e
    # each); the refit 2 e
    parts = {"scorer_calls": 2 * s, "cv_fits": 2 * 2 * (2 * e), "refit": 2 * e}
    assert math.fsum(parts.values()) == pytest.approx(3.0)
    for key, value in parts.items():
        assert search.privacy_breakdown_[key][0] == pytest.approx(value, rel=1e-12)
    assert math.fsum(v[0] for v in search.privacy_breakdown_.values()) == pytest.approx(
        search.epsilon_spent_, rel=1e-12
    )
    assert search.epsilon_spent_ <= 3.0
    assert search.epsilon_spent_ == pytest.approx(3.0, rel=1e-12)
    assert search.delta_spent_ == 0.0
    assert ledger.epsilon_spent == search.epsilon_spent_ and len(ledger) == 1
    # every fit (6 fold fits and the refit) ran at e, every scorer call at s
    assert len(BudgetRecorder.fits) == 7
    assert _all_close([f[0] for f in BudgetRecorder.fits], e)
    assert {f[1] for f in BudgetRecorder.fits} == {0.0}
    assert len(SCORED) == 6
    assert all(eps == pytest.approx(s, rel=1e-12) and dl == 0.0 for eps, dl in SCORED)
    assert search.best_estimator_.epsilon == pytest.approx(e, rel=1e-12)
    assert search.scorer_.epsilon == pytest.approx(s, rel=1e-12)
    assert search.privacy_plan_ == search.privacy_plan()


@pytest.mark.parametrize("eta", [0.0, 1.0])
def test_private_selection_total_is_split_by_the_rule(eta):
    X, y = _data()
    search = DPGridSearchCV(
        BudgetRecorder(),
        {"shift": [-0.5, 0.0, 0.5]},
        scoring=recording_scorer(),
        epsilon=4.0,
        cv=4,
        scoring_weight=0.5,
        random_state=0,
        selection=PrivateSelection(eta=eta),
    )
    _quiet(search, X, y)
    # T = (2 + eta) (s + (k - 1) 2 e) + 2 e with s = 2 w e = e: e = 4 / (2 [(2 + eta) 3.5 + 1])
    e = 4.0 / (2 * ((2 + eta) * 3.5 + 1))
    assert search.epsilon_spent_ <= 4.0
    assert search.epsilon_spent_ == pytest.approx(4.0, rel=1e-12)
    sel, refit = search.privacy_breakdown_["private_selection"], search.privacy_breakdown_["refit"]
    assert sel[0] == pytest.approx((2 + eta) * (e + 3 * 2 * e), rel=1e-12)
    assert refit[0] == pytest.approx(2 * e, rel=1e-12)
    assert sel[0] + refit[0] == pytest.approx(search.epsilon_spent_, rel=1e-12)
    assert _all_close([f[0] for f in BudgetRecorder.fits], e)
    assert _all_close([eps for eps, _ in SCORED], e)


def test_no_refit_leaves_the_refit_share_to_the_search():
    X, y = _data()
    search = DPGridSearchCV(
        BudgetRecorder(),
        {"shift": [-0.5, 0.5]},
        scoring=recording_scorer(),
        epsilon=2.0,
        cv=2,
        refit=False,
    ).fit(X, y)
    e = 2.0 / (2 * 2 * (1 + 1))  # T = 2 e C (w + k - 1)
    assert search.privacy_breakdown_["refit"] == (0.0, 0.0)
    assert _all_close([f[0] for f in BudgetRecorder.fits], e)
    assert search.epsilon_spent_ == pytest.approx(2.0, rel=1e-12)


def test_delta_total_is_split_in_replace_one_units():
    X, y = _data()
    T, D = 2.0, 1e-5
    search = DPGridSearchCV(
        BudgetRecorder(delta=1e-7),
        {"shift": [-0.5, 0.5]},
        scoring=recording_scorer(delta=1e-9),
        epsilon=T,
        delta=D,
        cv=3,
    )
    _quiet(search, X, y)
    e = T / 14.0
    # units: per candidate one scoring (w = 1) and 2 fits, plus the refit: 2 * 3 + 1 = 7
    u = D / 7.0
    d_fit = u / (1.0 + math.exp(e))  # add/remove delta of a fit
    assert search.delta_spent_ <= D
    assert search.delta_spent_ == pytest.approx(D, rel=1e-9)
    assert _all_close([f[1] for f in BudgetRecorder.fits], d_fit, rel=1e-9)
    assert _all_close([dl for _, dl in SCORED], u, rel=1e-9)
    parts = search.privacy_breakdown_
    assert parts["scorer_calls"][1] + parts["cv_fits"][1] + parts["refit"][1] == pytest.approx(
        search.delta_spent_, rel=1e-9
    )


def test_pipeline_steps_share_the_fit_budget_by_their_declared_epsilons():
    pipe = make_dp_pipeline(
        DPSimpleImputer(epsilon=0.2, bounds=(-5, 5)), BudgetRecorder(epsilon=0.8)
    )
    search = DPGridSearchCV(
        pipe, {"budgetrecorder__shift": [0.0, 1.0]}, scoring=recording_scorer(), epsilon=3.0, cv=3
    )
    plan = search.privacy_plan()
    e = 3.0 / 14.0
    assert [b[0] for b in plan["fit_budgets"]] == [pytest.approx(e, rel=1e-12)] * 2
    X, y = _data()
    _quiet(search, X, y)
    best = search.best_estimator_
    assert best.named_steps["dpsimpleimputer"].epsilon == pytest.approx(0.2 * e, rel=1e-12)
    assert best.named_steps["budgetrecorder"].epsilon == pytest.approx(0.8 * e, rel=1e-12)
    assert best.epsilon_spent_ == pytest.approx(e, rel=1e-12)
    assert search.epsilon_spent_ <= 3.0


def test_several_scorers_share_the_scoring_budget_by_their_declared_epsilons():
    X, y = _data()
    search = DPGridSearchCV(
        BudgetRecorder(),
        {"shift": [-0.5, 0.5]},
        scoring={"a": recording_scorer(1.0), "b": recording_scorer(3.0)},
        refit="a",
        epsilon=3.0,
        cv=3,
    )
    _quiet(search, X, y)
    s = 2 * 3.0 / 14.0
    assert search.scorer_["a"].epsilon == pytest.approx(s / 4, rel=1e-12)
    assert search.scorer_["b"].epsilon == pytest.approx(3 * s / 4, rel=1e-12)
    assert search.epsilon_spent_ == pytest.approx(3.0, rel=1e-12)


def test_the_total_mode_with_a_real_estimator_and_the_docstring_numbers():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(1500, 4))
    y = X[:, 0] & X[:, 1]
    ledger = PrivacyLedger(epsilon_budget=30.0)
    search = DPGridSearchCV(
        DPILPClassifier(random_state=0),
        {"max_clause_length": [1, 2]},
        scoring=make_dp_scorer("accuracy", epsilon=1.0, random_state=0),
        epsilon=30.0,
        cv=5,
        ledger=ledger,
        random_state=0,
        holdout=0.2,
    ).fit(X, y)
    e = 30.0 / (2 * (2 * 5 + 1))
    assert search.best_estimator_.epsilon == pytest.approx(e)
    assert search.best_estimator_.epsilon_spent_ == pytest.approx(e)
    assert search.epsilon_spent_ <= 30.0 and ledger.epsilon_spent == search.epsilon_spent_
    assert search.best_params_ == {"max_clause_length": 2}
    assert search.best_score_unbiased_ > 0.9


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize(
    "grid",
    [{"epsilon": [0.5, 1.0]}, {"delta": [0.0, 1e-6]}, [{"shift": [0.0]}, {"epsilon": [1.0]}]],
)
def test_a_grid_over_the_budget_is_refused_under_a_total(grid):
    X, y = _data()
    ledger = PrivacyLedger(epsilon_budget=10.0)
    search = DPGridSearchCV(
        BudgetRecorder(), grid, scoring=recording_scorer(), epsilon=3.0, ledger=ledger
    )
    with pytest.raises(ValueError, match="sets every fit's epsilon/delta itself"):
        search.fit(X, y)
    assert BudgetRecorder.fits == [] and len(ledger) == 0


def test_a_grid_over_a_pipeline_step_budget_is_refused_under_a_total():
    pipe = make_dp_pipeline(PublicBoundsScaler(bounds=(-5, 5)), BudgetRecorder())
    search = DPGridSearchCV(
        pipe, {"budgetrecorder__epsilon": [0.5, 1.0]}, scoring=recording_scorer(), epsilon=3.0
    )
    with pytest.raises(ValueError, match="budgetrecorder__epsilon"):
        search.privacy_plan()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"epsilon": 0.0}, ValueError, "finite and > 0"),
        ({"epsilon": -1.0}, ValueError, "finite and > 0"),
        ({"epsilon": math.inf}, ValueError, "finite and > 0"),
        ({"epsilon": math.nan}, ValueError, "NaN"),
        ({"epsilon": "3"}, TypeError, "real number"),
        ({"epsilon": True}, TypeError, "real number"),
        ({"delta": 1e-5}, ValueError, "give epsilon="),
        ({"epsilon": 3.0, "delta": 1.0}, ValueError, r"\[0, 1\)"),
        ({"epsilon": 3.0, "delta": -1e-9}, ValueError, r"\[0, 1\)"),
        ({"epsilon": 3.0, "scoring_weight": 0.0}, ValueError, "scoring_weight"),
        ({"epsilon": 3.0, "scoring_weight": math.inf}, ValueError, "scoring_weight"),
        ({"scoring_weight": -1.0}, ValueError, "scoring_weight"),
        ({"holdout": 0.0}, ValueError, "holdout"),
        ({"holdout": 0}, ValueError, "holdout"),
        ({"holdout": 10**30}, ValueError, "holdout"),
        ({"holdout": 1.0}, ValueError, "holdout"),
        ({"holdout": "0.2"}, TypeError, "holdout"),
        ({"holdout": True}, TypeError, "holdout"),
        ({"holdout": 0.2, "refit": False}, ValueError, "needs refit"),
    ],
)
def test_bad_total_parameters_are_refused_before_anything_runs(kwargs, error, match):
    X, y = _data()
    ledger = PrivacyLedger(epsilon_budget=100.0)
    search = DPGridSearchCV(
        BudgetRecorder(), {"shift": [0.0]}, scoring=recording_scorer(), ledger=ledger, **kwargs
    )
    with pytest.raises(error, match=match):
        search.fit(X, y)
    assert BudgetRecorder.fits == [] and len(ledger) == 0


def test_a_holdout_that_leaves_too_few_rows_is_refused():
    X, y = _data(n=20)
    search = DPGridSearchCV(
        BudgetRecorder(), {"shift": [0.0]}, scoring=recording_scorer(), cv=5, holdout=16
    )
    with pytest.raises(ValueError, match="leave at least n_splits=5 rows"):
        search.fit(X, y)
    assert BudgetRecorder.fits == []


def test_a_total_with_delta_declared_needs_delta():
    search = DPGridSearchCV(
        BudgetRecorder(delta=1e-6), {"shift": [0.0]}, scoring=recording_scorer(), epsilon=3.0
    )
    with pytest.raises(ValueError, match="pass delta="):
        search.privacy_plan()
    with pytest.raises(ValueError, match="got 0.0"):
        search.set_params(delta=0.0).privacy_plan()
    scored = DPGridSearchCV(
        BudgetRecorder(), {"shift": [0.0]}, scoring=recording_scorer(delta=1e-9), epsilon=3.0
    )
    with pytest.raises(ValueError, match="a scorer declares delta > 0"):
        scored.privacy_plan()
    private = DPGridSearchCV(
        BudgetRecorder(delta=1e-6),
        {"shift": [0.0]},
        scoring=recording_scorer(),
        epsilon=3.0,
        delta=1e-5,
        selection="private",
    )
    with pytest.raises(ValueError, match="needs pure-DP runs"):
        private.privacy_plan()


def test_a_candidate_whose_spend_does_not_follow_its_epsilon_is_refused():
    search = DPGridSearchCV(FixedSpend(), {"shift": [0.0]}, scoring=recording_scorer(), epsilon=3.0)
    with pytest.raises(ValueError, match="did not give it the planned budget"):
        search.privacy_plan()


def test_a_candidate_without_a_budget_or_with_a_leak_is_refused():
    search = DPGridSearchCV(
        BudgetRecorder(epsilon=0.0), {"shift": [0.0]}, scoring=recording_scorer(), epsilon=3.0
    )
    with pytest.raises(ValueError, match="no DP step with an epsilon"):
        search.privacy_plan()
    from sklearn.preprocessing import StandardScaler

    leaky = DPGridSearchCV(
        make_dp_pipeline(StandardScaler(), BudgetRecorder()),
        {"budgetrecorder__shift": [0.0]},
        scoring=recording_scorer(),
        epsilon=3.0,
        allow_nonprivate=True,
    )
    with pytest.raises(ValueError, match="allow_nonprivate=True needs epsilon=None"):
        leaky.privacy_plan()


# ------------------------------------------------------------------ the warning
def _grid(n_candidates, cv, **kw):
    return DPGridSearchCV(
        BudgetRecorder(),
        {"shift": list(np.linspace(-1, 1, n_candidates))},
        scoring=recording_scorer(),
        cv=cv,
        **kw,
    )


def test_tuning_warning_is_an_advisory_user_warning():
    assert issubclass(TuningBudgetWarning, PrivacyAdvisoryWarning)
    assert issubclass(TuningBudgetWarning, UserWarning)


@pytest.mark.parametrize(
    ("n_candidates", "cv", "total", "warns"),
    [
        (4, 5, 3.0, True),  # e = 3 / 42 = 0.071: 4.8 % of T / 2 = 1.5, and below 1
        (4, 3, 1.0, True),  # e = 1 / 26 = 0.038: 7.7 % of 0.5
        (4, 5, 100.0, False),  # e = 100 / 42 = 2.4: a small share, but not a small budget
        (1, 2, 1.0, False),  # e = 1 / 6: a third of T / 2
        (2, 3, 1.0, False),  # e = 1 / 14: 14 % of T / 2
    ],
)
def test_tuning_warning_follows_the_documented_rule(n_candidates, cv, total, warns):
    X, y = _data()
    search = _grid(n_candidates, cv, epsilon=total)
    e = search.privacy_plan()["refit_epsilon"]
    assert (e / (total / 2) < 0.1 and e < 1.0) == warns  # the rule, from the plan alone
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        search.fit(X, y)
    hits = [w for w in got if issubclass(w.category, TuningBudgetWarning)]
    assert len(hits) == int(warns)
    if hits:
        assert "When tuning pays" in str(hits[0].message)


def test_tuning_warning_depends_on_public_quantities_only():
    """Same parameters, very different data: the same warning, word for word."""
    messages = []
    for seed in range(3):
        X, y = _data(seed, n=100 + 50 * seed)
        if seed == 2:
            y = 1 - y
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            _grid(4, 5, epsilon=3.0).fit(X, y)
        messages.append([str(w.message) for w in got if w.category is TuningBudgetWarning])
    assert messages[0] == messages[1] == messages[2] and len(messages[0]) == 1


def test_tuning_warning_in_per_candidate_mode_too():
    X, y = _data()
    with pytest.warns(TuningBudgetWarning, match="epsilon=0.05"):
        DPGridSearchCV(
            BudgetRecorder(epsilon=0.05),
            {"shift": [-1.0, 0.0, 1.0, 2.0]},
            scoring=recording_scorer(0.1),
            cv=5,
        ).fit(X, y)


# ------------------------------------------------------------------ the plan is public
@pytest.mark.parametrize("selection", ["grid", "private"])
def test_attack_the_split_does_not_depend_on_the_data(selection):
    """An adversary who sees every fit's and scorer call's budget learns nothing: on a
    data set, on its neighbour (one row replaced) and on an unrelated table the search
    spends exactly the budgets of privacy_plan(), computed before any data exist."""
    kw = dict(
        scoring=recording_scorer(),
        epsilon=2.5,
        cv=4,
        random_state=0,
        selection=PrivateSelection(eta=0.0) if selection == "private" else "grid",
        holdout=0.25,
    )
    grid = {"shift": [-1.0, 0.0, 0.5, 1.0]}
    planned = DPGridSearchCV(BudgetRecorder(), grid, **kw).privacy_plan()
    X, y = _data(0)
    X_nb, y_nb = X.copy(), y.copy()
    X_nb[7, 1:], y_nb[7] = 1e3, 1 - y_nb[7]  # the neighbour: row 7 replaced
    rng = np.random.default_rng(9)
    X_far = np.column_stack([np.arange(200), rng.uniform(-9, 9, (200, 2))])
    y_far = np.zeros(200, dtype=int)
    y_far[::3] = 1
    seen = []
    for A, b in ((X, y), (X_nb, y_nb), (X_far, y_far)):
        BudgetRecorder.fits, SCORED[:] = [], []
        search = _quiet(DPGridSearchCV(BudgetRecorder(), grid, **kw), A, b)
        seen.append(
            (
                {f[:2] for f in BudgetRecorder.fits},
                set(SCORED),
                search.privacy_plan_,
                search.privacy_breakdown_,
                search.epsilon_spent_,
            )
        )
        assert search.privacy_plan_ == planned
    assert seen[0] == seen[1] == seen[2]
    e = planned["fit_budgets"][0][0]
    assert seen[0][0] == {(e, 0.0)}
    # the held-out score is the one call at a larger budget: the selection's total
    assert seen[0][1] == {planned["scorer_budgets"]["score"], (planned["epsilon"], 0.0)}


def test_holdout_rows_are_chosen_by_a_key_and_never_reach_a_fit():
    X, y = _data(0, n=200)
    search = _quiet(
        DPGridSearchCV(
            BudgetRecorder(),
            {"shift": [-0.5, 0.5]},
            scoring=recording_scorer(),
            epsilon=2.0,
            cv=4,
            random_state=3,
            holdout=0.2,
        ),
        X,
        y,
    )
    held = holdout_mask(200, 40, 3)
    assert search.n_holdout_ == 40 == held.sum()
    ids = set(np.flatnonzero(held).tolist())
    assert all(not (ids & f[2]) for f in BudgetRecorder.fits)  # no fit saw a held-out row
    assert BudgetRecorder.fits[-1][2] == frozenset(range(200)) - ids  # the refit: the rest
    # the split depends on n, h and the key only (the same for another table of 200 rows)
    assert np.array_equal(held, holdout_mask(200, 40, 3))
    assert not np.array_equal(held, holdout_mask(200, 40, 4))
    # parallel composition: the held-out call costs no more than the selection's total
    assert search.privacy_breakdown_["holdout_score"] == (search.epsilon_spent_, 0.0)
    assert search.epsilon_spent_ == pytest.approx(2.0, rel=1e-12)


def test_best_score_unbiased_is_explained_when_absent():
    X, y = _data()
    search = DPGridSearchCV(BudgetRecorder(), {"shift": [0.0]}, scoring=recording_scorer())
    search.fit(X, y)
    with pytest.raises(AttributeError, match="holdout="):
        search.best_score_unbiased_  # noqa: B018


# ------------------------------------------------------------------ selection bias
@pytest.mark.parametrize("selection", ["grid", "private"])
def test_best_score_is_biased_upward_and_the_held_out_score_is_not(selection):
    """A table where the truth is known: labels independent of the features, so every
    candidate (a threshold on a feature) has accuracy exactly 1/2 on new rows. Over many
    seeds best_score_, the largest of the candidates' noisy mean scores, averages well
    above 1/2; best_score_unbiased_ (one DP score of the winner on held-out rows)
    averages 1/2 within its standard error."""
    best, unbiased = [], []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        n = 300
        X = np.column_stack([np.arange(n), rng.normal(size=(n, 8))])
        y = rng.integers(0, 2, n)
        search = DPGridSearchCV(
            BudgetRecorder(),
            {"column": list(range(1, 9))},
            scoring=make_dp_scorer("accuracy", epsilon=1.0, random_state=seed),
            epsilon=8.0,
            cv=3,
            random_state=seed,
            holdout=0.3,
            selection=PrivateSelection(eta=0.0) if selection == "private" else "grid",
        )
        _quiet(search, X, y)
        best.append(search.best_score_)
        unbiased.append(search.best_score_unbiased_)
    best, unbiased = np.array(best), np.array(unbiased)
    se_best = best.std(ddof=1) / np.sqrt(best.size)
    se_unb = unbiased.std(ddof=1) / np.sqrt(unbiased.size)
    # measured: grid +0.071 (SE 0.006), private +0.029 (SE 0.006); held out +0.007 and
    # +0.012 (SE 0.008)
    assert best.mean() - 0.5 > 4 * se_best  # biased upward
    assert abs(unbiased.mean() - 0.5) < 3 * se_unb  # not biased
    assert best.mean() > unbiased.mean()
