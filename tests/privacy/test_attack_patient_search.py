"""Attacks on the patient-level search and scorers through what their *success* and
their *divisor* reveal.

* An empty patient fold used to be refused before the charge. The keyed hash puts each
  patient in a fold by their label alone, so whether a fold is empty depends on which
  patients are present: a data set ran and its neighbour without one patient was
  refused (an infinite privacy loss in one observation). Empty folds now release
  noise-only scores; only "every patient in one fold" is refused (probability
  ``n_splits ** (1 - G)``).
* The patient-level accuracy divided its noisy integer count by the number of kept
  rows, so the released value was a multiple of ``1 / N``: it published ``N``, which a
  patient moves by up to ``k``. Both counts are now noisy.
"""

import numpy as np
import pytest

from skdp.datasets import LONGITUDINAL_EHR_BOUNDS, make_longitudinal_ehr
from skdp.linear_model import DPLinearRegression
from skdp.metrics import dp_accuracy_score, make_dp_scorer
from skdp.model_selection import DPGridSearchCV, dp_cross_validate
from skdp.model_selection._folds import assign_group_folds

K = 3


def _patients_with_a_lonely_one(n_splits=3, seed=0):
    """``(X, y, groups, p)``: a few patients whose folds (keyed by ``seed``) leave
    patient ``p`` alone in its fold while the others cover two more folds."""
    X, y, _, groups = make_longitudinal_ehr(60, random_state=0)
    labels = np.unique(groups)
    rng = np.random.default_rng(1)
    for _ in range(200):
        chosen = rng.choice(labels, size=5, replace=False)
        folds = assign_group_folds(chosen, n_splits, random_state=seed)
        counts = np.bincount(folds, minlength=n_splits)
        alone = np.flatnonzero(counts == 1)
        if alone.size and np.count_nonzero(counts) == n_splits:
            p = chosen[int(np.flatnonzero(folds == alone[0])[0])]
            keep = np.isin(groups, chosen)
            return X[keep], y[keep], groups[keep], p
    raise AssertionError("no configuration found")


def _estimator():
    return DPLinearRegression(
        epsilon=1.0,
        delta=0.0,
        bounds_X=LONGITUDINAL_EHR_BOUNDS(),
        bounds_y=(0, 150),
        max_rows_per_group=K,
    )


def _scorer():
    return make_dp_scorer("r2", epsilon=0.5, bounds_y=(0, 150), max_rows_per_group=K)


@pytest.mark.parametrize("selection", ["grid", "private"])
def test_search_runs_on_both_neighbours_when_a_patient_is_alone_in_a_fold(selection):
    X, y, groups, p = _patients_with_a_lonely_one()
    without = groups != p  # the neighbour: patient p removed, their fold now empty
    spent = []
    for keep in (np.ones_like(without), without):
        search = DPGridSearchCV(
            _estimator(),
            param_grid={"regularization": ["adaptive", 10.0]},
            scoring=_scorer(),
            cv=3,
            selection=selection,
            random_state=0,
        )
        search.fit(X[keep], y[keep], groups=groups[keep])  # refused on the old code
        assert np.isfinite(search.best_score_)
        spent.append((search.epsilon_spent_, search.delta_spent_))
    assert spent[0] == spent[1]


def test_cross_validate_runs_on_both_neighbours_and_scores_the_empty_fold():
    X, y, groups, p = _patients_with_a_lonely_one()
    without = groups != p
    for keep in (np.ones_like(without), without):
        res = dp_cross_validate(
            _estimator(),
            X[keep],
            y[keep],
            scoring=_scorer(),
            cv=3,
            groups=groups[keep],
            random_state=0,
        )
        assert res["privacy_unit"] == "group" and np.isfinite(res["test_score"]).all()


def test_patient_level_accuracy_does_not_publish_the_kept_row_count():
    rng = np.random.default_rng(0)
    n_patients = 150
    counts = rng.integers(1, K + 1, size=n_patients)
    groups = np.repeat(np.arange(n_patients), counts)
    n = groups.shape[0]  # every patient has at most K rows: all rows are kept
    y = rng.integers(0, 2, size=n)
    pred = np.where(rng.random(n) < 0.7, y, 1 - y)
    multiples = 0
    for seed in range(20):
        acc = dp_accuracy_score(
            y, pred, epsilon=1.0, groups=groups, max_rows_per_group=K, random_state=seed
        )
        assert 0.0 < acc < 1.0
        multiples += abs(acc * n - round(acc * n)) < 1e-9
    # the old release (noisy count / N) was a multiple of 1/N every time
    assert multiples < 5


def test_patient_level_scorers_take_an_empty_fold_without_predicting():
    class _NoEmptyPredict(DPLinearRegression):
        def predict(self, X):
            if len(X) == 0:
                raise AssertionError("predict called on zero rows")
            return super().predict(X)

    X, y, _, groups = make_longitudinal_ehr(50, random_state=0)
    params = dict(epsilon=1.0, bounds_X=LONGITUDINAL_EHR_BOUNDS(), bounds_y=(0, 150))
    model = _NoEmptyPredict(**params).fit(X, y)
    plain = DPLinearRegression(**params).fit(X, y)
    for name in ("r2", "neg_mean_squared_error", "neg_mean_absolute_error"):
        scorer = make_dp_scorer(name, epsilon=1.0, bounds_y=(0, 150), max_rows_per_group=K)
        assert np.isfinite(scorer(model, X[:0], y[:0], groups=groups[:0]))
        with pytest.raises(ValueError):  # per row: refused as before
            make_dp_scorer(name, epsilon=1.0, bounds_y=(0, 150))(plain, X[:0], y[:0])
