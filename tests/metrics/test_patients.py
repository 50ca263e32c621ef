"""The DP metrics that are sums and counts with the patient as the privacy unit
(``groups=`` and ``max_rows_per_group``, doc/patients.rst) and their scorers (the
AUC/AP ones included; their own tests: test_ranking_groups.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skdp.datasets import LONGITUDINAL_EHR_BOUNDS, make_longitudinal_ehr
from skdp.linear_model import DPLinearRegression, DPLogisticRegression
from skdp.mechanisms.sensitivity import regression_sum_sensitivities
from skdp.metrics import (
    _accuracy,
    _regression,
    dp_accuracy_score,
    dp_mean_absolute_error,
    dp_mean_squared_error,
    dp_r2_score,
    make_dp_scorer,
)

BY = (0.0, 150.0)
REGRESSION = [dp_r2_score, dp_mean_squared_error, dp_mean_absolute_error]


def _ehr(n_patients=300, seed=0):
    X, y, event, groups = make_longitudinal_ehr(n_patients, random_state=seed)
    return X, y, event, groups


def _predictions(y, event, seed=0):
    rng = np.random.default_rng(seed)
    flipped = np.where(rng.random(event.shape) < 0.2, 1 - event, event)
    return np.clip(y + rng.normal(0, 5, y.shape), *BY), flipped


def _spy(monkeypatch, module, name):
    seen = []
    fn = getattr(module, name)

    def wrapped(*args, **kw):
        seen.append(kw["sensitivity"])
        return fn(*args, **kw)

    monkeypatch.setattr(module, name, wrapped)
    return seen


def test_accuracy_sensitivity_is_k_per_patient(monkeypatch):
    _, _, event, groups = _ehr()
    _, pred = _predictions(*_ehr()[1:3])
    seen = _spy(monkeypatch, _accuracy, "add_geometric")
    dp_accuracy_score(event, pred, epsilon=1.0, random_state=0)
    for k in (1, 4):
        dp_accuracy_score(
            event, pred, epsilon=1.0, groups=groups, max_rows_per_group=k, random_state=0
        )
    # per patient both counts (correct, wrong) are released: the kept-row count is private
    assert seen == [1, 1.0, 1.0, 4.0, 4.0]


@pytest.mark.parametrize("metric", REGRESSION)
def test_regression_sensitivities_are_k_times_the_rows(monkeypatch, metric):
    _, y, event, groups = _ehr()
    pred, _ = _predictions(y, event)
    seen = _spy(monkeypatch, _regression, "add_laplace")
    metric(y, pred, bounds_y=BY, epsilon=1.0, random_state=0)
    row = list(seen)
    seen.clear()
    metric(y, pred, bounds_y=BY, epsilon=1.0, groups=groups, max_rows_per_group=3, random_state=0)
    assert seen == [3 * s for s in row]
    assert row[0] in regression_sum_sensitivities(*BY).values()


def _one_outcome_per_patient():
    """Patient ``i`` has ``i % 4 + 1`` rows, all correct (even ``i``) or all wrong (odd
    ``i``): at ``epsilon=inf`` the released value shows which rows were kept."""
    counts = np.arange(40) % 4 + 1
    groups = np.repeat(np.arange(40), counts)
    correct = np.repeat(np.arange(40) % 2 == 0, counts)
    y = np.zeros(groups.shape[0], dtype=int)
    return y, np.where(correct, 0, 1), groups, counts


def test_at_most_k_rows_a_patient_are_counted():
    y, pred, groups, counts = _one_outcome_per_patient()
    for k in (1, 2, 4):
        w = np.minimum(counts, k)
        want = w[::2].sum() / w.sum()
        got = dp_accuracy_score(y, pred, epsilon=math.inf, groups=groups, max_rows_per_group=k)
        assert got == pytest.approx(want, rel=1e-12)
        # the regression sums too: the squared error of patient i is (i % 2) per row
        mse = dp_mean_squared_error(
            y, pred, bounds_y=(0, 1), epsilon=math.inf, groups=groups, max_rows_per_group=k
        )
        assert mse == pytest.approx(1 - want, rel=1e-12)


@pytest.mark.parametrize("metric", [dp_accuracy_score, *REGRESSION])
def test_without_groups_nothing_changes(metric):
    """groups=None (max_rows_per_group given or not): the row-level release, bit for bit."""
    _, y, event, _ = _ehr()
    pred, flipped = _predictions(y, event)
    args, kw = (
        ((event, flipped), {}) if metric is dp_accuracy_score else ((y, pred), {"bounds_y": BY})
    )
    a = metric(*args, epsilon=1.0, random_state=0, **kw)
    b = metric(*args, epsilon=1.0, random_state=0, groups=None, max_rows_per_group=3, **kw)
    assert a == b


@pytest.mark.parametrize("metric", [dp_accuracy_score, *REGRESSION])
def test_the_grouping_is_in_the_seed_material(metric):
    _, y, event, groups = _ehr()
    pred, flipped = _predictions(y, event)
    args, kw = (
        ((event, flipped), {}) if metric is dp_accuracy_score else ((y, pred), {"bounds_y": BY})
    )

    def release(g, seed=0):
        return metric(*args, epsilon=1.0, groups=g, max_rows_per_group=50, random_state=seed, **kw)

    assert release(groups % 7) != release(groups % 11)
    assert release(groups % 7) == release(groups % 7)


_SECRET = "patient-7731"  # a label that must never appear in a message


@pytest.mark.parametrize("metric", [dp_accuracy_score, dp_r2_score])
@pytest.mark.parametrize(
    ("kw", "error", "match"),
    [
        ({"groups": np.arange(10)}, ValueError, "needs max_rows_per_group"),
        ({"groups": np.arange(9), "max_rows_per_group": 2}, ValueError, "9 labels for 10"),
        (
            {"groups": [None] * 10, "max_rows_per_group": 2},
            ValueError,
            "missing or non-finite labels",
        ),
        ({"groups": [[_SECRET]] * 10, "max_rows_per_group": 2}, ValueError, "1-d"),
        ({"groups": [{_SECRET: 0}] * 10, "max_rows_per_group": 2}, TypeError, "hashable"),
        ({"groups": np.arange(10), "max_rows_per_group": 0}, ValueError, "max_rows_per_group"),
        ({"groups": np.arange(10), "max_rows_per_group": 1.5}, ValueError, "max_rows_per"),
        ({"groups": np.arange(10), "max_rows_per_group": "2"}, TypeError, "max_rows_per"),
        ({"max_rows_per_group": -1}, ValueError, "max_rows_per_group"),
    ],
)
def test_bad_patient_level_input_is_refused(metric, kw, error, match):
    y = np.r_[np.zeros(5), np.ones(5)]
    extra = {"bounds_y": (0, 1)} if metric is dp_r2_score else {}
    with pytest.raises(error, match=match) as info:
        metric(y, y, epsilon=1.0, **extra, **kw)
    assert _SECRET not in str(info.value)


@pytest.mark.parametrize("metric", [dp_accuracy_score, dp_mean_absolute_error])
def test_dask_groups_beside_in_memory_labels_are_refused(metric):
    da = pytest.importorskip("dask.array")
    y = np.r_[np.zeros(10), np.ones(10)]
    extra = {"bounds_y": (0, 1)} if metric is dp_mean_absolute_error else {}
    groups = da.from_array(np.arange(20) // 2, chunks=10)
    with pytest.raises(ValueError, match="groups is a Dask collection but the data are in"):
        metric(y, y, epsilon=1.0, groups=groups, max_rows_per_group=2, **extra)


def test_scorers_pass_groups_and_the_bound_through():
    X, y, event, groups = _ehr()
    clf = DPLogisticRegression(
        classes=[0, 1], bounds_X=LONGITUDINAL_EHR_BOUNDS(), random_state=0
    ).fit(X, event)
    scorer = make_dp_scorer("accuracy", epsilon=1.0, max_rows_per_group=3, random_state=0)
    want = dp_accuracy_score(
        event, clf.predict(X), epsilon=1.0, groups=groups, max_rows_per_group=3, random_state=0
    )
    assert scorer(clf, X, event, groups=groups) == want
    # without groups the scorer is the row-level one
    row = dp_accuracy_score(event, clf.predict(X), epsilon=1.0, random_state=0)
    assert scorer(clf, X, event) == row
    reg = DPLinearRegression(bounds_X=LONGITUDINAL_EHR_BOUNDS(), bounds_y=BY, random_state=0).fit(
        X, y
    )
    for name, fn, sign in [
        ("r2", dp_r2_score, 1),
        ("neg_mean_squared_error", dp_mean_squared_error, -1),
        ("neg_mean_absolute_error", dp_mean_absolute_error, -1),
    ]:
        sc = make_dp_scorer(name, epsilon=1.0, bounds_y=BY, max_rows_per_group=2, random_state=0)
        want = fn(
            y,
            reg.predict(X),
            bounds_y=BY,
            epsilon=1.0,
            groups=groups,
            max_rows_per_group=2,
            random_state=0,
        )
        assert sc(reg, X, y, groups=groups) == sign * want
    with pytest.raises(ValueError, match="needs max_rows_per_group"):
        make_dp_scorer("accuracy", epsilon=1.0)(clf, X, event, groups=groups)


@pytest.mark.parametrize("name", ["roc_auc", "average_precision"])
def test_auc_and_ap_scorers_take_groups(name):
    """Their smooth sensitivity has a patient-level version (tests/metrics/
    test_ranking_groups.py): the scorer passes groups and the bound through."""
    from skdp.metrics import dp_average_precision_score, dp_roc_auc_score

    X, _, event, groups = _ehr()
    clf = DPLogisticRegression(
        classes=[0, 1], bounds_X=LONGITUDINAL_EHR_BOUNDS(), random_state=0
    ).fit(X, event)
    fn = dp_roc_auc_score if name == "roc_auc" else dp_average_precision_score
    scorer = make_dp_scorer(name, epsilon=1.0, max_rows_per_group=3, random_state=0)
    want = fn(
        event,
        clf.decision_function(X),
        epsilon=1.0,
        groups=groups,
        max_rows_per_group=3,
        pos_label=1,
        random_state=0,
    )
    assert scorer(clf, X, event, groups=groups) == want
    with pytest.raises(ValueError, match="needs max_rows_per_group"):
        make_dp_scorer(name, epsilon=1.0)(clf, X, event, groups=groups)
    # max_rows_per_group=None is the default, and the scorer still works per row
    assert 0.0 <= make_dp_scorer(name, epsilon=1.0, max_rows_per_group=None)(clf, X, event) <= 1


def test_make_dp_scorer_refuses_groups_and_a_bad_bound():
    with pytest.raises(ValueError, match="pass it to each scorer call"):
        make_dp_scorer("accuracy", epsilon=1.0, groups=np.arange(4))
    with pytest.raises(ValueError, match="max_rows_per_group must be a whole number"):
        make_dp_scorer("accuracy", epsilon=1.0, max_rows_per_group=0)
    with pytest.raises(TypeError, match="max_rows_per_group must be a whole number"):
        make_dp_scorer("r2", epsilon=1.0, bounds_y=BY, max_rows_per_group="3")


def test_a_patient_level_call_is_charged_per_patient():
    """The ledger records the unit: a patient-level metric or scorer call spends in
    unit 'group'; a per-row ledger refuses it before anything is released."""
    from skdp.accounting import PrivacyLedger

    _, y, event, groups = _ehr()
    pred, flipped = _predictions(y, event)
    ledger = PrivacyLedger(3.0)
    dp_accuracy_score(
        event, flipped, epsilon=1.0, groups=groups, max_rows_per_group=2, ledger=ledger
    )
    dp_r2_score(
        y, pred, bounds_y=BY, epsilon=1.0, groups=groups, max_rows_per_group=2, ledger=ledger
    )
    assert [e["unit"] for e in ledger.entries] == ["group", "group"]
    row_ledger = PrivacyLedger(3.0)
    dp_accuracy_score(event, flipped, epsilon=1.0, ledger=row_ledger)
    with pytest.raises(ValueError, match="per row"):
        dp_accuracy_score(
            event, flipped, epsilon=1.0, groups=groups, max_rows_per_group=2, ledger=row_ledger
        )
    assert [e["unit"] for e in row_ledger.entries] == ["row"]
    X = _ehr()[0]
    clf = DPLogisticRegression(
        classes=[0, 1], bounds_X=LONGITUDINAL_EHR_BOUNDS(), random_state=0
    ).fit(X, event)
    scorer = make_dp_scorer("accuracy", epsilon=0.5, max_rows_per_group=2, ledger=ledger)
    scorer(clf, X, event, groups=groups)
    assert [e["unit"] for e in ledger.entries] == ["group"] * 3
