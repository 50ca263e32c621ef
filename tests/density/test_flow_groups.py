"""DPFlowDensity with groups=: patient-level DP-SGD (patients sampled and clipped)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from skdp.accounting import compute_epsilon
from skdp.density import DPFlowDensity

FAST = dict(
    n_layers=1, hidden_size=8, n_iter=15, batch_size=10, device="cpu", dtype="float64", base="none"
)


def _patients(n_patients=60, seed=0):
    rng = np.random.default_rng(seed)
    rows = rng.integers(1, 7, n_patients)  # 1 to 6 visits
    groups = np.repeat(np.arange(n_patients) * 7 + 3, rows)  # arbitrary labels
    X = rng.normal(size=(groups.shape[0], 2)) + rng.normal(size=(n_patients, 2)).repeat(rows, 0)
    return X, groups


def test_patient_level_fit_records_its_unit_and_spends_per_patient():
    X, groups = _patients()
    est = DPFlowDensity(epsilon=2.0, bounds=(-5, 5), max_rows_per_group=3, random_state=0, **FAST)
    est.fit(X, groups=groups)
    assert est.privacy_unit_ == "group" and est.max_rows_per_group_ == 3
    q = 10 / 60  # batch_size counts patients
    assert est.sample_rate_ == pytest.approx(q)
    eps = compute_epsilon(
        noise_multiplier=est.noise_multiplier_,
        sample_rate=q,
        steps=15,
        delta=1e-5,
        accountant="pld",
    )
    assert est.epsilon_spent_ == pytest.approx(eps, rel=1e-12) and eps <= 2.0
    assert est.loss_curve_.size == 0
    assert np.isfinite(est.score_samples(X[:5])).all()
    assert est.sample(4, random_state=0).shape == (4, 2)


def test_row_level_fit_records_row_unit():
    X, _ = _patients()
    est = DPFlowDensity(epsilon=2.0, bounds=(-5, 5), random_state=0, **FAST).fit(X)
    assert est.privacy_unit_ == "row" and est.max_rows_per_group_ is None


def test_groups_with_a_dataframe_and_non_private_fit():
    X, groups = _patients()
    df = pd.DataFrame(X, columns=["a", "b"])
    est = DPFlowDensity(
        epsilon=math.inf, bounds=None, max_rows_per_group=2, random_state=0, **FAST
    ).fit(df, groups=groups.astype(str))
    assert est.privacy_unit_ == "group" and math.isinf(est.epsilon_spent_)
    assert list(est.sample(3, random_state=0).columns) == ["a", "b"]


def test_seeded_patient_fit_is_reproducible_and_depends_on_the_grouping():
    X, groups = _patients()
    make = lambda: DPFlowDensity(  # noqa: E731
        epsilon=2.0, bounds=(-5, 5), max_rows_per_group=3, random_state=0, **FAST
    )
    a = make().fit(X, groups=groups).score_samples(X[:5])
    b = make().fit(X, groups=groups).score_samples(X[:5])
    c = make().fit(X, groups=np.roll(groups, 1)).score_samples(X[:5])
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize(
    "kwargs, groups, match",
    [
        ({"bounds": (-5, 5)}, "ok", "max_rows_per_group"),
        ({"bounds": None, "max_rows_per_group": 2}, "ok", "bounds of column"),
        ({"bounds": "private", "max_rows_per_group": 2}, "ok", "bounds of column"),
        ({"bounds": (-5, 5), "max_rows_per_group": 2}, "short", "groups has"),
        ({"bounds": (-5, 5), "max_rows_per_group": 2}, "nan", "groups has missing"),
    ],
)
def test_bad_patient_input_is_refused_naming_the_parameter(kwargs, groups, match):
    X, g = _patients()
    g = {"ok": g, "short": g[:-1], "nan": np.where(np.arange(g.size) == 3, np.nan, g)}[groups]
    with pytest.raises(ValueError, match=match):
        DPFlowDensity(epsilon=1.0, random_state=0, **kwargs, **FAST).fit(X, groups=g)
