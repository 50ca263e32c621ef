"""DPGridSearchCV with groups= beyond the grid: a holdout of whole patients, private
selection per patient, cv splitters (refused with what to do instead), and the AUC
scorer per patient inside a search."""

import numpy as np
import pytest

from skdp.accounting import PrivacyLedger
from skdp.datasets import LONGITUDINAL_EHR_BOUNDS, make_longitudinal_ehr
from skdp.linear_model import DPLinearRegression, DPLogisticRegression
from skdp.metrics import make_dp_scorer
from skdp.model_selection import DPGridSearchCV, dp_cross_validate
from skdp.model_selection._holdout import holdout_group_mask

FIT_CALLS = []


class _Recording(DPLinearRegression):
    """Records the patients of every fit (to check that each fit holds whole patients)."""

    def fit(self, X, y, *, groups=None):
        FIT_CALLS.append(None if groups is None else np.asarray(groups).copy())
        return super().fit(X, y, groups=groups)


def _data(n=300):
    X, y, _, groups = make_longitudinal_ehr(n, random_state=0)
    return X, y, groups


def _search(cls=DPLinearRegression, **kw):
    est = cls(
        epsilon=0.5,
        delta=0.0,
        bounds_X=LONGITUDINAL_EHR_BOUNDS(),
        bounds_y=(0, 150),
        max_rows_per_group=3,
    )
    scorer = make_dp_scorer(
        "r2", epsilon=0.2, bounds_y=(0, 150), max_rows_per_group=3, random_state=0
    )
    params = dict(
        param_grid={"regularization": ["adaptive", 10.0]},
        scoring=scorer,
        cv=3,
        random_state=0,
    )
    params.update(kw)
    return DPGridSearchCV(est, **params)


def _whole_patients(part, groups):
    """Every patient in ``part`` has all their rows there."""
    ids, counts = np.unique(part, return_counts=True)
    full = dict(zip(*np.unique(groups, return_counts=True), strict=True))
    return all(full[i] == c for i, c in zip(ids.tolist(), counts.tolist(), strict=True))


# ------------------------------------------------------------------------- holdout
def test_holdout_mask_holds_whole_patients_independently_of_the_others():
    groups = np.repeat(np.arange(200), 3)
    mask = holdout_group_mask(groups, 0.25, random_state=0)
    for g in range(200):
        assert len(set(mask[groups == g])) == 1
    assert 0.15 < mask[::3].mean() < 0.35
    fewer = groups != 17  # removing one patient moves no one else across the split
    np.testing.assert_array_equal(holdout_group_mask(groups[fewer], 0.25, 0), mask[fewer])
    assert not np.array_equal(holdout_group_mask(groups, 0.25, 1), mask)
    with pytest.raises(ValueError, match="give holdout as a fraction"):
        holdout_group_mask(groups, 10)
    # one side without patients is allowed (scored with noise only, or refused later
    # by the patient folds): whether the split succeeds depends on no patient
    one = holdout_group_mask(np.zeros(5), 0.5, random_state=0)
    assert one.all() or not one.any()


def test_search_with_groups_and_holdout_is_per_patient():
    X, y, groups = _data()
    ledger = PrivacyLedger(100.0, unit="group")
    FIT_CALLS.clear()
    search = _search(_Recording, holdout=0.3, ledger=ledger).fit(X, y, groups=groups)
    assert search.privacy_unit_ == "group" and search.privacy_relation_ == "add_remove"
    assert np.isfinite(search.best_score_unbiased_)
    assert not hasattr(search, "n_holdout_")  # the held-out row count is private
    assert [e["unit"] for e in ledger.entries] == ["group"]
    assert ledger.epsilon_spent == pytest.approx(search.epsilon_spent_)
    held = holdout_group_mask(groups, 0.3, random_state=0)
    seen = np.concatenate([g for g in FIT_CALLS])
    assert not np.isin(seen, groups[held]).any()  # no fit saw a held-out patient
    assert all(_whole_patients(g, groups[~held]) for g in FIT_CALLS[-1:])  # the refit
    # the same total as without a holdout: the parts compose in parallel
    assert search.epsilon_spent_ == _search().fit(X, y, groups=groups).epsilon_spent_


def test_the_holdout_score_is_a_patient_level_call(monkeypatch):
    """The final score is given the held-out rows' patients (the scorer then keeps at
    most k rows a patient and calibrates to them)."""
    from skdp.metrics import _scorer

    calls = []
    original = _scorer.DPScorer.__call__

    def spy(self, estimator, X, y_true, sample_weight=None, groups=None, **kw):
        calls.append(groups)
        return original(self, estimator, X, y_true, sample_weight, groups, **kw)

    monkeypatch.setattr(_scorer.DPScorer, "__call__", spy)
    X, y, groups = _data()
    _search(holdout=0.3).fit(X, y, groups=groups)
    held = holdout_group_mask(groups, 0.3, random_state=0)
    assert all(c is not None for c in calls)
    np.testing.assert_array_equal(calls[-1], groups[held])


# --------------------------------------------------------------- private selection
def test_private_selection_with_groups_is_per_patient():
    X, y, groups = _data()
    ledger = PrivacyLedger(200.0, unit="group")
    FIT_CALLS.clear()
    search = _search(_Recording, selection="private", ledger=ledger).fit(X, y, groups=groups)
    assert search.selection_ == "private" and search.privacy_unit_ == "group"
    assert search.best_estimator_.privacy_unit_ == "group"
    assert [e["unit"] for e in ledger.entries] == ["group"]
    assert ledger.epsilon_spent == pytest.approx(search.epsilon_spent_)
    assert not hasattr(search, "cv_results_")
    assert FIT_CALLS and all(g is not None for g in FIT_CALLS)
    # every training set is a union of whole patients, and so is its complement
    for g in FIT_CALLS[:-1]:
        assert _whole_patients(g, groups)
    np.testing.assert_array_equal(FIT_CALLS[-1], groups)  # the refit on every patient
    # the total is the row-level plan's (the per-patient budgets are the stated ones)
    assert search.epsilon_spent_ == _search(selection="private").fit(X, y).epsilon_spent_


def test_private_selection_with_groups_and_holdout():
    X, y, groups = _data()
    FIT_CALLS.clear()
    search = _search(_Recording, selection="private", holdout=0.3).fit(X, y, groups=groups)
    assert search.privacy_unit_ == "group" and np.isfinite(search.best_score_unbiased_)
    held = holdout_group_mask(groups, 0.3, random_state=0)
    assert not np.isin(np.concatenate(FIT_CALLS), groups[held]).any()
    np.testing.assert_array_equal(FIT_CALLS[-1], groups[~held])  # the refit


@pytest.mark.filterwarnings("ignore:DPGridSearchCV. the final model")
def test_private_selection_with_groups_refuses_one_full_fold_before_the_charge():
    X, y, groups = _data()
    one = groups == groups[0]
    ledger = PrivacyLedger(200.0, unit="group")
    with pytest.raises(ValueError, match="every patient in one fold"):
        _search(selection="private", ledger=ledger, cv=5).fit(X[one], y[one], groups=groups[one])
    assert ledger.entries == []


def test_private_selection_without_groups_is_unchanged():
    """groups=None: reproducible under seeds, per row (the fold key is drawn as before)."""
    X, y, _ = _data()
    a = _search(selection="private").set_params(estimator__random_state=0).fit(X, y)
    b = _search(selection="private").set_params(estimator__random_state=0).fit(X, y)
    assert (a.best_index_, a.best_score_) == (b.best_index_, b.best_score_)
    assert a.privacy_unit_ == "row"


# ------------------------------------------------------------------------ splitters
def test_splitters_with_groups_are_refused_with_what_to_do():
    from sklearn.model_selection import GroupKFold, KFold

    X, y, groups = _data()
    with pytest.raises(ValueError, match="with groups= pass cv=<int>.*KFold"):
        _search(cv=KFold(3, shuffle=True, random_state=0)).fit(X, y, groups=groups)
    with pytest.raises(ValueError, match="pass groups= to fit.*cv=<int>"):
        _search(cv=GroupKFold(3)).fit(X, y, groups=groups)
    with pytest.raises(ValueError, match="adding one patient can move other patients"):
        dp_cross_validate(
            _search().estimator, X, y, scoring=_search().scoring, cv=GroupKFold(3), groups=groups
        )


# ------------------------------------------------------------------ AUC per patient
def test_search_scored_by_patient_level_auc():
    X, _, event, groups = make_longitudinal_ehr(300, random_state=1)
    est = DPLogisticRegression(
        epsilon=1.0, bounds_X=LONGITUDINAL_EHR_BOUNDS(), classes=[0, 1], max_rows_per_group=3
    )
    for name in ("roc_auc", "average_precision"):
        scorer = make_dp_scorer(name, epsilon=0.5, max_rows_per_group=3, random_state=0)
        search = DPGridSearchCV(
            est,
            {"C": [0.1, 1.0]},
            scoring=scorer,
            cv=3,
            holdout=0.25,
            random_state=0,
        ).fit(X, event, groups=groups)
        assert search.privacy_unit_ == "group"
        assert 0.0 <= search.best_score_unbiased_ <= 1.0
        assert np.isfinite(search.cv_results_["mean_test_score"]).all()
