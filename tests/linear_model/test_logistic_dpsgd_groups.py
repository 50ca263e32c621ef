"""DPLogisticRegression(mechanism="dpsgd") with groups=: patient-level DP-SGD (patients
sampled, each patient's gradient sum over k clipped once), epsilon per patient with no
division by k."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from skdp.accounting import calibrate_noise_multiplier
from skdp.datasets import LONGITUDINAL_EHR_BOUNDS, make_longitudinal_ehr
from skdp.linear_model import DPLogisticRegression

KW = dict(
    mechanism="dpsgd",
    bounds_X=LONGITUDINAL_EHR_BOUNDS(),
    classes=[0, 1],
    n_iter=60,
    batch_size=40,
    random_state=0,
)


def test_dpsgd_per_patient_is_calibrated_at_the_patient_sampling_rate():
    X, _, event, groups = make_longitudinal_ehr(300, random_state=0)
    clf = DPLogisticRegression(epsilon=1.0, max_rows_per_group=3, **KW)
    clf.fit(X, event, groups=groups)
    assert clf.mechanism_ == "dpsgd" and clf.privacy_unit_ == "group"
    assert clf.max_rows_per_group_ == 3
    assert clf.epsilon_spent_ == 1.0 and clf.delta_spent_ == 1e-5
    assert clf.privacy_breakdown_ == {"bounds": 0.0, "dpsgd": 1.0}
    sigma = calibrate_noise_multiplier(
        epsilon=1.0, delta=1e-5, sample_rate=40 / 300, steps=60, accountant="pld"
    )  # the whole epsilon per patient (no division by k), q over patients
    assert clf.noise_multiplier_ == pytest.approx(sigma, rel=1e-9)
    assert roc_auc_score(event, clf.decision_function(X)) > 0.6
    row = DPLogisticRegression(epsilon=1.0, **KW).fit(X, event)
    assert row.privacy_unit_ == "row" and row.max_rows_per_group_ is None


def test_dpsgd_per_patient_one_vs_rest_and_reproducible():
    X, y, _, groups = make_longitudinal_ehr(200, random_state=1)
    label = np.digitize(y, [50, 70])
    kw = {**KW, "classes": [0, 1, 2], "n_iter": 20}
    a = DPLogisticRegression(epsilon=2.0, max_rows_per_group=2, **kw).fit(X, label, groups=groups)
    b = DPLogisticRegression(epsilon=2.0, max_rows_per_group=2, **kw).fit(X, label, groups=groups)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.coef_.shape == (3, 4) and a.epsilon_spent_ == 2.0


def test_dpsgd_per_patient_refuses_estimated_bounds():
    X, _, event, groups = make_longitudinal_ehr(100, random_state=0)
    kw = {**KW, "bounds_X": None}
    with pytest.raises(ValueError, match="bounds_X=None with groups"):
        DPLogisticRegression(max_rows_per_group=2, **kw).fit(X, event, groups=groups)
