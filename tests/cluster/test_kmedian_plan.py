"""SubsampledExpMedian's release plan: the only source of its privacy facts.

The plan (``skdp.cluster._kmedian_plan``) is built from the parameters, the number of
features and the public row count alone; a fit on any data of that shape reports exactly
its breakdown, total and per-round numbers.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from skdp.cluster import SubsampledExpMedian
from skdp.cluster._kmedian_plan import KMedianPlan, plan_kmedian
from skdp.utils._parts import part_keys

V = np.array([[a, b] for a in np.linspace(0, 1, 5) for b in np.linspace(0, 1, 4)])

#: (the plan's variant, parameters)
CASES = {
    "box_search": ("box_search", dict(bounds=(0, 1))),
    "median_step": ("box_search", dict(bounds=(0, 1), median_step=True, n_clusters=3)),
    "grid_round": ("box_search", dict(bounds=(0, 1), first_round="grid", n_rounds=4)),
    "box_search_inf": ("box_search", dict(bounds=(0, 1), epsilon=math.inf)),
    "n_public": ("box_search", dict(bounds=(0, 1), n_public=5000, epsilon=0.3)),
    "box": ("box", dict(bounds=(0, 1), n_rounds=1, n_candidates=40)),
    "candidates": ("candidates", dict(candidates=V)),
    "kmeans++": ("candidates", dict(candidates=V, base="kmeans++", epsilon=2.5)),
    "enumerate": ("enumerate", dict(candidates=V, n_candidates=None, sensitivity=0.5)),
}


def _data(seed, n=240):
    rng = np.random.default_rng(seed)
    return np.clip(rng.normal(0.5, 0.2, (n, 2)), 0, 1)


@pytest.mark.parametrize("name", sorted(CASES))
def test_breakdown_and_total_come_from_the_plan(name):
    variant, params = CASES[name]
    X = _data(0)
    plan = plan_kmedian(SubsampledExpMedian(**params), n_features=2, n_rows=len(X))
    assert isinstance(plan, KMedianPlan) and plan.variant == variant
    for seed in (0, 1):  # any data of the same shape: the same privacy facts
        est = SubsampledExpMedian(random_state=seed, **params).fit(_data(seed))
        assert est.privacy_breakdown_ == plan.privacy_breakdown
        assert est.epsilon_spent_ == plan.epsilon_spent
        assert est.delta_spent_ == 0.0
        np.testing.assert_array_equal(est.round_epsilons_, plan.round_epsilons)
        np.testing.assert_array_equal(est.round_sensitivities_, plan.round_sensitivities)
        assert est.n_rounds_ == plan.n_rounds == len(plan.privacy_breakdown)
        assert est.n_candidates_ == plan.n_candidates
        assert est.sensitivity_ == plan.cost_sensitivity
    total = math.fsum(est.privacy_breakdown_.values())
    if math.isinf(est.epsilon_spent_):
        assert math.isinf(total)
    else:
        assert total == pytest.approx(est.epsilon_spent_, rel=1e-12)
    assert list(est.privacy_breakdown_) == part_keys("round", plan.n_rounds)  # "round" for one


def test_plan_is_frozen_and_reads_no_data():
    plan = plan_kmedian(SubsampledExpMedian(bounds=(0, 1)), n_features=2, n_rows=300)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.epsilon = 2.0
    # the box search's public facts: round 1's grid, the median step and the schedule
    search = plan.search
    assert search.first_round == "histogram" and search.cells >= 2
    assert len(search.radii) == plan.n_rounds - 1 - search.median_step
    assert plan.n_candidates == search.sets_per_round * len(search.radii)


def test_plan_refuses_what_fit_refuses():
    with pytest.raises(ValueError, match="n_rounds > 1 needs the box base"):
        plan_kmedian(SubsampledExpMedian(candidates=V, n_rounds=3), n_features=2, n_rows=10)
    with pytest.raises(ValueError, match='first_round="histogram" needs a grid'):
        plan_kmedian(
            SubsampledExpMedian(bounds=(0, 1), first_round="histogram"), n_features=20, n_rows=60
        )
