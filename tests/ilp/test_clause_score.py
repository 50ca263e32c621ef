"""The smart search's ``clause_score``: the noise-aware rank and the thesis's."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skdp.ilp import DPILPClassifier
from skdp.ilp._search import NOISE_LEVEL, noise_penalty, search_clause
from skdp.mechanisms import two_sided_geometric


@pytest.mark.parametrize("level", [0.05, NOISE_LEVEL])
@pytest.mark.parametrize("beta", [1, 9, 60])
@pytest.mark.parametrize("alpha", [0.05, 0.5])
def test_penalty_is_exceeded_by_the_levels_noise_about_as_often_as_stated(alpha, beta, level):
    # the largest of beta noisy-coverage errors (difference of two geometric draws)
    rng = np.random.default_rng(0)
    reps = 4000
    err = two_sided_geometric(reps * beta, alpha=alpha, rng=rng) - two_sided_geometric(
        reps * beta, alpha=alpha, rng=rng
    )
    top = err.reshape(reps, beta).max(axis=1)
    rate = float(np.mean(top > noise_penalty(alpha, beta, level)))
    # a union bound: at most the level (plus Monte Carlo error), tight for one clause
    # where the Laplace approximation is (small alpha)
    assert rate <= level + 0.025
    if beta == 1 and alpha < 0.1:
        assert rate >= level - 0.025


def test_penalty_grows_with_the_level_and_the_noise():
    assert noise_penalty(math.inf, 100) == 0.0
    assert noise_penalty(0.5, 1) < noise_penalty(0.5, 10) < noise_penalty(0.5, 100)
    assert noise_penalty(1.0, 10) < noise_penalty(0.1, 10)
    assert noise_penalty(1.0, 10) == pytest.approx(noise_penalty(0.1, 10) / 10)
    # a level so lenient that no penalty is needed
    assert noise_penalty(1.0, 1, level=0.9) == 0.0


def _winner_share(score, seeds=200):
    """How often each search keeps the empty clause, which covers 40 more positives
    than negatives, against 30 one-atom clauses that cover nothing (each measured
    with 30 times the empty clause's noise)."""
    n_atoms = 30

    def counts(clauses):
        if len(clauses[0]) == 0:
            return np.array([140]), np.array([100])
        return np.zeros(len(clauses), dtype=np.int64), np.zeros(len(clauses), dtype=np.int64)

    wins = 0
    for seed in range(seeds):
        best, *_ = search_clause(
            None,
            None,
            range(n_atoms),
            epsilon=1.0,
            max_clause_length=1,
            counts=counts,
            rng=np.random.default_rng(seed),
            clause_score=score,
        )
        wins += best == ()
    return wins / seeds


def test_noise_aware_rank_keeps_the_well_measured_clause_the_thesis_rank_loses():
    aware, noisy = _winner_share("noise_aware"), _winner_share("noisy")
    assert aware >= 0.6  # the penalty is about the median of the largest noise
    assert noisy <= 0.1  # the maximum of 30 noisy zeros beats 40 measured well


def test_without_noise_both_ranks_find_the_same_theory():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, size=(400, 6))
    y = X[:, 0] & X[:, 2]
    fits = [
        DPILPClassifier(epsilon=math.inf, max_clause_length=2, clause_score=s).fit(X, y)
        for s in ("noisy", "noise_aware")
    ]
    assert fits[0].clauses_ == fits[1].clauses_ == [("x0", "x2")]


def test_the_rank_spends_the_same_budget():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 2, size=(300, 5))
    y = X[:, 1]
    fits = [
        DPILPClassifier(epsilon=0.7, n_clauses=2, clause_score=s, random_state=3).fit(X, y)
        for s in ("noisy", "noise_aware")
    ]
    assert fits[0].epsilon_spent_ == fits[1].epsilon_spent_ == 0.7
    assert fits[0].privacy_breakdown_ == fits[1].privacy_breakdown_
    for fit in fits:
        assert sum(e["epsilon"] for e in fit.search_levels_) == pytest.approx(0.7)


def test_unknown_clause_score_is_refused_by_name():
    X = np.eye(4, dtype=int)
    with pytest.raises(ValueError, match="clause_score"):
        DPILPClassifier(clause_score="max").fit(X, [1, 0, 1, 0])
