"""ExpMFlowRegressor / ExpMFlowClassifier with groups= (the patient as the privacy unit)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("torch")

import skdp.linear_model._expm_flow_base as base  # noqa: E402
from skdp.linear_model import ExpMFlowClassifier, ExpMFlowRegressor  # noqa: E402
from skdp.linear_model._expm_flow_plan import ExpMFlowPlan  # noqa: E402

FAST = dict(n_iter=5, batch_size=16, n_layers=1, dtype="float64", device="cpu")


def _data(n_patients=30, rows=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_patients * rows, 2))
    y = (X[:, 0] > 0).astype(int)
    return X, y, np.repeat(np.arange(n_patients), rows)


@pytest.mark.parametrize("k", [1, 4])
def test_plan_multiplies_the_sensitivity_once(k):
    row = ExpMFlowPlan.build(epsilon=2.0, n_release_samples=2)
    group = ExpMFlowPlan.build(epsilon=2.0, n_release_samples=2, max_rows_per_group=k)
    assert row.sensitivity == 1.0 and group.sensitivity == k
    assert row.exponent_epsilon == row.epsilon_per_sample == 1.0
    # exp(eps u / (2 k)): the engine (row sensitivity 1) gets eps / k
    assert group.exponent_epsilon == pytest.approx(1.0 / k)
    assert group.breakdown() == row.breakdown() and group.epsilon_spent == 2.0


def test_the_engine_samples_at_the_patient_sensitivity(monkeypatch):
    seen = {}
    real = base.sample_expm_linear

    def spy(X, y01, *, epsilon, **kw):
        seen["epsilon"], seen["n"] = epsilon, X.shape[0]
        return real(X, y01, epsilon=epsilon, **kw)

    monkeypatch.setattr(base, "sample_expm_linear", spy)
    X, y, g = _data()
    clf = ExpMFlowClassifier(epsilon=3.0, classes=[0, 1], max_rows_per_group=2, **FAST)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.set_params(random_state=0).fit(X, y, groups=g)
    assert seen["epsilon"] == pytest.approx(3.0 / 2) and seen["n"] == 60  # 2 of 3 rows kept
    assert clf.privacy_unit_ == "group" and clf.max_rows_per_group_ == 2
    assert clf.sensitivity_ == 2 and clf.epsilon_per_sample_ == 3.0
    assert clf.privacy_guarantee_ == "approximate" and clf.epsilon_spent_ == 3.0
    reg = ExpMFlowRegressor(epsilon=1.0, bounds_y=(0, 1), max_rows_per_group=3, **FAST)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg.set_params(random_state=0).fit(X, y.astype(float), groups=g)
    assert seen["epsilon"] == pytest.approx(1.0 / 3) and seen["n"] == 90
    assert reg.privacy_unit_ == "group" and reg.sensitivity_ == 3


def test_row_level_facts_and_refusals():
    X, y, g = _data()
    clf = ExpMFlowClassifier(classes=[0, 1], random_state=0, **FAST)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    assert clf.privacy_unit_ == "row" and clf.max_rows_per_group_ is None
    assert "privacy_unit_" not in vars(clf)
    with pytest.raises(ValueError, match="max_rows_per_group"):
        ExpMFlowClassifier(classes=[0, 1], **FAST).fit(X, y, groups=g)
    with pytest.raises(ValueError, match="bounds_y"):  # no private estimate per patient
        ExpMFlowRegressor(max_rows_per_group=2, **FAST).fit(X, y.astype(float), groups=g)
    with pytest.raises(ValueError, match="groups"):
        ExpMFlowRegressor(bounds_y=(0, 1), max_rows_per_group=2, **FAST).fit(
            X, y.astype(float), groups=g[:-1]
        )
