"""max_rows_per_group="private": a private 0.9-quantile of the patients' row counts
(each patient one value: utility sensitivity 1 per patient, whatever its rows), on
PRIVATE_ROWS_FRACTION of epsilon, then the fit bounds each patient to it."""

from __future__ import annotations

import numpy as np
import pytest

from skdp.auditing import threshold_audit
from skdp.linear_model import DPLinearRegression
from skdp.mechanisms._quantiles import grid_quantile_utilities
from skdp.mechanisms.sensitivity import quantile_utility_sensitivity
from skdp.preprocessing import DPStandardScaler
from skdp.preprocessing._patients import PRIVATE_ROWS_FRACTION, private_max_rows_per_group
from skdp.preprocessing._scaler_plan import ScalerPlan


def _patients(n_patients=3000, most=7, seed=0):
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_patients), rng.integers(1, most + 1, n_patients))
    return rng.normal(size=(groups.size, 2)), groups


def test_the_estimate_is_a_high_quantile_of_the_row_counts():
    _, groups = _patients()
    ks = [
        private_max_rows_per_group(groups, epsilon=0.5, rng=np.random.default_rng(s))
        for s in range(10)
    ]
    assert all(6 <= k <= 7 for k in ks)  # the 0.9 quantile of 1..7 uniform is 7
    assert private_max_rows_per_group(groups, epsilon=np.inf, rng=None) == 7


def test_brute_force_one_patient_moves_the_utility_by_at_most_one():
    rng = np.random.default_rng(1)
    candidates = np.arange(1, 21, dtype=float)  # max_rows = 20: more rows count as 20
    worst = 0.0
    for _ in range(30):
        counts = rng.integers(1, 25, size=int(rng.integers(0, 12))).clip(1, 20).astype(float)
        for rows in range(1, 60):  # a patient with any number of rows: one value
            both = np.r_[counts, min(rows, 20)]
            for q in (0.5, 0.9, 1.0):
                u0 = grid_quantile_utilities(counts, q, candidates)
                u1 = grid_quantile_utilities(both, q, candidates)
                worst = max(worst, float(np.abs(u1 - u0).max()))
    assert worst <= quantile_utility_sensitivity() == 1.0


def test_audit_of_the_estimate_against_a_patient_with_many_rows():
    # D versus D plus one patient with 1000 rows: the estimate alone stays within its
    # epsilon (it sees one count per patient)
    _, groups = _patients(n_patients=40, most=3)
    worlds = (groups, np.r_[groups, np.full(1000, 40)])
    rng = np.random.default_rng(2)
    labels = rng.permutation(np.arange(1000) % 2)
    scores = np.array(
        [
            private_max_rows_per_group(
                worlds[b],
                epsilon=1.0,
                rng=np.random.default_rng(int(rng.integers(2**31))),
                quantile=1.0,
            )
            for b in labels
        ]
    )
    assert threshold_audit(scores, labels, epsilon=1.0).epsilon_lb <= 1.0


def test_scaler_spends_the_stated_share_and_bounds_to_the_estimate():
    X, groups = _patients()
    est = DPStandardScaler(bounds=(-5, 5), max_rows_per_group="private", random_state=0)
    est.fit(X, groups=groups)
    k = est.max_rows_per_group_
    assert isinstance(k, int) and 6 <= k <= 7 and est.privacy_unit_ == "group"
    assert est.privacy_breakdown_["max_rows_per_group"] == pytest.approx(PRIVATE_ROWS_FRACTION)
    assert sum(est.privacy_breakdown_.values()) == pytest.approx(1.0) == est.epsilon_spent_
    kept = int(np.minimum(np.bincount(groups), k).sum())
    plan = ScalerPlan.build(
        n_public=kept,
        n_features=2,
        epsilon=1.0,
        bounds=(-5, 5),
        bounds_fraction=0.1,
        mean_fraction=0.5,
        with_mean=True,
        with_std=True,
        max_rows_per_group=k,
        eps_rows=PRIVATE_ROWS_FRACTION,
    )  # rebuilt from public inputs and the released k
    assert plan.breakdown() == est.privacy_breakdown_
    assert plan.noise_scale() == est.noise_scale_


def test_private_bound_refused_where_not_implemented():
    da = pytest.importorskip("dask.array")

    X, groups = _patients(n_patients=50)
    est = DPStandardScaler(bounds=(-5, 5), max_rows_per_group="private")
    with pytest.raises(ValueError, match="max_rows_per_group='private' is not supported here"):
        est.fit(da.from_array(X, chunks=(40, 2)), groups=da.from_array(groups, chunks=40))
    with pytest.raises(ValueError, match="max_rows_per_group"):  # parameter validation
        DPLinearRegression(bounds_X=(-5, 5), bounds_y=(-5, 5), max_rows_per_group="private").fit(
            X, X[:, 0], groups=groups
        )
