"""DPILPClassifier's release plan: the only source of its privacy facts.

The plan (``skdp.ilp._plan``) is built from the parameters and the number of atoms
alone; a fit on any data of that shape reports exactly its breakdown and total.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from skdp.ilp import DPILPClassifier
from skdp.ilp._plan import ILPPlan, plan_ilp
from skdp.utils._parts import part_keys

VARIANTS = {
    "smart": dict(max_clause_length=2),
    "smart_rounds": dict(max_clause_length=3, n_clauses=3, epsilon=2.0),
    "naive": dict(max_clause_length=2, n_clauses=2, search="naive"),
    "bottom_clause": dict(bottom_clause=[0, 1, 3], n_clauses=2, epsilon=0.7),
    "inf": dict(max_clause_length=2, n_clauses=2, epsilon=math.inf),
}


def _data(seed, n=800, n_atoms=5):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, n_atoms))
    return X, X[:, 0] & X[:, 1]


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_breakdown_and_total_come_from_the_plan(name):
    params = VARIANTS[name]
    plan = plan_ilp(DPILPClassifier(**params), n_atoms=5)
    assert isinstance(plan, ILPPlan)
    for seed in (0, 1):  # any data of the same shape: the same privacy facts
        clf = DPILPClassifier(random_state=seed, **params).fit(*_data(seed))
        assert clf.privacy_breakdown_ == plan.privacy_breakdown
        assert clf.epsilon_spent_ == plan.epsilon_spent
        assert clf.delta_spent_ == 0.0
        np.testing.assert_array_equal(clf.bottom_clause_, plan.atoms)
    total = math.fsum(clf.privacy_breakdown_.values())
    if math.isinf(clf.epsilon_spent_):
        assert math.isinf(total)
    else:
        assert total == pytest.approx(clf.epsilon_spent_, rel=1e-12)
    # one entry per round, numbered from 1 as in the ledger, whose batches split it
    keys = part_keys("round", plan.n_rounds)  # "round" alone for one round
    assert list(plan.privacy_breakdown) == keys
    assert {e["round"] for e in clf.search_levels_} == set(range(1, plan.n_rounds + 1))
    assert [e["epsilon"] for e in clf.search_levels_] == [plan.level_epsilon] * (
        plan.n_rounds * len(plan.levels)
    )
    for r in range(1, plan.n_rounds + 1):
        batches = [e["epsilon"] for e in clf.search_levels_ if e["round"] == r]
        assert math.fsum(batches) == pytest.approx(plan.privacy_breakdown[keys[r - 1]])


def test_plan_is_frozen_and_splits_epsilon_over_rounds_and_levels():
    plan = plan_ilp(DPILPClassifier(epsilon=1.2, n_clauses=3, max_clause_length=3), n_atoms=4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.epsilon = 2.0
    assert plan.round_epsilon == pytest.approx(0.4)
    assert plan.level_epsilon == pytest.approx(0.1)
    assert plan.levels == (0, 1, 2, 3)
    assert plan.privacy_breakdown == pytest.approx({"round_1": 0.4, "round_2": 0.4, "round_3": 0.4})
