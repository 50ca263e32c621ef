"""Brute-force checks of the k-median and ILP sensitivities and of Theorem 6.5's bound."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skdp.mechanisms.sensitivity import (
    ilp_epsilon_lower_bound,
    ilp_query_alpha,
    kmedian_cost_sensitivity,
)
from tests.mechanisms._brute_force import truncated_cost


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
def test_kmedian_sensitivity_is_the_diameter_and_bounds_every_neighbour(metric):
    rng = np.random.default_rng(0)
    V = rng.uniform(-1, 1, size=(5, 2))
    delta = kmedian_cost_sensitivity(candidates=V, metric=metric)
    pair = max(
        math.dist(a, b) if metric == "euclidean" else float(np.abs(a - b).sum())
        for a in V
        for b in V
    )
    assert delta == pytest.approx(pair)
    # private points: points of V and a few points outside the hull (truncation matters)
    domain = [tuple(v) for v in V] + [(3.0, 3.0), (0.0, 0.0)]
    worst = 0.0
    for k in (1, 2):
        for F in itertools.combinations(range(len(V)), k):
            for size in range(0, 3):
                for D in itertools.combinations_with_replacement(domain, size):
                    c = truncated_cost(D, F, V, delta, metric)
                    for x in domain:  # add one point
                        worst = max(worst, abs(truncated_cost(D + (x,), F, V, delta, metric) - c))
                        for j in range(len(D)):  # move point j to x
                            moved = D[:j] + (x,) + D[j + 1 :]
                            worst = max(worst, abs(truncated_cost(moved, F, V, delta, metric) - c))
    assert worst <= delta + 1e-12
    assert worst == pytest.approx(delta)  # tight: a point at distance Delta from F


def test_kmedian_sensitivity_of_box_and_independent_of_private_data():
    assert kmedian_cost_sensitivity(bounds=(np.zeros(2), np.ones(2))) == pytest.approx(math.sqrt(2))
    assert kmedian_cost_sensitivity(
        bounds=(np.zeros(3), 2 * np.ones(3)), metric="manhattan"
    ) == pytest.approx(6.0)
    with pytest.raises(ValueError):
        kmedian_cost_sensitivity()


def _counts(X, y, clauses):
    """[q+_h(E+), q_h(E-)] for each clause h (a tuple of atom indices)."""
    out = []
    for h in clauses:
        sat = X[:, list(h)].all(axis=1) if h else np.ones(len(X), dtype=bool)
        out += [int((sat & (y == 1)).sum()), int((sat & (y == 0)).sum())]
    return np.array(out)


@pytest.mark.parametrize("n_atoms", [2, 3])
def test_ilp_count_sensitivity_theorem_6_6_exhaustive(n_atoms):
    # all clauses of the lattice; every added example (all 2^n rows x 2 labels)
    lattice = [c for i in range(n_atoms + 1) for c in itertools.combinations(range(n_atoms), i)]
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, size=(6, n_atoms))
    y = rng.integers(0, 2, size=6)
    for r in range(1, len(lattice) + 1):
        for H in itertools.combinations(lattice, r):
            base = _counts(X, y, H)
            worst = 0
            for row in itertools.product([0, 1], repeat=n_atoms):
                for label in (0, 1):
                    X2 = np.vstack([X, row])
                    y2 = np.append(y, label)
                    worst = max(worst, int(np.abs(_counts(X2, y2, H) - base).sum()))
            # L1 <= |H|, attained by an all-ones positive example; alpha = eps/|H|
            assert worst == len(H)
            assert ilp_query_alpha(1.0, len(H)) == pytest.approx(1.0 / worst)


@given(
    st.integers(0, 40),
    st.integers(1, 5),
    st.integers(1, 4),
    st.integers(1, 6),
    st.integers(1, 4),
)
def test_ilp_count_sensitivity_random(seed, n_atoms, n_clauses, n_rows, length):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n_rows, n_atoms))
    y = rng.integers(0, 2, size=n_rows)
    H = [
        tuple(sorted(rng.choice(n_atoms, size=min(length, n_atoms), replace=False)))
        for _ in range(n_clauses)
    ]
    base = _counts(X, y, H)
    for _ in range(5):
        row = rng.integers(0, 2, size=n_atoms)
        label = rng.integers(0, 2)
        change = np.abs(_counts(np.vstack([X, row]), np.append(y, label), H) - base).sum()
        assert change <= len(H)
    full = _counts(np.vstack([X, np.ones(n_atoms, int)]), np.append(y, 1), H)
    assert np.abs(full - base).sum() == len(H)


def test_ilp_query_alpha_budget_split():
    eps, k, levels, beta = 1.0, 2, 4, 7
    alpha = ilp_query_alpha(eps, beta, n_rounds=k, n_levels=levels)
    assert alpha == pytest.approx(eps / (k * levels * beta))
    # per level: beta clauses x sensitivity 1 per clause -> level epsilon = alpha * beta;
    # summed over levels and rounds gives epsilon
    assert alpha * beta * levels * k == pytest.approx(eps)
    assert ilp_query_alpha(math.inf, 3) == math.inf
    with pytest.raises(ValueError):
        ilp_query_alpha(1.0, 0)


def test_ilp_lower_bound_examples_and_monotonicity():
    assert ilp_epsilon_lower_bound(10, 0.9, 0.1, 100) == pytest.approx(0.31028, abs=1e-5)
    assert ilp_epsilon_lower_bound(10, 0.9, 0.1, 100, form="thesis") == pytest.approx(
        0.28356, abs=1e-5
    )
    for n_atoms in (1, 5, 20):
        vals = [ilp_epsilon_lower_bound(n_atoms, 0.5, 0.2, n) for n in (10, 100, 1000)]
        assert vals[0] > vals[1] > vals[2]
    vals = [ilp_epsilon_lower_bound(a, 0.5, 0.2, 100) for a in (1, 5, 20)]
    assert vals[0] < vals[1] < vals[2]
    with pytest.raises(ValueError):
        ilp_epsilon_lower_bound(3, 0.5, 0.2, 10, form="other")


@given(
    st.integers(1, 30),
    st.floats(0, 1),
    st.floats(0, 0.999),
    st.integers(1, 1000),
)
def test_ilp_lower_bound_proof_minus_thesis_sign(n_atoms, delta, eta, n_records):
    diff = ilp_epsilon_lower_bound(n_atoms, delta, eta, n_records) - ilp_epsilon_lower_bound(
        n_atoms, delta, eta, n_records, form="thesis"
    )
    expected = eta * n_atoms * math.log(2) + math.log1p(-eta)
    denom = 2 * ((1 - delta) * n_records + 1)
    assert diff == pytest.approx(expected / denom, abs=1e-12)
