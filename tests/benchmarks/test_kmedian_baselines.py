"""Tests of the k-median benchmark baselines (``benchmarks/_kmedian_baselines.py``)."""

from __future__ import annotations

import importlib.util
import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.distance import cdist

# Benchmark code is not part of the package: load the module from its file.
_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "_kmedian_baselines.py"
_spec = importlib.util.spec_from_file_location("_kmedian_baselines", _PATH)
baselines = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(baselines)

all_subset_costs = baselines.all_subset_costs
gupta_local_search = baselines.gupta_local_search
local_search = baselines.local_search
optimal_k2 = baselines.optimal_k2
random_centers = baselines.random_centers
random_kpp_centers = baselines.random_kpp_centers
subset_cost = baselines.subset_cost


def _instance(seed, n=25, s=10):
    rng = np.random.default_rng(seed)
    V = rng.uniform(-1, 1, size=(n, 2))
    X = V[rng.choice(n, s, replace=False)]
    return V, X, cdist(X, V)


def test_optimal_and_local_search():
    for seed in range(3):
        V, X, D = _instance(seed)
        subsets, costs = all_subset_costs(D, 2)
        assert len(costs) == math.comb(25, 2)
        i = np.argmin(costs)
        brute = min(
            itertools.combinations(range(25), 2), key=lambda s: D[:, list(s)].min(axis=1).sum()
        )
        assert tuple(optimal_k2(D)) == tuple(subsets[i]) == brute
        local = local_search(D, 2, rng=np.random.default_rng(seed), n_restarts=5)
        assert subset_cost(D, local) == pytest.approx(costs[i])


def test_gupta_is_a_valid_private_search_that_improves_with_epsilon():
    V, X, D = _instance(4, n=40, s=20)
    delta = float(cdist(V, V).max())
    rng = np.random.default_rng(0)
    hi = [
        subset_cost(D, gupta_local_search(D, 2, epsilon=1e4, sensitivity=delta, rng=rng))
        for _ in range(10)
    ]
    rand = [subset_cost(D, random_centers(40, 2, rng)) for _ in range(10)]
    assert np.median(hi) < np.median(rand)
    F = gupta_local_search(D, 3, epsilon=1.0, sensitivity=delta, rng=rng)
    assert len(set(F.tolist())) == 3
    F = random_kpp_centers(V, 4, rng)
    assert len(set(F.tolist())) == 4
