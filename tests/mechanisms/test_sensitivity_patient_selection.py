"""Brute-force checks of the per-patient k-median and ILP sensitivities.

Neighbouring relation: add or remove one patient with all their rows, at most ``k``
of them. Every neighbouring pair on a small domain is enumerated and the change of the
quality (k-median) or of the coverage counts (ILP, L1) is compared with the formula:
it is never exceeded and it is attained.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from skdp.mechanisms.sensitivity import ilp_query_alpha, kmedian_cost_sensitivity
from tests.mechanisms._brute_force import truncated_cost


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_kmedian_quality_moves_by_at_most_k_delta_per_patient(metric, k):
    rng = np.random.default_rng(0)
    V = rng.uniform(-1, 1, size=(4, 2))
    delta = kmedian_cost_sensitivity(candidates=V, metric=metric)
    per_patient = kmedian_cost_sensitivity(candidates=V, metric=metric, max_rows_per_group=k)
    assert per_patient == pytest.approx(k * delta)
    # private points: points of V and points outside the hull (truncation matters)
    domain = [tuple(v) for v in V] + [(3.0, 3.0), (0.0, 0.0)]
    worst = 0.0
    for n_centres in (1, 2):
        for F in itertools.combinations(range(len(V)), n_centres):
            for size in range(0, 3):
                for D in itertools.combinations_with_replacement(domain, size):
                    c = truncated_cost(D, F, V, delta, metric)
                    for r in range(1, k + 1):  # add one patient of r <= k rows
                        for P in itertools.combinations_with_replacement(domain, r):
                            added = truncated_cost(D + P, F, V, delta, metric)
                            worst = max(worst, abs(added - c))
    assert worst <= per_patient + 1e-12
    assert worst == pytest.approx(per_patient)  # tight: k rows at distance Delta


def test_kmedian_box_sensitivity_per_patient():
    box = (np.zeros(2), np.ones(2))
    assert kmedian_cost_sensitivity(bounds=box) == pytest.approx(math.sqrt(2))
    assert kmedian_cost_sensitivity(bounds=box, max_rows_per_group=4) == pytest.approx(
        4 * math.sqrt(2)
    )
    with pytest.raises(ValueError, match="max_rows_per_group"):
        kmedian_cost_sensitivity(bounds=box, max_rows_per_group=0)


def _counts(X, y, clauses):
    """[q+_h(E+), q_h(E-)] for each clause h (a tuple of atom indices)."""
    out = []
    for h in clauses:
        sat = X[:, list(h)].all(axis=1) if h else np.ones(len(X), dtype=bool)
        out += [int((sat & (y == 1)).sum()), int((sat & (y == 0)).sum())]
    return np.array(out)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_ilp_counts_l1_sensitivity_is_k_times_the_clauses_per_patient(k):
    n_atoms = 2
    lattice = [c for i in range(n_atoms + 1) for c in itertools.combinations(range(n_atoms), i)]
    rows = [(row, label) for row in itertools.product([0, 1], repeat=n_atoms) for label in (0, 1)]
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, size=(5, n_atoms))
    y = rng.integers(0, 2, size=5)
    for r in range(1, len(lattice) + 1):
        for H in itertools.combinations(lattice, r):
            base = _counts(X, y, H)
            worst = 0
            for m in range(1, k + 1):  # every patient of m <= k rows
                for patient in itertools.combinations_with_replacement(rows, m):
                    X2 = np.vstack([X] + [np.array(p[0]) for p in patient])
                    y2 = np.append(y, [p[1] for p in patient])
                    worst = max(worst, int(np.abs(_counts(X2, y2, H) - base).sum()))
            # L1 <= k |H|, attained by k positive all-ones rows
            assert worst == k * len(H)
            alpha = ilp_query_alpha(1.0, len(H), max_rows_per_group=k)
            assert alpha == pytest.approx(1.0 / worst)


def test_ilp_alpha_row_level_unchanged_and_bad_bound_refused():
    assert ilp_query_alpha(1.0, 3, n_levels=2) == ilp_query_alpha(
        1.0, 3, n_levels=2, max_rows_per_group=None
    )
    assert ilp_query_alpha(1.0, 3, max_rows_per_group=1) == ilp_query_alpha(1.0, 3)
    with pytest.raises(ValueError, match="max_rows_per_group"):
        ilp_query_alpha(1.0, 3, max_rows_per_group=0)
