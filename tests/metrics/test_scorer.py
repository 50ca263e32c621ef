"""DP scorers inside scikit-learn model selection, and the spend of a CV / grid search."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import (
    GridSearchCV,
    KFold,
    ShuffleSplit,
    cross_val_score,
    cross_validate,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdp.metrics import (
    DPScorer,
    cv_privacy_spend,
    dp_average_precision_score,
    dp_roc_auc_score,
    make_dp_scorer,
)

INF = math.inf


@pytest.fixture(scope="module")
def data():
    X, y = load_breast_cancer(return_X_y=True)
    return X, y


def model(C=1.0):
    return make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=500))


CV = KFold(3, shuffle=True, random_state=0)


@pytest.mark.parametrize(
    ("dp_metric", "sk_metric"),
    [("roc_auc", "roc_auc"), ("average_precision", "average_precision"), ("accuracy", "accuracy")],
)
def test_exact_scorer_matches_sklearn_in_cross_val_score(data, dp_metric, sk_metric):
    """At epsilon=inf the scorer is the exact metric: it reproduces sklearn's scorer (no ties)."""
    X, y = data
    ours = cross_val_score(model(), X, y, cv=CV, scoring=make_dp_scorer(dp_metric, epsilon=INF))
    ref = cross_val_score(model(), X, y, cv=CV, scoring=sk_metric)
    np.testing.assert_allclose(ours, ref, atol=1e-12)


@pytest.mark.parametrize(
    ("dp_metric", "sk_metric"), [("roc_auc", "roc_auc"), ("average_precision", "average_precision")]
)
def test_exact_scorer_matches_sklearn_with_tied_scores(dp_metric, sk_metric):
    """A model with few distinct decision values (binary features): the default scorer
    at epsilon=inf still reproduces sklearn's, and ``ties`` is passed on to the metric."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (600, 2)).astype(float)
    y = (rng.random(600) < 0.2 + 0.3 * X[:, 0] + 0.2 * X[:, 1]).astype(int)
    ours = cross_val_score(
        LogisticRegression(), X, y, cv=CV, scoring=make_dp_scorer(dp_metric, epsilon=INF)
    )
    ref = cross_val_score(LogisticRegression(), X, y, cv=CV, scoring=sk_metric)
    np.testing.assert_allclose(ours, ref, atol=1e-12)
    pessimistic = cross_val_score(
        LogisticRegression(),
        X,
        y,
        cv=CV,
        scoring=make_dp_scorer(dp_metric, epsilon=INF, ties="pessimistic"),
    )
    assert np.all(pessimistic < ref - 0.01)


def test_dict_of_scorers_in_cross_validate(data):
    X, y = data
    scoring = {
        "auc": make_dp_scorer("roc_auc", epsilon=1.0, delta=1e-4, random_state=0),
        "ap": make_dp_scorer(dp_average_precision_score, epsilon=1.0, random_state=0),
        "acc": make_dp_scorer("accuracy", epsilon=1.0, random_state=0),
    }
    res = cross_validate(model(), X, y, cv=CV, scoring=scoring)
    for key in ("test_auc", "test_ap", "test_acc"):
        assert res[key].shape == (3,)
        assert np.all((res[key] >= 0) & (res[key] <= 1))
    exact = cross_val_score(model(), X, y, cv=CV, scoring="roc_auc")
    # N ~ 190 per fold: the smooth-sensitivity noise at epsilon=1, delta=1e-4 has median
    # |error| ~ 0.045 and P(|error| > 0.4) ~ 0.004 (measured over 2000 draws)
    assert np.all(np.abs(res["test_auc"] - exact) < 0.4)


def test_grid_search_with_dp_scorer(data):
    X, y = data
    grid = {"logisticregression__C": [1e-4, 1.0]}
    scorer = make_dp_scorer("roc_auc", epsilon=INF)
    gs = GridSearchCV(model(), grid, cv=CV, scoring=scorer).fit(X, y)
    ref = GridSearchCV(model(), grid, cv=CV, scoring="roc_auc").fit(X, y)
    assert gs.best_params_ == ref.best_params_
    np.testing.assert_allclose(
        gs.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"]
    )
    gs_dp = GridSearchCV(
        model(), grid, cv=CV, scoring=make_dp_scorer("roc_auc", epsilon=2.0, delta=1e-4)
    ).fit(X, y)
    assert np.all(np.isfinite(gs_dp.cv_results_["mean_test_score"]))


class _ProbaOnly(ClassifierMixin, BaseEstimator):
    """A classifier with predict_proba but no decision_function."""

    def fit(self, X, y):
        self.model_ = model().fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, X):
        return self.model_.predict_proba(X)

    def predict(self, X):
        return self.model_.predict(X)


def test_response_methods_and_pos_label(data):
    X, y = data
    est = model().fit(X, y)
    dec = est.decision_function(X)
    proba = est.predict_proba(X)[:, 1]
    auc_dec = make_dp_scorer("roc_auc", epsilon=INF)(est, X, y)
    assert auc_dec == dp_roc_auc_score(y, dec, epsilon=INF)
    auc_proba = make_dp_scorer("roc_auc", epsilon=INF, response_method="predict_proba")(est, X, y)
    assert auc_proba == dp_roc_auc_score(y, proba, epsilon=INF)
    assert make_dp_scorer("roc_auc", epsilon=INF)(_ProbaOnly().fit(X, y), X, y) == auc_proba
    # positive class = classes_[0]: the decision function is negated, labels flipped
    neg = make_dp_scorer("roc_auc", epsilon=INF, pos_label=0)(est, X, y)
    assert neg == dp_roc_auc_score(1 - y, -dec, epsilon=INF)
    neg_p = make_dp_scorer("roc_auc", epsilon=INF, pos_label=0, response_method="predict_proba")
    assert neg_p(est, X, y) == dp_roc_auc_score(
        y, est.predict_proba(X)[:, 0], epsilon=INF, pos_label=0
    )
    with pytest.raises(ValueError):
        make_dp_scorer("roc_auc", epsilon=INF, pos_label=7)(est, X, y)


def test_scorer_rejects_what_it_cannot_do(data):
    X, y = data
    est = model().fit(X, y)
    scorer = make_dp_scorer("roc_auc", epsilon=1.0)
    with pytest.raises(ValueError, match="sample_weight"):
        scorer(est, X, y, sample_weight=np.ones(len(y)))
    with pytest.raises(ValueError, match="extra score parameters"):
        scorer(est, X, y, strata=np.ones(len(y)))
    with pytest.raises(ValueError, match="groups= needs max_rows_per_group"):
        scorer(est, X, y, groups=np.ones(len(y)))  # no silent per-row bound for patients
    Xi, yi = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="binary"):
        scorer(LogisticRegression(max_iter=500).fit(Xi, yi), Xi, yi)
    with pytest.raises(ValueError, match="metric"):
        make_dp_scorer("f1", epsilon=1.0)
    with pytest.raises(ValueError, match="response_method"):
        make_dp_scorer(lambda yt, ys, **kw: 0.0, epsilon=1.0)
    with pytest.raises(ValueError, match="response_method"):
        make_dp_scorer("roc_auc", epsilon=1.0, response_method="transform")
    with pytest.raises(ValueError):
        make_dp_scorer("roc_auc", epsilon=0.0)


def test_scorer_pickles_and_reproduces(data):
    X, y = data
    est = model().fit(X, y)
    scorer = make_dp_scorer("roc_auc", epsilon=0.5, random_state=11)
    assert isinstance(scorer, DPScorer) and "epsilon=0.5" in repr(scorer)
    copy = pickle.loads(pickle.dumps(scorer))
    assert copy(est, X, y) == scorer(est, X, y)
    # a different subset of rows gets different noise (no noise reuse across calls)
    a = scorer(est, X[:300], y[:300]) - dp_roc_auc_score(
        y[:300], est.decision_function(X[:300]), epsilon=INF
    )
    b = scorer(est, X[300:], y[300:]) - dp_roc_auc_score(
        y[300:], est.decision_function(X[300:]), epsilon=INF
    )
    assert a != b
    # random_state=None: fresh noise on every call (a weaker model, so that clamping at 1
    # does not make the draws coincide)
    weak = model().fit(X[:, [1, 4]], y)
    fresh = make_dp_scorer("roc_auc", epsilon=0.5)
    assert len({fresh(weak, X[:, [1, 4]], y) for _ in range(5)}) > 1


# ------------------------------------------------------------------- privacy accounting


class _IdAware(ClassifierMixin, BaseEstimator):
    """Logistic regression that ignores column 0 (a row id used to count scorer calls)."""

    def __init__(self, C=1.0):
        self.C = C

    def fit(self, X, y):
        self.model_ = model(self.C).fit(X[:, 1:], y)
        self.classes_ = self.model_.classes_
        return self

    def decision_function(self, X):
        return self.model_.decision_function(X[:, 1:])

    def predict(self, X):
        return self.model_.predict(X[:, 1:])


@pytest.mark.parametrize(
    ("cv", "disjoint", "n_splits", "train_score"),
    [
        (KFold(4, shuffle=True, random_state=1), True, 4, False),
        (KFold(4, shuffle=True, random_state=1), True, 4, True),
        (ShuffleSplit(3, test_size=0.5, random_state=1), False, 3, False),
    ],
)
def test_cv_privacy_spend_matches_counted_calls(data, cv, disjoint, n_splits, train_score):
    """The formula equals eps x (largest number of scorer calls any row took part in)."""
    X, y = data
    Xid = np.c_[np.arange(len(y)), X]
    calls = np.zeros(len(y), dtype=int)
    inner = make_dp_scorer("roc_auc", epsilon=0.25, delta=1e-6, random_state=0)

    def counting_scorer(estimator, X, y):
        np.add.at(calls, X[:, 0].astype(int), 1)
        return inner(estimator, X, y)

    grid = {"C": [0.01, 0.1, 1.0]}
    GridSearchCV(
        _IdAware(), grid, cv=cv, scoring=counting_scorer, return_train_score=train_score
    ).fit(Xid, y)
    eps, delta = cv_privacy_spend(
        epsilon=0.25,
        delta=1e-6,
        n_splits=n_splits,
        n_candidates=3,
        disjoint_folds=disjoint,
        return_train_score=train_score,
    )
    assert eps == pytest.approx(0.25 * calls.max())
    assert delta == pytest.approx(1e-6 * calls.max())
    if disjoint and not train_score:
        assert np.all(calls == 3)  # parallel over folds, sequential over candidates


def test_cv_privacy_spend_formula():
    assert cv_privacy_spend(epsilon=1.0, n_splits=5) == (1.0, 0.0)
    assert cv_privacy_spend(epsilon=[0.5, 0.25], delta=[1e-6, 0.0], n_splits=5, n_candidates=4) == (
        3.0,
        4e-6,
    )
    assert cv_privacy_spend(epsilon=0.1, n_splits=5, n_repeats=3)[0] == pytest.approx(0.3)
    # with a DP estimator: each row is in 4 of 5 training sets, plus the refit (the
    # default, as GridSearchCV's); an add/remove fit epsilon costs 2x under replace-one
    eps, _ = cv_privacy_spend(epsilon=0.1, n_splits=5, n_candidates=2, fit_epsilon=1.0)
    assert eps == pytest.approx(2 * (0.1 + 4 * 2.0) + 2.0)
    eps, _ = cv_privacy_spend(
        epsilon=0.1, n_splits=5, n_candidates=2, fit_epsilon=1.0, fit_relation="replace"
    )
    assert eps == pytest.approx(2 * (0.1 + 4 * 1.0) + 1.0)
    eps, _ = cv_privacy_spend(epsilon=0.1, n_splits=5, fit_epsilon=1.0, refit=False)
    assert eps == pytest.approx(0.1 + 4 * 2.0)
    for bad in (
        {"n_splits": 0},
        {"n_candidates": 0},
        {"n_repeats": 1.5},
        {"epsilon": -1.0},
        {"epsilon": [1.0, 1.0], "delta": [0.0, 0.0, 0.0]},
        {"fit_epsilon": -1.0},
    ):
        kw = {"epsilon": 1.0, "n_splits": 3, **bad}
        with pytest.raises(ValueError):
            cv_privacy_spend(**kw)


def test_scorer_privacy_spend_shorthand():
    scorer = make_dp_scorer("roc_auc", epsilon=0.2, delta=1e-7)
    assert scorer.privacy_spend(n_splits=5, n_candidates=3) == cv_privacy_spend(
        epsilon=0.2, delta=1e-7, n_splits=5, n_candidates=3
    )


def test_ledger_records_calls_in_process_and_workers_need_the_helper(data):
    """n_jobs=1: the user's ledger sees every call (a sequential, conservative total).

    n_jobs=2: sklearn pickles the scorer into joblib workers, whose ledger copies refuse
    to spend (the run stops: see tests/privacy/test_attack_ledger_cv.py); without a
    ledger the scores are the same whatever n_jobs is, and cv_privacy_spend gives the
    (tighter, parallel-over-folds) total either way.
    """
    from skdp.accounting import PrivacyLedger

    X, y = data
    grid = {"logisticregression__C": [0.1, 1.0]}
    ledger1 = PrivacyLedger()
    scorer = make_dp_scorer("roc_auc", epsilon=0.5, random_state=5, ledger=ledger1)
    scores1 = GridSearchCV(model(), grid, cv=CV, scoring=scorer, n_jobs=1).fit(X, y)
    scorer2 = make_dp_scorer("roc_auc", epsilon=0.5, random_state=5)
    scores2 = GridSearchCV(model(), grid, cv=CV, scoring=scorer2, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(
        scores1.cv_results_["split0_test_score"], scores2.cv_results_["split0_test_score"]
    )
    assert len(ledger1.entries) == 6  # 2 candidates x 3 folds
    assert ledger1.epsilon_spent == pytest.approx(3.0)
    eps, delta = scorer.privacy_spend(n_splits=3, n_candidates=2)
    assert (eps, delta) == (1.0, 0.0)
    assert eps <= ledger1.epsilon_spent
    # the recommended pattern: charge the run up front
    up_front = PrivacyLedger(epsilon_budget=1.0)
    up_front.spend(eps, delta, label="grid search")
    assert up_front.epsilon_spent == pytest.approx(1.0)


def test_ledger_budget_is_enforced_before_release(data):
    from skdp.accounting import PrivacyLedger
    from skdp.exceptions import BudgetExceededError, PrivacySpendAborted

    X, y = data
    est = model().fit(X, y)
    ledger = PrivacyLedger(epsilon_budget=1.0)
    scorer = make_dp_scorer("roc_auc", epsilon=0.6, ledger=ledger, random_state=0)
    scorer(est, X, y)
    with pytest.raises(PrivacySpendAborted) as info:
        scorer(est, X, y)
    assert isinstance(info.value.error, BudgetExceededError)
    assert isinstance(info.value.__cause__, BudgetExceededError)
    assert ledger.epsilon_spent == pytest.approx(0.6)
    # the plain metric functions keep raising the ledger's own error
    with pytest.raises(BudgetExceededError):
        dp_roc_auc_score(y, est.decision_function(X), epsilon=0.6, ledger=ledger)


@pytest.mark.parametrize("n_candidates", [1, 4])
@pytest.mark.parametrize("n_splits", [2, 5])
def test_cv_privacy_spend_agrees_with_accounting_composition(n_candidates, n_splits):
    """Disjoint folds: parallel over folds, then sequential over candidates and scorers."""
    from skdp.accounting import compose_parallel, compose_sequential

    per_call = [(0.3, 1e-7), (0.1, 0.0)]  # two scorers in a dict
    per_fold = compose_sequential(per_call)
    per_candidate = compose_parallel([per_fold] * n_splits)
    expected = compose_sequential([per_candidate] * n_candidates)
    got = cv_privacy_spend(
        epsilon=[e for e, _ in per_call],
        delta=[d for _, d in per_call],
        n_splits=n_splits,
        n_candidates=n_candidates,
    )
    assert got == pytest.approx(expected)
    # overlapping test sets: every split composes sequentially
    expected_seq = compose_sequential([per_fold] * (n_splits * n_candidates))
    got_seq = cv_privacy_spend(
        epsilon=[e for e, _ in per_call],
        delta=[d for _, d in per_call],
        n_splits=n_splits,
        n_candidates=n_candidates,
        disjoint_folds=False,
    )
    assert got_seq == pytest.approx(expected_seq)


@pytest.mark.parametrize("error_score", ["raise", np.nan])
def test_budget_error_propagates_from_grid_search(data, error_score):
    from skdp.accounting import PrivacyLedger
    from skdp.exceptions import PrivacySpendAborted

    X, y = data
    ledger = PrivacyLedger(epsilon_budget=1.0)
    scorer = make_dp_scorer("roc_auc", epsilon=0.4, ledger=ledger, random_state=0)
    grid = {"logisticregression__C": [0.1, 1.0]}
    with pytest.raises(PrivacySpendAborted, match="budget exceeded"):
        GridSearchCV(model(), grid, cv=CV, scoring=scorer, error_score=error_score).fit(X, y)
    assert ledger.epsilon_spent <= 1.0
