"""DPGridSearchCV with groups=: folds of whole patients, every fit and scorer call per
patient, the total per patient."""

import numpy as np
import pytest

from skdp.accounting import PrivacyLedger
from skdp.datasets import LONGITUDINAL_EHR_BOUNDS, make_longitudinal_ehr
from skdp.linear_model import DPLinearRegression
from skdp.metrics import make_dp_scorer
from skdp.model_selection import DPGridSearchCV
from skdp.model_selection._folds import assign_group_folds


class _RowOnly(DPLinearRegression):
    """A DP estimator whose fit takes no groups (per-row privacy only)."""

    def fit(self, X, y):
        return super().fit(X, y)


def _data():
    X, y, _, groups = make_longitudinal_ehr(400, random_state=0)
    return X, y, groups


def _search(**kw):
    est = DPLinearRegression(
        epsilon=0.5, bounds_X=LONGITUDINAL_EHR_BOUNDS(), bounds_y=(0, 150), max_rows_per_group=3
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


def test_group_folds_hold_whole_patients_and_ignore_the_other_patients():
    groups = np.repeat(np.arange(50), 3)
    folds = assign_group_folds(groups, 4, random_state=0)
    for g in range(50):
        assert len(set(folds[groups == g])) == 1  # a patient is in one fold
    assert len(set(folds)) == 4
    # removing a patient moves no one else: a patient's fold is its label's keyed hash
    fewer = groups[groups != 7]
    np.testing.assert_array_equal(assign_group_folds(fewer, 4, random_state=0), folds[groups != 7])
    # another key, another assignment
    assert not np.array_equal(assign_group_folds(groups, 4, random_state=1), folds)


def test_search_with_groups_is_per_patient_everywhere():
    X, y, groups = _data()
    ledger = PrivacyLedger(100.0, unit="group")
    search = _search(ledger=ledger).fit(X, y, groups=groups)
    assert search.privacy_unit_ == "group" and search.privacy_relation_ == "add_remove"
    assert search.best_estimator_.privacy_unit_ == "group"
    assert ledger.entries[0]["unit"] == "group"
    assert ledger.epsilon_spent == pytest.approx(search.epsilon_spent_)
    plain = _search().fit(X, y)
    assert plain.privacy_unit_ == "row" and plain.best_estimator_.privacy_unit_ == "row"
    # the same total either way: the per-patient fits and scores cost what they state
    assert search.epsilon_spent_ == plain.epsilon_spent_


def test_search_refuses_what_cannot_protect_patients():
    X, y, groups = _data()
    no_k = make_dp_scorer("r2", epsilon=0.2, bounds_y=(0, 150), random_state=0)
    with pytest.raises(ValueError, match="made without max_rows_per_group"):
        _search(scoring=no_k).fit(X, y, groups=groups)
    with pytest.raises(ValueError, match="holdout=40 with groups=: give holdout as a fraction"):
        _search(holdout=40).fit(X, y, groups=groups)
    with pytest.raises(ValueError, match="does not support patient-level"):
        DPGridSearchCV(
            _RowOnly(epsilon=0.5, bounds_X=LONGITUDINAL_EHR_BOUNDS(), bounds_y=(0, 150)),
            param_grid={"regularization": [10.0]},
            scoring=make_dp_scorer("r2", epsilon=0.2, bounds_y=(0, 150), max_rows_per_group=3),
            cv=3,
        ).fit(X, y, groups=groups)


def test_cross_validate_with_groups_is_per_patient():
    from skdp.model_selection import dp_cross_validate

    X, y, groups = _data()
    est = DPLinearRegression(
        epsilon=0.5, bounds_X=LONGITUDINAL_EHR_BOUNDS(), bounds_y=(0, 150), max_rows_per_group=3
    )
    scorer = make_dp_scorer(
        "r2", epsilon=0.2, bounds_y=(0, 150), max_rows_per_group=3, random_state=0
    )
    ledger = PrivacyLedger(10.0, unit="group")
    res = dp_cross_validate(
        est,
        X,
        y,
        scoring=scorer,
        cv=3,
        ledger=ledger,
        random_state=0,
        groups=groups,
        return_estimator=True,
    )
    assert res["privacy_unit"] == "group" and ledger.unit == "group"
    assert all(m.privacy_unit_ == "group" for m in res["estimator"])
    assert res["epsilon_spent"] == pytest.approx(ledger.epsilon_spent)
    assert dp_cross_validate(est, X, y, scoring=scorer, cv=3)["privacy_unit"] == "row"
    no_k = make_dp_scorer("r2", epsilon=0.2, bounds_y=(0, 150))
    with pytest.raises(ValueError, match="made without max_rows_per_group"):
        dp_cross_validate(est, X, y, scoring=no_k, cv=3, groups=groups)


def test_refusals_come_before_the_charge():
    """Every patient in one fold (no training rows anywhere) and a pipeline step that
    cannot take groups are refused before the ledger is charged or a fold is fit."""
    from skdp.model_selection import dp_cross_validate
    from skdp.pipeline import make_dp_pipeline
    from skdp.preprocessing import PublicBoundsScaler

    X, y, groups = _data()
    one = groups == groups[0]  # one patient: every fold but one is empty
    ledger = PrivacyLedger(100.0, unit="group")
    with pytest.raises(ValueError, match="every patient in one fold"):
        _search(ledger=ledger, cv=5).fit(X[one], y[one], groups=groups[one])
    with pytest.raises(ValueError, match="every patient in one fold"):
        dp_cross_validate(
            _search().estimator,
            X[one],
            y[one],
            scoring=_search().scoring,
            cv=5,
            ledger=ledger,
            groups=groups[one],
        )
    lo, hi = LONGITUDINAL_EHR_BOUNDS()
    pipe = make_dp_pipeline(
        PublicBoundsScaler(bounds=(lo, hi)),
        _RowOnly(epsilon=0.5, bounds_X=(-1, 1), bounds_y=(0, 150)),
    )
    with pytest.raises(ValueError, match="does not support patient-level"):
        dp_cross_validate(pipe, X, y, scoring=_search().scoring, cv=3, ledger=ledger, groups=groups)
    assert len(ledger) == 0
