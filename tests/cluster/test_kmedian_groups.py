"""SubsampledExpMedian with groups= (the patient as the privacy unit) and secure_mode."""

from __future__ import annotations

import math

import numpy as np
import pytest

import skdp.cluster._box_histogram as bh
from skdp.cluster import SubsampledExpMedian
from skdp.cluster._box_search import local_step_sensitivity
from skdp.cluster._kmedian_costs import FIXED_BITS
from skdp.cluster._kmedian_plan import plan_kmedian


def _data(n_patients=40, rows=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (n_patients * rows, 2))
    return X, np.repeat(np.arange(n_patients), rows)


def test_patient_level_fit_records_the_unit_and_the_bound():
    X, g = _data()
    est = SubsampledExpMedian(bounds=(0, 1), max_rows_per_group=2, random_state=0)
    est.fit(X, groups=g)
    assert est.privacy_unit_ == "group" and est.max_rows_per_group_ == 2
    assert est.epsilon_spent_ == 1.0 and est.privacy_guarantee_ == "exact"
    assert sum(est.privacy_breakdown_.values()) == pytest.approx(1.0)
    row = SubsampledExpMedian(bounds=(0, 1), random_state=0).fit(X)
    assert row.privacy_unit_ == "row" and row.max_rows_per_group_ is None
    # the facts are properties: not in the fitted state of a row-level release
    assert "privacy_unit_" not in vars(row) and "max_rows_per_group_" not in vars(row)


@pytest.mark.parametrize("k", [1, 3])
def test_every_round_sensitivity_is_k_times_the_rows(k):
    """The plan multiplies each round's sensitivity by k once: the exponential
    mechanisms' quality (k Delta), the local rounds (k Delta_t), the median step's rank
    utility (k) and the histogram's counts (k per patient under add/remove)."""
    V = np.random.default_rng(1).uniform(0, 1, (12, 2))
    est = SubsampledExpMedian(candidates=V, n_candidates=None)
    row, group = plan_kmedian(est, 2, 200), plan_kmedian(est, 2, 200, k)
    assert group.round_sensitivities[0] == pytest.approx(k * row.round_sensitivities[0])
    assert group.cost_sensitivity == row.cost_sensitivity  # the per-row cap stays Delta
    box = SubsampledExpMedian(bounds=(0, 1), n_rounds=6, median_step=True)
    row, group = plan_kmedian(box, 2, 5000), plan_kmedian(box, 2, 5000, k)
    assert row.search.first_round == group.search.first_round == "histogram"
    assert row.round_sensitivities[0] == 2.0 and group.round_sensitivities[0] == k
    # the grid (hence the radii) follows the noise scale; each local round is k times
    # the row bound at its own radius
    assert group.round_sensitivities[1] == k * row.round_sensitivities[1] == k
    slack = 4.0 * math.ldexp(group.cost_sensitivity, -FIXED_BITS)
    local = [
        k * min(group.cost_sensitivity, local_step_sensitivity(r, "euclidean") + slack)
        for r in group.search.radii
    ]
    np.testing.assert_allclose(group.round_sensitivities[2:], local)
    grid = SubsampledExpMedian(bounds=(0, 1), first_round="grid", n_rounds=3)
    row, group = plan_kmedian(grid, 2, 500), plan_kmedian(grid, 2, 500, k)
    np.testing.assert_allclose(group.round_sensitivities, k * np.asarray(row.round_sensitivities))
    assert group.privacy_breakdown == row.privacy_breakdown


def test_the_histogram_noise_is_calibrated_to_the_patient(monkeypatch):
    seen = {}
    real = bh.discrete_laplace_noise

    def spy(size, *, scale, rng, secure_mode=False):
        seen["scale"] = scale
        return real(size, scale=scale, rng=rng, secure_mode=secure_mode)

    monkeypatch.setattr(bh, "discrete_laplace_noise", spy)
    X, g = _data()
    est = SubsampledExpMedian(bounds=(0, 1), max_rows_per_group=3, random_state=0)
    est.fit(X, groups=g)
    eps1 = est.round_epsilons_[0]
    assert est.first_round_ == "histogram"
    assert seen["scale"] == pytest.approx(3 / eps1)
    assert est.round_sensitivities_[0] == 3


def test_rows_beyond_the_bound_are_dropped_at_random_and_only_they():
    """With k at least every patient's row count nothing is dropped: the plan sees all
    rows. With a smaller k the plan's row count is the rows kept."""
    X, g = _data(n_patients=30, rows=4)
    est = SubsampledExpMedian(bounds=(0, 1), max_rows_per_group=4, random_state=0)
    est.fit(X, groups=g)
    big = plan_kmedian(est, 2, len(X), 4)
    assert est.first_round_cells_ == big.search.cells
    est2 = SubsampledExpMedian(bounds=(0, 1), max_rows_per_group=1, random_state=0)
    est2.fit(X, groups=g)
    assert est2.first_round_cells_ == plan_kmedian(est2, 2, 30, 1).search.cells


def test_groups_refusals_name_the_parameter():
    X, g = _data()
    with pytest.raises(ValueError, match="max_rows_per_group"):
        SubsampledExpMedian(bounds=(0, 1)).fit(X, groups=g)
    with pytest.raises(ValueError, match="groups"):
        SubsampledExpMedian(bounds=(0, 1), max_rows_per_group=2).fit(X, groups=g[:-1])
    with pytest.raises(ValueError, match="max_rows_per_group"):
        SubsampledExpMedian(bounds=(0, 1), max_rows_per_group=0).fit(X, groups=g)
    da = pytest.importorskip("dask.array")
    with pytest.raises(ValueError, match="Dask"):
        SubsampledExpMedian(bounds=(0, 1), max_rows_per_group=2).fit(
            da.from_array(X, chunks=40), groups=g
        )


def test_fit_predict_takes_groups():
    X, g = _data()
    est = SubsampledExpMedian(bounds=(0, 1), max_rows_per_group=2, random_state=0)
    labels = est.fit_predict(X, groups=g)
    assert labels.shape == (len(X),) and est.privacy_unit_ == "group"


def test_secure_mode_draws_the_histogram_noise_from_the_os(monkeypatch):
    seen = []
    real = bh.discrete_laplace_noise

    def spy(size, *, scale, rng, secure_mode=False):
        seen.append(secure_mode)
        return real(size, scale=scale, rng=rng, secure_mode=secure_mode)

    monkeypatch.setattr(bh, "discrete_laplace_noise", spy)
    X, _ = _data()
    SubsampledExpMedian(bounds=(0, 1), random_state=0).fit(X)
    SubsampledExpMedian(bounds=(0, 1), secure_mode=True, random_state=0).fit(X)
    assert seen == [False, True]


def test_secure_mode_default_leaves_the_seeded_release_unchanged():
    """secure_mode=False is left out of the seed material: the same centres as a fit
    whose parameters do not mention it (the pinned digests check the same)."""
    X, _ = _data()
    a = SubsampledExpMedian(bounds=(0, 1), random_state=3).fit(X)
    b = SubsampledExpMedian(bounds=(0, 1), secure_mode=False, random_state=3).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    c = SubsampledExpMedian(bounds=(0, 1), secure_mode=True, random_state=3).fit(X)
    assert c.cluster_centers_.shape == a.cluster_centers_.shape
