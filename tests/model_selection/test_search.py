"""dp_cross_validate and DPGridSearchCV: data-independent folds, one total, one ledger entry."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import make_scorer, roc_auc_score
from sklearn.model_selection import (
    GroupKFold,
    KFold,
    LeaveOneGroupOut,
    LeaveOneOut,
    PredefinedSplit,
    RepeatedKFold,
    RepeatedStratifiedKFold,
    ShuffleSplit,
    StratifiedGroupKFold,
    StratifiedKFold,
    StratifiedShuffleSplit,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp.accounting import PrivacyLedger
from skdp.base import DPEstimatorMixin
from skdp.exceptions import BudgetExceededError, LedgerCopyError, PrivacyLeakWarning
from skdp.ilp import DPILPClassifier
from skdp.linear_model import DPLinearRegression
from skdp.metrics import cv_privacy_spend, make_dp_scorer
from skdp.model_selection import DPGridSearchCV, PrivateSelection, dp_cross_validate
from skdp.model_selection._folds import assign_folds
from skdp.pipeline import make_dp_pipeline
from skdp.preprocessing import PublicBoundsScaler


class RecordingDPClassifier(DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Test double: a 'DP' classifier that keeps the ids (column 0) of its training rows.

    Scores rows by column 1; spends ``spent`` (default ``epsilon``) and ``delta``.
    """

    n_fits = 0

    def __init__(self, epsilon=1.0, delta=0.0, spent=None, fail=False):
        self.epsilon = epsilon
        self.delta = delta
        self.spent = spent
        self.fail = fail

    def fit(self, X, y):
        if self.fail:
            raise RuntimeError("a fit failed")
        type(self).n_fits += 1
        X = np.asarray(X, dtype=float)
        self.train_ids_ = X[:, 0].astype(int)
        self.classes_ = np.array([0, 1])
        self.n_features_in_ = X.shape[1]
        eps = self.epsilon if self.spent is None else self.spent
        return self._record_privacy_spent(eps, self.delta)

    def decision_function(self, X):
        return np.asarray(X, dtype=float)[:, 1]

    def predict(self, X):
        return (self.decision_function(X) > 0).astype(int)


class _OtherKFold(KFold):
    """A KFold subclass (it could split otherwise): refused."""


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    n = 90
    X = np.column_stack([np.arange(n), rng.normal(size=n)])
    y = (X[:, 1] + rng.normal(0, 0.5, n) > 0).astype(int)
    return X, y


@pytest.fixture
def binary():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, size=(1200, 4))
    y = X[:, 0] & X[:, 1]
    return X, y


ACC = make_dp_scorer("accuracy", epsilon=0.25)


# ------------------------------------------------------------------ the hand count
def test_total_matches_a_hand_count_on_a_small_grid(binary):
    X, y = binary
    ledger = PrivacyLedger(epsilon_budget=100.0)
    search = DPGridSearchCV(
        DPILPClassifier(max_clause_length=2, random_state=0),
        {"epsilon": [0.5, 1.0]},
        scoring=ACC,
        cv=3,
        ledger=ledger,
        random_state=0,
    ).fit(X, y)
    # Replace one row. Per candidate the row is in 1 test fold (one accuracy call, 0.25)
    # and in 3 - 1 = 2 training folds; an add/remove fit of epsilon e costs 2e under
    # replace-one. The refit of the (data-chosen) winner costs the largest, 2 * 1.0.
    scorer_calls = 2 * 0.25
    cv_fits = 2 * (2 * 0.5) + 2 * (2 * 1.0)
    refit = 2 * 1.0
    hand = scorer_calls + cv_fits + refit
    assert hand == 8.5
    assert search.epsilon_spent_ == pytest.approx(hand)
    assert search.delta_spent_ == 0.0
    # the three numbers of issue 21 agree: the search, cv_privacy_spend, the ledger
    planned = cv_privacy_spend(epsilon=0.25, n_splits=3, n_candidates=2, fit_epsilon=[0.5, 1.0])
    assert planned == (search.epsilon_spent_, search.delta_spent_)
    assert ledger.entries == [
        {
            "label": "DPGridSearchCV (replace-one)",
            "epsilon": search.epsilon_spent_,
            "delta": 0.0,
            "unit": "row",
        }
    ]
    parts = search.privacy_breakdown_
    assert parts["scorer_calls"][0] == pytest.approx(scorer_calls)
    assert parts["cv_fits"][0] == pytest.approx(cv_fits)
    assert parts["refit"][0] == pytest.approx(refit)
    assert search.privacy_relation_ == "replace_one"
    assert search.privacy_guarantee_ == "exact"
    # the refit model's own spend is one add/remove fit of the chosen candidate
    assert search.best_estimator_.epsilon_spent_ == search.best_params_["epsilon"]


def test_delta_hand_count(data):
    X, y = data
    scorer = make_dp_scorer("roc_auc", epsilon=0.1, delta=1e-7)
    search = DPGridSearchCV(
        RecordingDPClassifier(delta=1e-6),
        {"epsilon": [0.5, 1.0]},
        scoring=scorer,
        cv=4,
        random_state=0,
    ).fit(X, y)
    conv = [(1 + math.exp(e)) * 1e-6 for e in (0.5, 1.0)]  # group privacy of each fit
    hand_delta = 2 * 1e-7 + 3 * sum(conv) + max(conv)
    hand_eps = 2 * 0.1 + 3 * (1.0 + 2.0) + 2.0
    assert search.epsilon_spent_ == pytest.approx(hand_eps)
    assert search.delta_spent_ == pytest.approx(hand_delta)


def test_dp_cross_validate_total(binary):
    X, y = binary
    ledger = PrivacyLedger()
    res = dp_cross_validate(
        DPILPClassifier(epsilon=1.0, max_clause_length=2, random_state=0),
        X,
        y,
        scoring={"acc": ACC, "auc": make_dp_scorer("roc_auc", epsilon=0.5)},
        cv=4,
        ledger=ledger,
        random_state=0,
    )
    hand = (0.25 + 0.5) + (4 - 1) * 2 * 1.0  # both scorers once, 3 converted fits, no refit
    assert res["epsilon_spent"] == pytest.approx(hand)
    assert cv_privacy_spend(
        epsilon=[0.25, 0.5], n_splits=4, fit_epsilon=1.0, refit=False
    ) == pytest.approx((res["epsilon_spent"], res["delta_spent"]))
    assert ledger.epsilon_spent == pytest.approx(hand) and len(ledger) == 1
    assert res["test_acc"].shape == res["test_auc"].shape == (4,)
    assert res["n_splits"] == 4 and res["privacy_guarantee"] == "exact"
    assert not any("time" in key for key in res)


def test_refit_false_leaves_out_the_refit(data):
    X, y = data
    search = DPGridSearchCV(
        RecordingDPClassifier(), {"epsilon": [0.5, 1.0]}, scoring=ACC, cv=3, refit=False
    ).fit(X, y)
    assert search.epsilon_spent_ == pytest.approx(2 * 0.25 + 2 * (1.0 + 2.0))
    assert not hasattr(search, "best_estimator_") and not hasattr(search, "best_params_")


def test_grid_over_a_pipeline_parameter(binary):
    X, y = binary
    pipe = make_dp_pipeline(
        PublicBoundsScaler(bounds=(0, 1)),
        DPILPClassifier(max_clause_length=2, binarize=0.5, random_state=0),
    )
    search = DPGridSearchCV(
        pipe, {"dpilpclassifier__epsilon": [0.2, 0.4, 0.8]}, scoring=ACC, cv=2
    ).fit(X, y)
    hand = 3 * 0.25 + 1 * 2 * (0.2 + 0.4 + 0.8) + 2 * 0.8
    assert search.epsilon_spent_ == pytest.approx(hand)
    assert search.best_estimator_.epsilon_spent_ == search.best_params_["dpilpclassifier__epsilon"]


# ------------------------------------------------------------------ folds
def test_folds_are_balanced_and_depend_on_n_only():
    folds = assign_folds(103, 5, random_state=3)
    assert sorted(np.bincount(folds).tolist()) == [20, 20, 21, 21, 21]
    assert np.array_equal(folds, assign_folds(103, 5, random_state=3))
    assert not np.array_equal(folds, assign_folds(103, 5, random_state=4))
    # a fresh key on every call by default
    assert not np.array_equal(assign_folds(103, 5), assign_folds(103, 5))


def test_folds_survive_replacing_a_row(data):
    """Replace one row (values and label): every row keeps its fold, and the replacement
    takes the replaced row's place, so it is in one test fold and k - 1 training sets."""
    X, y = data
    X2, y2 = X.copy(), y.copy()
    i = 17
    X2[i, 1], y2[i] = 40.0, 1 - y2[i]  # same id, other values and label
    kw = dict(scoring=ACC, cv=3, random_state=5, return_estimator=True)
    a = dp_cross_validate(RecordingDPClassifier(), X, y, **kw)["estimator"]
    b = dp_cross_validate(RecordingDPClassifier(), X2, y2, **kw)["estimator"]
    for m1, m2 in zip(a, b, strict=True):
        assert np.array_equal(np.sort(m1.train_ids_), np.sort(m2.train_ids_))
    assert sum(i in m.train_ids_ for m in a) == 3 - 1
    # every row is in exactly k - 1 training sets
    counts = np.bincount(np.concatenate([m.train_ids_ for m in a]), minlength=len(y))
    assert np.all(counts == 2)


def test_folds_do_not_read_the_labels_or_the_order_of_values(data):
    X, y = data
    kw = dict(scoring=ACC, cv=3, random_state=5, return_estimator=True)
    a = dp_cross_validate(RecordingDPClassifier(), X, y, **kw)["estimator"]
    X_shuffled = X.copy()
    X_shuffled[:, 1] = X[::-1, 1]
    b = dp_cross_validate(RecordingDPClassifier(), X_shuffled, 1 - y, **kw)["estimator"]
    assert all(np.array_equal(m1.train_ids_, m2.train_ids_) for m1, m2 in zip(a, b, strict=True))


def test_the_fold_key_is_not_stored(data):
    X, y = data
    search = DPGridSearchCV(
        RecordingDPClassifier(), {"epsilon": [1.0]}, scoring=ACC, cv=3, random_state=7
    ).fit(X, y)
    rng_types = (np.random.SeedSequence, np.random.Generator, np.random.BitGenerator)
    assert not any(isinstance(v, rng_types) for v in vars(search).values())
    assert search.random_state == 7
    assert not any("fold" in k for k in vars(search))


# ------------------------------------------------------------------ the cv parameter
def _search(cv=None, **kw):
    return DPGridSearchCV(
        RecordingDPClassifier(), {"epsilon": [0.5, 1.0]}, scoring=ACC, cv=cv, **kw
    )


_READS_Y = [
    StratifiedKFold(3),
    StratifiedKFold(3, shuffle=True, random_state=0),
    RepeatedStratifiedKFold(n_splits=3, n_repeats=2, random_state=0),
    StratifiedShuffleSplit(3, random_state=0),
    StratifiedGroupKFold(3),
]


@pytest.mark.parametrize("cv", _READS_Y, ids=lambda cv: type(cv).__name__)
def test_splitters_that_read_y_are_refused_with_the_reason(cv, data):
    X, y = data
    why = r"reads y, and a split that reads y is a statistic of the private labels"
    ledger = PrivacyLedger(epsilon_budget=100.0)
    with pytest.raises(ValueError, match=why):
        dp_cross_validate(RecordingDPClassifier(), X, y, scoring=ACC, cv=cv, ledger=ledger)
    with pytest.raises(ValueError, match=why):
        _search(cv, ledger=ledger).fit(X, y)
    assert ledger.epsilon_spent == 0 and len(ledger) == 0  # refused before any charge


@pytest.mark.parametrize(
    ("cv", "why"),
    [
        (GroupKFold(3), "reads groups"),
        (LeaveOneGroupOut(), "reads groups"),
        (KFold(3), "contiguous blocks of the row order"),
        (KFold(3, shuffle=True, random_state=np.random.RandomState(0)), "int or None"),
        (KFold(3, shuffle=True, random_state=np.random.default_rng(0)), "int or None"),
        (PredefinedSplit(np.arange(90) % 3), "test_fold array"),
        (ShuffleSplit(3, random_state=0), "each row tested once"),
        (RepeatedKFold(n_splits=3, random_state=0), "each row tested once"),
        (LeaveOneOut(), "each row tested once"),
        (_OtherKFold(3, shuffle=True, random_state=0), "not a subclass of KFold"),
        (list(KFold(3).split(np.zeros((90, 1)))), "precomputed folds"),
        ([(np.arange(60), np.arange(60, 90))], "precomputed folds"),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, str) else "",
)
def test_other_splitters_are_refused_with_the_reason(cv, why, data):
    X, y = data
    with pytest.raises(ValueError, match=why):
        dp_cross_validate(RecordingDPClassifier(), X, y, scoring=ACC, cv=cv)
    with pytest.raises(ValueError, match=why):
        _search(cv).fit(X, y)


@pytest.mark.parametrize("cv", [1, 0, -3])
def test_cv_counts_below_two_are_refused(cv, data):
    X, y = data
    with pytest.raises(ValueError, match="cv must be at least 2"):
        dp_cross_validate(RecordingDPClassifier(), X, y, scoring=ACC, cv=cv)
    with pytest.raises(ValueError, match="cv must be at least 2"):
        _search(cv).fit(X, y)
    with pytest.raises(TypeError, match="cv must be"):
        _search(object()).fit(X, y)


def test_cv_defaults_to_five_folds(data):
    X, y = data
    res = dp_cross_validate(RecordingDPClassifier(), X, y, scoring=ACC, random_state=0)
    assert res["n_splits"] == 5 and res["test_score"].shape == (5,)
    search = _search(random_state=0).fit(X, y)
    assert search.n_splits_ == 5 and "split4_test_score" in search.cv_results_


def test_n_splits_is_a_deprecated_alias_of_cv(data):
    """n_splits warns (FutureWarning) and gives exactly what cv=<int> gives."""
    X, y = data
    scorer = make_dp_scorer("accuracy", epsilon=0.25, random_state=2)
    kw = dict(scoring=scorer, random_state=5, return_estimator=True)
    new = dp_cross_validate(RecordingDPClassifier(), X, y, cv=3, **kw)
    with pytest.warns(FutureWarning, match="n_splits was renamed cv"):
        old = dp_cross_validate(RecordingDPClassifier(), X, y, n_splits=3, **kw)
    assert np.array_equal(new["test_score"], old["test_score"])
    assert new["epsilon_spent"] == old["epsilon_spent"] and old["n_splits"] == 3
    for m1, m2 in zip(new["estimator"], old["estimator"], strict=True):
        assert np.array_equal(m1.train_ids_, m2.train_ids_)

    grid = {"epsilon": [0.5, 1.0]}
    a = DPGridSearchCV(RecordingDPClassifier(), grid, scoring=scorer, cv=3, random_state=5)
    b = DPGridSearchCV(RecordingDPClassifier(), grid, scoring=scorer, n_splits=3, random_state=5)
    assert b.get_params()["n_splits"] == 3 and b.get_params()["cv"] is None  # stored as given
    a.fit(X, y)
    with pytest.warns(FutureWarning, match="n_splits was renamed cv"):
        b.fit(X, y)
    assert a.n_splits_ == b.n_splits_ == 3
    assert (a.epsilon_spent_, a.delta_spent_) == (b.epsilon_spent_, b.delta_spent_)
    assert a.best_params_ == b.best_params_
    for key, value in a.cv_results_.items():
        if key.startswith(("split", "mean_", "std_", "rank_")):
            assert np.array_equal(value, b.cv_results_[key]), key
    # the new name alone does not warn; both at once is an error
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        dp_cross_validate(RecordingDPClassifier(), X, y, scoring=ACC, cv=3)
    with pytest.raises(ValueError, match="cannot be combined with cv"):
        dp_cross_validate(RecordingDPClassifier(), X, y, scoring=ACC, cv=3, n_splits=3)
    with pytest.raises(ValueError, match="cannot be combined with cv"):
        _search(3, n_splits=3).fit(X, y)


def _fold_ids(models, n):
    """Test-fold index of every id, from the models' training ids."""
    folds = np.full(n, -1)
    for j, m in enumerate(models):
        test = np.setdiff1d(np.arange(n), m.train_ids_)
        assert np.all(folds[test] == -1)
        folds[test] = j
    return folds


def test_shuffled_kfold_is_accepted_and_gives_its_own_folds(data):
    """KFold(shuffle=True, random_state=0): its folds (a random permutation of the
    positions, keyed by its own seed), accounted as cv=3 is."""
    X, y = data
    cv = KFold(3, shuffle=True, random_state=0)
    ledger = PrivacyLedger(epsilon_budget=100.0)
    res = dp_cross_validate(
        RecordingDPClassifier(), X, y, scoring=ACC, cv=cv, return_estimator=True, ledger=ledger
    )
    expected = np.empty(len(y), dtype=int)
    for j, (_, test) in enumerate(KFold(3, shuffle=True, random_state=0).split(X)):
        expected[test] = j
    assert np.array_equal(_fold_ids(res["estimator"], len(y)), expected)
    assert res["n_splits"] == 3
    assert (
        res["epsilon_spent"]
        == ledger.epsilon_spent
        == cv_privacy_spend(epsilon=0.25, n_splits=3, fit_epsilon=1.0, refit=False)[0]
    )
    # neither the labels, nor the values, nor the run's random_state move the folds
    X2, y2 = X.copy(), 1 - y
    X2[17, 1] = 40.0
    again = dp_cross_validate(
        RecordingDPClassifier(), X2, y2, scoring=ACC, cv=cv, return_estimator=True, random_state=9
    )
    assert np.array_equal(_fold_ids(again["estimator"], len(y)), expected)
    search = _search(cv, ledger=ledger).fit(X, y)
    assert search.n_splits_ == 3 and search.cv is cv
    assert (
        search.epsilon_spent_
        == cv_privacy_spend(epsilon=0.25, n_splits=3, n_candidates=2, fit_epsilon=[0.5, 1.0])[0]
    )


def test_shuffled_kfold_without_a_seed_draws_fresh_folds_not_from_numpy_global_rng(data):
    X, y = data
    cv = KFold(3, shuffle=True)
    runs = []
    for _ in range(2):
        np.random.seed(0)  # noqa: NPY002 -- numpy's global RNG is not the source of the permutation
        res = dp_cross_validate(
            RecordingDPClassifier(), X, y, scoring=ACC, cv=cv, return_estimator=True
        )
        runs.append(_fold_ids(res["estimator"], len(y)))
    assert not np.array_equal(runs[0], runs[1])
    assert sorted(np.bincount(runs[0]).tolist()) == [30, 30, 30]


def test_shuffled_kfold_under_private_selection(data):
    X, y = data
    cv = KFold(2, shuffle=True, random_state=0)
    search = _search(cv, random_state=0, selection=PrivateSelection(expected_runs=2)).fit(X, y)
    int_cv = _search(2, random_state=0, selection=PrivateSelection(expected_runs=2)).fit(X, y)
    assert search.n_splits_ == 2
    assert (search.epsilon_spent_, search.delta_spent_) == (
        int_cv.epsilon_spent_,
        int_cv.delta_spent_,
    )


# ------------------------------------------------------------------ the ledger
def test_ledger_is_charged_once_even_if_the_scorer_holds_it(data):
    X, y = data
    ledger = PrivacyLedger(epsilon_budget=50.0)
    scorer = make_dp_scorer("roc_auc", epsilon=0.5, ledger=ledger)
    search = DPGridSearchCV(
        RecordingDPClassifier(),
        {"epsilon": [0.5, 1.0]},
        scoring=scorer,
        cv=3,
        ledger=ledger,
    ).fit(X, y)
    assert len(ledger) == 1
    assert ledger.epsilon_spent == search.epsilon_spent_


def test_a_scorer_with_another_ledger_is_refused(data):
    X, y = data
    scorer = make_dp_scorer("roc_auc", epsilon=0.5, ledger=PrivacyLedger())
    with pytest.raises(ValueError, match="holds a PrivacyLedger of its own"):
        DPGridSearchCV(RecordingDPClassifier(), {}, scoring=scorer, ledger=PrivacyLedger()).fit(
            X, y
        )
    with pytest.raises(ValueError, match="holds a PrivacyLedger of its own"):
        dp_cross_validate(RecordingDPClassifier(), X, y, scoring=scorer)


def test_a_refused_budget_raises_before_anything_runs(data):
    X, y = data
    ledger = PrivacyLedger(epsilon_budget=5.0)
    RecordingDPClassifier.n_fits = 0
    search = DPGridSearchCV(
        RecordingDPClassifier(), {"epsilon": [0.5, 1.0]}, scoring=ACC, cv=3, ledger=ledger
    )
    with pytest.raises(BudgetExceededError, match="DPGridSearchCV"):
        search.fit(X, y)
    assert RecordingDPClassifier.n_fits == 0
    assert len(ledger) == 0
    assert not hasattr(search, "cv_results_")
    with pytest.raises(BudgetExceededError):
        dp_cross_validate(RecordingDPClassifier(epsilon=3.0), X, y, scoring=ACC, ledger=ledger)
    assert RecordingDPClassifier.n_fits == 0


def test_a_copied_ledger_refuses(data):
    import copy

    X, y = data
    with pytest.raises(LedgerCopyError):
        dp_cross_validate(
            RecordingDPClassifier(), X, y, scoring=ACC, ledger=copy.deepcopy(PrivacyLedger())
        )


def test_errors_propagate_instead_of_nan_scores(data):
    X, y = data
    with pytest.raises(RuntimeError, match="a fit failed"):
        DPGridSearchCV(RecordingDPClassifier(), {"fail": [False, True]}, scoring=ACC, cv=3).fit(
            X, y
        )


def test_a_fit_spending_more_than_declared_raises(data):
    X, y = data
    with pytest.raises(RuntimeError, match="more than its declared"):
        dp_cross_validate(RecordingDPClassifier(epsilon=1.0, spent=2.0), X, y, scoring=ACC)


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize(
    "scoring",
    ["roc_auc", make_scorer(roc_auc_score), None, {"auc": "roc_auc"}, {}],
    ids=["string", "sklearn-scorer", "none", "dict-of-strings", "empty-dict"],
)
def test_only_dp_scorers(scoring, data):
    X, y = data
    with pytest.raises(TypeError, match="make_dp_scorer"):
        DPGridSearchCV(RecordingDPClassifier(), {}, scoring=scoring).fit(X, y)
    with pytest.raises(TypeError, match="make_dp_scorer"):
        dp_cross_validate(RecordingDPClassifier(), X, y, scoring=scoring)


def test_a_regressor_needs_a_dp_scorer_and_the_message_names_the_regression_ones():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(100, 2))
    y = X @ [1.0, -1.0]
    search = DPGridSearchCV(
        DPLinearRegression(bounds_X=(-1, 1), bounds_y=(-2, 2)), {"epsilon": [1.0]}, scoring="r2"
    )
    with pytest.raises(TypeError, match="make_dp_scorer.'r2'.*bounds_y"):
        search.fit(X, y)


def test_a_non_private_estimator_is_refused(data):
    X, y = data
    with pytest.raises(ValueError, match="learns from the rows without a privacy guarantee"):
        DPGridSearchCV(LogisticRegression(), {"C": [1.0]}, scoring=ACC).fit(X, y)
    with pytest.raises(ValueError, match="'standardscaler'"):
        dp_cross_validate(
            make_pipeline(StandardScaler(), RecordingDPClassifier()), X, y, scoring=ACC
        )
    with pytest.raises(ValueError, match="candidate"):
        DPGridSearchCV(RecordingDPClassifier(), {"epsilon": [1.0, math.inf]}, scoring=ACC).fit(X, y)


def test_allow_nonprivate_warns_and_the_total_is_inf(data):
    X, y = data
    est = make_pipeline(StandardScaler(), RecordingDPClassifier())
    with pytest.warns(PrivacyLeakWarning, match="standardscaler"):
        res = dp_cross_validate(est, X, y, scoring=ACC, cv=3, allow_nonprivate=True)
    assert res["epsilon_spent"] == math.inf and res["privacy_guarantee"] == "none"
    with pytest.warns(PrivacyLeakWarning), pytest.raises(BudgetExceededError):
        dp_cross_validate(
            est,
            X,
            y,
            scoring=ACC,
            ledger=PrivacyLedger(epsilon_budget=100.0),
            allow_nonprivate=True,
        )


def test_bad_arguments(data):
    X, y = data
    with pytest.raises(ValueError, match="y is required"):
        dp_cross_validate(RecordingDPClassifier(), X, None, scoring=ACC)
    with pytest.raises(ValueError, match="at least 2"):
        dp_cross_validate(RecordingDPClassifier(), X, y, scoring=ACC, cv=1)
    with pytest.raises(ValueError, match="greater than the number of samples"):
        dp_cross_validate(RecordingDPClassifier(), X[:3], y[:3], scoring=ACC, cv=4)
    with pytest.raises(TypeError, match="cv must be an int"):
        dp_cross_validate(RecordingDPClassifier(), X, y, scoring=ACC, cv=2.0)
    multi = {"acc": ACC, "auc": make_dp_scorer("roc_auc", epsilon=0.5)}
    with pytest.raises(ValueError, match="refit must be the name"):
        DPGridSearchCV(RecordingDPClassifier(), {}, scoring=multi).fit(X, y)
    with pytest.raises(ValueError, match="refit must be"):
        DPGridSearchCV(RecordingDPClassifier(), {}, scoring=ACC, refit="acc").fit(X, y)


# ------------------------------------------------------------------ end to end
def test_end_to_end_with_dp_ilp_and_dp_auc(binary):
    X, y = binary
    # delta > 0: Laplace noise on the AUC (delta = 0 gives heavy-tailed noise)
    auc = make_dp_scorer("roc_auc", epsilon=1.0, delta=1e-6, random_state=0)
    search = DPGridSearchCV(
        DPILPClassifier(epsilon=2.0, random_state=0),
        {"max_clause_length": [1, 2]},
        scoring={"auc": auc, "acc": ACC},
        refit="auc",
        cv=3,
        random_state=0,
    ).fit(X, y)
    res = search.cv_results_
    assert set(res) >= {
        "params",
        "param_max_clause_length",
        "split0_test_auc",
        "mean_test_auc",
        "std_test_auc",
        "rank_test_auc",
        "mean_test_acc",
    }
    assert not any("time" in key for key in res)
    assert res["rank_test_auc"][search.best_index_] == 1
    assert search.best_params_ == {"max_clause_length": 2}
    assert search.best_estimator_.clauses_ == [("x0", "x1")]
    assert search.best_score_ > 0.9
    assert search.predict(X[:5]).shape == (5,)
    assert search.decision_function(X[:5]).shape == (5,)
    assert list(search.classes_) == [0, 1]
    hand = 2 * (1.0 + 0.25) + 2 * (2 * 2 * 2.0) + 2 * 2.0
    assert search.epsilon_spent_ == pytest.approx(hand)
    assert search.delta_spent_ == pytest.approx(2 * 1e-6)
    # reproducible under fixed seeds (folds, fits and the seeded AUC scorer)
    again = clone(search).fit(X, y)
    for j in range(3):
        assert np.array_equal(again.cv_results_[f"split{j}_test_auc"], res[f"split{j}_test_auc"])


def test_score_is_a_new_charged_release(binary):
    X, y = binary
    ledger = PrivacyLedger()
    search = DPGridSearchCV(
        DPILPClassifier(epsilon=1.0, max_clause_length=2, random_state=0),
        {},
        scoring=ACC,
        cv=2,
        ledger=ledger,
    ).fit(X, y)
    assert len(ledger) == 1
    assert 0.0 <= search.score(X, y) <= 1.0
    assert len(ledger) == 2 and ledger.entries[-1]["epsilon"] == 0.25


def test_works_with_pandas(binary):
    pd = pytest.importorskip("pandas")
    X, y = binary
    df = pd.DataFrame(X, columns=list("abcd"))
    res = dp_cross_validate(
        DPILPClassifier(epsilon=1.0, max_clause_length=2, random_state=0),
        df,
        pd.Series(y),
        scoring=ACC,
        cv=3,
    )
    assert res["test_score"].shape == (3,)


# ------------------------------------------------------------------ scikit-learn API
_ILP = "the wrapped DPILPClassifier needs 0/1 labels (tests/test_common.py lists the same)"


@parametrize_with_checks(
    [
        DPGridSearchCV(
            DPILPClassifier(epsilon=1e6, binarize=0.0, random_state=0),
            {"max_clause_length": [1, 2]},
            scoring=make_dp_scorer("accuracy", epsilon=1e6, random_state=0),
            cv=2,
            random_state=0,
        )
    ],
    expected_failed_checks=lambda est: {
        "check_estimators_dtypes": _ILP,
        "check_classifier_data_not_an_array": _ILP,
        "check_classifiers_classes": _ILP,
        "check_fit2d_1feature": _ILP,
        "check_classifiers_train": "the wrapped DPILPClassifier: one conjunction over X > 0 "
        "atoms cannot reach the check's accuracy on Gaussian blobs (as in test_common)",
    },
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.slow  # a process pool starts; tests/dask runs the same path on a cluster
def test_parallel_tasks_equal_the_sequential_run(binary):
    """n_jobs=2 (joblib's process pool) spreads candidate x fold tasks; every noisy score,
    the selection and the single ledger entry equal the sequential run's."""
    X, y = binary
    scorer = make_dp_scorer("accuracy", epsilon=0.5, random_state=3)
    est = DPILPClassifier(max_clause_length=2, random_state=0)
    out = {}
    for n_jobs in (None, 2):
        ledger = PrivacyLedger(epsilon_budget=100.0)
        search = DPGridSearchCV(
            est,
            {"epsilon": [0.5, 1.0]},
            scoring=scorer,
            cv=3,
            ledger=ledger,
            random_state=0,
            n_jobs=n_jobs,
        ).fit(X, y)
        cv = dp_cross_validate(
            est, X, y, scoring=scorer, cv=3, random_state=0, n_jobs=n_jobs, ledger=ledger
        )
        out[n_jobs] = (search, cv, ledger)
    (s1, c1, l1), (s2, c2, l2) = out[None], out[2]
    for j in range(3):
        key = f"split{j}_test_score"
        np.testing.assert_array_equal(s1.cv_results_[key], s2.cv_results_[key])
    np.testing.assert_array_equal(c1["test_score"], c2["test_score"])
    assert s1.best_params_ == s2.best_params_
    assert len(l2) == 2 and l2.epsilon_spent == l1.epsilon_spent


def test_n_jobs_is_validated(binary):
    X, y = binary
    scorer = make_dp_scorer("accuracy", epsilon=0.5)
    with pytest.raises(ValueError, match="n_jobs"):
        DPGridSearchCV(DPILPClassifier(), {"epsilon": [1.0]}, scoring=scorer, n_jobs="2").fit(X, y)
    with pytest.raises((ValueError, TypeError), match="n_jobs"):
        dp_cross_validate(DPILPClassifier(), X, y, scoring=scorer, n_jobs=1.5)
